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

Bad configuration fails here, loudly, with the key and what was expected: an unknown
action or plugin (listing the known ones), a wrong type, an argument a plugin cannot read.
Volcano's per-plugin ``enableXxx`` switches are accepted (booleans) and honoured by the
session for the extension point they name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from volcano_py.scheduler.framework.arguments import Arguments, ConfError

DEFAULT_SCHEDULER_CONF = """\
actions: "enqueue, allocate"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: nodeorder
  - name: network-topology-aware
"""

# Volcano's plugin switches and the session extension point each one gates.
ENABLE_SWITCHES = {
    "enableJobOrder": "job_order",
    "enableJobReady": "job_ready",
    "enableJobValid": "job_valid",
    "enablePredicate": "predicate",
    "enableNodeOrder": "node_order",
    "enableBatchNodeOrder": "batch_node_order",
    "enableHyperNodeOrder": "hypernode_order",
    "enableHyperNodeGradient": "hypernode_gradient",
    "enableJobEnqueued": "job_enqueueable",
    "enableTaskOrder": "task_order",
    "enablePreemptable": "preemptable",
    "enableReclaimable": "reclaimable",
}


@dataclass(frozen=True, slots=True)
class PluginOption:
    """One ``tiers[].plugins[]`` entry."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    disabled: frozenset[str] = frozenset()

    def enabled(self, point: str) -> bool:
        """Whether this plugin's ``point`` extension is switched on (default yes)."""
        return point not in self.disabled


@dataclass(frozen=True, slots=True)
class SchedulerConf:
    """Actions in order and plugin tiers."""

    actions: tuple[str, ...]
    tiers: tuple[tuple[PluginOption, ...], ...]


def parse_conf(
    text: str, known_actions: set[str] | None = None, known_plugins: set[str] | None = None
) -> SchedulerConf:
    """Parse and check a conf document.

    Raises:
        ConfError: naming the bad key and what was expected.
    """
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ConfError(f"scheduler conf is not valid YAML: {e}") from None
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise ConfError("scheduler conf: expected a mapping with 'actions' and 'tiers'")
    unknown = sorted(set(data) - {"actions", "tiers", "configurations", "metrics"})
    if unknown:
        raise ConfError(f"scheduler conf: unknown key {unknown[0]!r} (known: actions, tiers)")
    raw_actions = data.get("actions", "enqueue, allocate")
    if not isinstance(raw_actions, str):
        raise ConfError(f"actions: expected a string like 'enqueue, allocate', got {raw_actions!r}")
    actions = tuple(a.strip() for a in raw_actions.split(",") if a.strip())
    for action in actions:
        if known_actions is not None and action not in known_actions:
            raise ConfError(f"actions: unknown action {action!r} (known: {sorted(known_actions)})")
    raw_tiers = data.get("tiers") or []
    if not isinstance(raw_tiers, list):
        raise ConfError("tiers: expected a list of {plugins: [...]}")
    tiers = []
    for i, tier in enumerate(raw_tiers):
        if not isinstance(tier, Mapping) or not isinstance(tier.get("plugins", []), list):
            raise ConfError(f"tiers[{i}]: expected a mapping with a 'plugins' list")
        tiers.append(
            tuple(
                _plugin_option(f"tiers[{i}].plugins[{j}]", p, known_plugins)
                for j, p in enumerate(tier.get("plugins") or [])
            )
        )
    return SchedulerConf(actions, tuple(tiers))


def _plugin_option(where: str, raw: Any, known: set[str] | None) -> PluginOption:
    if not isinstance(raw, Mapping):
        raise ConfError(f"{where}: expected a mapping with 'name'")
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise ConfError(f"{where}.name: expected a plugin name, got {name!r}")
    if known is not None and name not in known:
        raise ConfError(f"{where}.name: unknown plugin {name!r} (known: {sorted(known)})")
    arguments = raw.get("arguments") or {}
    if not isinstance(arguments, Mapping):
        raise ConfError(f"{where}.arguments: expected a mapping, got {arguments!r}")
    disabled = set()
    for key, value in raw.items():
        if key in ("name", "arguments"):
            continue
        if key not in ENABLE_SWITCHES:
            raise ConfError(f"{where}.{key}: unknown key (known: name, arguments, enableXxx)")
        if not isinstance(value, bool):
            raise ConfError(f"{where}.{key}: expected a boolean, got {value!r}")
        if not value:
            disabled.add(ENABLE_SWITCHES[key])
    return PluginOption(name, dict(arguments), frozenset(disabled))


def arguments_of(option: PluginOption) -> Arguments:
    """The typed arguments of one plugin entry."""
    return Arguments(option.name, option.arguments)
