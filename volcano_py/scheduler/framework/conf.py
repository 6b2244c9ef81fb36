"""Load ``volcano-scheduler.conf``: the actions to run and the plugin tiers.

The format is Volcano's, unchanged::

    actions: "enqueue, allocate"
    tiers:
    - plugins:
      - name: priority
      - name: gang
    - plugins:
      - name: predicates
      - name: nodeorder
      - name: network-topology-aware
        arguments:
          weight: 10

Bad configuration fails here, loudly, with the key and what was expected: a name no
Volcano release has (listing the known ones), a wrong type, an argument a plugin cannot
read. A Volcano action or plugin volcano-py does not implement yet is accepted, dropped from
the running conf and listed in ``SchedulerConf.not_implemented`` (the loader logs it once;
``/readyz`` and the ``volcano_py_scheduler_conf_not_implemented`` metric show it). All 25 of
Volcano's per-plugin ``enable*`` switches are accepted (booleans) and honoured by the session
for the extension point they name. ``configurations:`` gives actions their arguments (read
where volcano-py has the knob, a warning otherwise); ``metrics:`` is Volcano's metrics
source, a warning here (volcano-py serves ``/metrics`` itself).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from volcano_py.api.safeload import CONFIG_LIMITS, LoadError, brief, load_yaml
from volcano_py.scheduler.framework.arguments import Arguments, ConfError
from volcano_py.scheduler.framework.volcano_names import (
    ENABLE_SWITCHES,
    VOLCANO_ACTIONS,
    VOLCANO_PLUGINS,
)

# ``configurations[].arguments`` keys volcano-py reads, per action, and their kind.
ACTION_ARGUMENTS: dict[str, dict[str, str]] = {
    "allocate": {"enablePredicateErrorCache": "bool"},
    "backfill": {"enablePredicateErrorCache": "bool"},
}

# Volcano's built-in default (pkg/scheduler/util.go) plus network-topology-aware: a Queue's
# capability holds (proportion) and HyperNode placement works with no configuration given.
DEFAULT_SCHEDULER_CONF = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: network-topology-aware
"""


@dataclass(frozen=True, slots=True)
class PluginOption:
    """One ``tiers[].plugins[]`` entry."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    disabled: frozenset[str] = frozenset()
    # switches written ``true``: what Volcano reads as opt-in (``enableHierarchy``)
    switched_on: frozenset[str] = frozenset()

    def enabled(self, point: str) -> bool:
        """Whether this plugin's ``point`` extension is switched on (default yes)."""
        return point not in self.disabled


@dataclass(frozen=True, slots=True)
class SchedulerConf:
    """Actions in order and plugin tiers."""

    actions: tuple[str, ...]
    tiers: tuple[tuple[PluginOption, ...], ...]
    # Volcano names accepted but not run, e.g. ``("action reclaim", "plugin sla")``
    not_implemented: tuple[str, ...] = ()
    # action name -> its ``configurations:`` arguments
    configurations: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # things read and ignored, one line each (the loader logs them once)
    warnings: tuple[str, ...] = ()

    def action_arguments(self, action: str) -> Arguments:
        """The ``configurations:`` arguments of ``action`` (empty when none)."""
        return Arguments(action, self.configurations.get(action, {}))


def parse_conf(
    text: str, known_actions: set[str] | None = None, known_plugins: set[str] | None = None
) -> SchedulerConf:
    """Parse and check a conf document.

    Raises:
        ConfError: naming the bad key and what was expected.
    """
    try:
        data = load_yaml(text, "scheduler conf", CONFIG_LIMITS)
    except LoadError as e:
        raise ConfError(str(e)) from None
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise ConfError("scheduler conf: expected a mapping with 'actions' and 'tiers'")
    unknown = sorted(set(data) - {"actions", "tiers", "configurations", "metrics"})
    if unknown:
        raise ConfError(f"scheduler conf: unknown key {brief(unknown[0])} (known: actions, tiers)")
    not_implemented: list[str] = []
    raw_actions = data.get("actions", "enqueue, allocate")
    if not isinstance(raw_actions, str):
        raise ConfError(
            f"actions: expected a string like 'enqueue, allocate', got {brief(raw_actions)}"
        )
    actions = []
    for action in (a.strip() for a in raw_actions.split(",") if a.strip()):
        if known_actions is None or action in known_actions:
            actions.append(action)
        elif action in VOLCANO_ACTIONS:
            not_implemented.append(f"action {action}")
        else:
            known = sorted(VOLCANO_ACTIONS | known_actions)
            raise ConfError(f"actions: unknown action {brief(action)} (known: {', '.join(known)})")
    raw_tiers = data.get("tiers") or []
    if not isinstance(raw_tiers, list):
        raise ConfError("tiers: expected a list of {plugins: [...]}")
    tiers = []
    for i, tier in enumerate(raw_tiers):
        if not isinstance(tier, Mapping) or not isinstance(tier.get("plugins", []), list):
            raise ConfError(f"tiers[{i}]: expected a mapping with a 'plugins' list")
        options = []
        for j, raw in enumerate(tier.get("plugins") or []):
            option = _plugin_option(f"tiers[{i}].plugins[{j}]", raw, known_plugins)
            if known_plugins is None or option.name in known_plugins:
                options.append(option)
            else:
                not_implemented.append(f"plugin {option.name}")
        tiers.append(tuple(options))
    warnings: list[str] = []
    configurations = _configurations(data.get("configurations"), warnings)
    if data.get("metrics") is not None:
        warnings.append(
            "metrics: ignored (Volcano's metrics source; volcano-py serves /metrics itself)"
        )
    return SchedulerConf(
        tuple(actions),
        tuple(tiers),
        tuple(dict.fromkeys(not_implemented)),
        configurations,
        tuple(warnings),
    )


def _configurations(raw: Any, warnings: list[str]) -> dict[str, Mapping[str, Any]]:
    """``configurations: [{name: <action>, arguments: {...}}]``, checked and typed."""
    if raw is None:
        return {}
    if not isinstance(raw, list):
        raise ConfError("configurations: expected a list of {name, arguments}")
    result: dict[str, Mapping[str, Any]] = {}
    for i, entry in enumerate(raw):
        where = f"configurations[{i}]"
        if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
            raise ConfError(f"{where}: expected a mapping with an action 'name'")
        name = entry["name"]
        if name not in VOLCANO_ACTIONS:
            known = ", ".join(sorted(VOLCANO_ACTIONS))
            raise ConfError(f"{where}.name: unknown action {brief(name)} (known: {known})")
        arguments = entry.get("arguments") or {}
        if not isinstance(arguments, Mapping):
            raise ConfError(f"{where}.arguments: expected a mapping, got {brief(arguments)}")
        readable = ACTION_ARGUMENTS.get(name, {})
        args = Arguments(f"{where}({name})", arguments)
        for key in arguments:
            if key not in readable:
                warnings.append(f"{where}.arguments[{key}]: ignored (not read by volcano-py)")
            elif readable[key] == "bool":
                args.get_bool(key, False)
        result[name] = dict(arguments)
    return result


def _plugin_option(where: str, raw: Any, known: set[str] | None) -> PluginOption:
    if not isinstance(raw, Mapping):
        raise ConfError(f"{where}: expected a mapping with 'name'")
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise ConfError(f"{where}.name: expected a plugin name, got {brief(name)}")
    if known is not None and name not in known and name not in VOLCANO_PLUGINS:
        names = ", ".join(sorted(VOLCANO_PLUGINS | known))
        raise ConfError(f"{where}.name: unknown plugin {brief(name)} (known: {names})")
    arguments = raw.get("arguments") or {}
    if not isinstance(arguments, Mapping):
        raise ConfError(f"{where}.arguments: expected a mapping, got {brief(arguments)}")
    disabled, switched_on = set(), set()
    for key, value in raw.items():
        if key in ("name", "arguments"):
            continue
        if key not in ENABLE_SWITCHES:
            switches = ", ".join(sorted(ENABLE_SWITCHES))
            raise ConfError(f"{where}.{key}: unknown key (known: name, arguments, {switches})")
        if not isinstance(value, bool):
            raise ConfError(f"{where}.{key}: expected a boolean, got {brief(value)}")
        if not value:
            disabled.add(ENABLE_SWITCHES[key])
        else:
            switched_on.add(ENABLE_SWITCHES[key])
    return PluginOption(name, dict(arguments), frozenset(disabled), frozenset(switched_on))
