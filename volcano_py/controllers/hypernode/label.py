"""The ``label`` discovery source: HyperNodes from the values of node labels.

Config (Volcano's)::

    config:
      networkTopologyTypes:
        topologyA3:                          # type name, at most 20 characters
          - nodeLabel: volcano.sh/hypercluster   # top tier
          - nodeLabel: volcano.sh/hypernode
          - nodeLabel: kubernetes.io/hostname    # the node level: dropped

Labels are listed from the top tier down; the last entry is the node itself and is dropped,
so tier 1 is the second-to-last label. For each node, walking up from tier 1, the nodes that
share a label value form one HyperNode; a node missing a level's label stops there, and joins
the HyperNodes above it that the other nodes of its group agree on (a rack whose nodes are
labelled with one spine, but for one node without the spine label, is one rack under that
spine; ``complete_paths``). Tier-1
members are the Nodes, higher tiers' members the HyperNodes one tier down, all
``exactMatch``, sorted. ``tierName`` is the label key.

**One HyperNode per parent.** A HyperNode is identified by its label value *and the values
above it* (its path): the same rack value under two spines makes two HyperNodes, so the
result is always a tree (Volcano merges them into one HyperNode with two parents). Each
HyperNode carries its path as labels (``<key>=<value>`` for its level and every level above)
plus ``volcano.sh/network-topology-source=label``.

**Stable names** (``names.py``). A new HyperNode is named from what it stands for:
``hypernode-<type>-tier<N>-<values>``, the label values of its path from the top tier down
joined by ``.`` (``hypernode-topologya3-tier1-s4.s0``), with a hash suffix when a value is
not name-safe or the name would be long. Re-created, it comes back under the same name.
An existing label-sourced HyperNode with the same ``<key>=<value>`` and name prefix keeps
its name: first one whose path labels match exactly, then one that merely does not
contradict the path (a HyperNode Volcano made carries only its own level's label, and a
random name suffix), so restarts and migrations from Volcano rename nothing.

A type whose name is too long, whose labels repeat, or that has fewer than two labels is
skipped with an error reported on the ConfigMap; the other types still run.

Rediscovery is event-driven and rate-limited (at most once per ``MIN_GAP_S``): a node
added or deleted carrying a watched label, a change to a watched label, the deletion of a
label-sourced HyperNode; and every ``interval`` as a safety net.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from volcano_py.api import JSON
from volcano_py.api import resources as R
from volcano_py.api.constants import LABEL_DISCOVERER, NETWORK_TOPOLOGY_SOURCE_LABEL, MemberType
from volcano_py.api.meta import labels_of, name_of
from volcano_py.api.selectors import is_dns1123_subdomain, is_qualified_name
from volcano_py.controllers.hypernode.config import ConfigError, DiscoveryConfig
from volcano_py.controllers.hypernode.discovery import (
    DiscoveryContext,
    DiscoveryError,
    ResultSink,
    config_mapping,
)
from volcano_py.controllers.hypernode.idle import DiscoveryMemo
from volcano_py.controllers.hypernode.label_paths import complete_paths, node_paths, relabelled
from volcano_py.controllers.hypernode.names import stable_name
from volcano_py.kube.informer import EventHandler

log = logging.getLogger(__name__)


MAX_TYPE_NAME_LENGTH = 20
MIN_GAP_S = 1.0


@dataclass(frozen=True, slots=True)
class TopologyType:
    """One ``networkTopologyTypes`` entry: ``levels[0]`` is tier 1's label key."""

    name: str
    levels: tuple[str, ...]

    @property
    def prefix_name(self) -> str:
        """The type name as it appears in HyperNode names (Volcano's cleaning)."""
        return clean_type_name(self.name)


@functools.lru_cache(maxsize=256)
def clean_type_name(name: str) -> str:
    """Lowercase letters; keep digits, ``.`` and ``-``; anything else becomes ``-``."""
    return "".join(
        c.lower() if c.isalpha() else c if c.isdigit() or c in ".-" else "-" for c in name
    )


def parse_types(config: Mapping[str, Any]) -> tuple[list[TopologyType], list[str]]:
    """The usable topology types (sorted by name) and a message per skipped type.

    Raises:
        ConfigError: ``networkTopologyTypes`` is missing or not a mapping.
    """
    raw_types = config_mapping(config, "networkTopologyTypes")
    types: list[TopologyType] = []
    problems: list[str] = []
    for name in sorted(raw_types, key=str):
        where = f"config.networkTopologyTypes.{name}"
        try:
            types.append(_parse_type(str(name), raw_types[name]))
        except ConfigError as e:
            problems.append(f"{where}: {e}; this topology type is skipped")
    return types, problems


def _parse_type(name: str, entries: Any) -> TopologyType:
    if len(name) > MAX_TYPE_NAME_LENGTH:
        raise ConfigError(f"the type name is longer than {MAX_TYPE_NAME_LENGTH} characters")
    probe = f"hypernode-{clean_type_name(name)}-tier1-abcde"
    if not name or is_dns1123_subdomain(probe):
        raise ConfigError(f"the type name {name!r} cannot be part of a HyperNode name")
    if not isinstance(entries, list):
        raise ConfigError(f"expected a list of {{nodeLabel: <key>}}, got {type(entries).__name__}")
    keys: list[str] = []
    for i, entry in enumerate(entries):
        key = entry.get("nodeLabel") if isinstance(entry, Mapping) else None
        if not isinstance(key, str) or not key:
            raise ConfigError(f"[{i}]: expected {{nodeLabel: <label key>}}")
        errors = is_qualified_name(key)
        if errors:
            raise ConfigError(f"[{i}].nodeLabel: {key!r} is not a label key: {errors[0]}")
        keys.append(key)
    duplicates = sorted({k for k in keys if keys.count(k) > 1})
    if duplicates:
        raise ConfigError(f"there are duplicate labels: {', '.join(duplicates)}")
    if len(keys) < 2:
        raise ConfigError("needs at least two nodeLabel entries (the last one is the node level)")
    return TopologyType(name, tuple(reversed(keys[:-1])))


# -- discovery (pure) ---------------------------------------------------------------------

# A group: (type name, tier, label values from this tier upwards).
GroupKey = tuple[str, int, tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class _Candidate:
    name: str
    labels: Mapping[str, str]


def discover_label_hypernodes(
    nodes: Iterable[Mapping[str, Any]],
    existing: Iterable[Mapping[str, Any]],
    types: Sequence[TopologyType],
    memo: DiscoveryMemo | None = None,
) -> list[JSON]:
    """The HyperNodes ``types`` make of ``nodes`` (see the module docstring), sorted by name.

    ``existing`` are the HyperNodes in the cluster, for name reuse and to avoid collisions.
    ``memo``: the source's last discovery; the same input hands its result back (the idle
    round, ``idle.py``) and a new one is remembered there. Without it, always built afresh.
    """
    type_list = list(types)
    paths = node_paths(nodes, [(t.name, t.levels) for t in type_list])
    existing_list = list(existing)
    if memo is None:
        return _build(type_list, paths, existing_list)
    last = memo.recall(type_list, paths, existing_list)
    if last is not None:
        return list(last)
    result = _build(type_list, paths, existing_list)
    memo.remember(type_list, paths, existing_list, result)
    return list(result)


def _build(
    type_list: list[TopologyType],
    paths: dict[str, dict[tuple[str, ...], list[str]]],
    existing: list[Mapping[str, Any]],
) -> list[JSON]:
    """The HyperNodes of the node ``paths`` (each type's label paths and their nodes)."""
    members: dict[GroupKey, set[Any]] = defaultdict(set)
    for topology in type_list:
        by_path = paths[topology.name]
        completed = complete_paths(set(by_path))
        for path, node_names in by_path.items():
            path = completed.get(path, path)
            members[(topology.name, 1, path)].update(node_names)
            for i in range(1, len(path)):
                members[(topology.name, i + 1, path[i:])].add((topology.name, i, path[i - 1 :]))
    by_type = {t.name: t for t in type_list}
    names = _assign_names(sorted(members), by_type, existing)
    result = []
    for group, group_members in members.items():
        topology = by_type[group[0]]
        tier = group[1]
        if tier == 1:
            member_names = sorted(group_members)
            member_type = MemberType.NODE
        else:
            member_names = sorted(names[g] for g in group_members)
            member_type = MemberType.HYPERNODE
        result.append(_hypernode(names[group], topology, group, member_names, member_type))
    result.sort(key=name_of)
    return result


def _path_labels(topology: TopologyType, group: GroupKey) -> dict[str, str]:
    tier, values = group[1], group[2]
    return {topology.levels[tier - 1 + j]: value for j, value in enumerate(values)}


def _hypernode(
    name: str,
    topology: TopologyType,
    group: GroupKey,
    member_names: list[str],
    member_type: MemberType,
) -> JSON:
    labels = _path_labels(topology, group)
    labels[NETWORK_TOPOLOGY_SOURCE_LABEL] = LABEL_DISCOVERER
    return {
        "apiVersion": R.HYPERNODES.api_version,
        "kind": R.HYPERNODES.kind,
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "tier": group[1],
            "tierName": topology.levels[group[1] - 1],
            "members": [
                {"type": str(member_type), "selector": {"exactMatch": {"name": member}}}
                for member in member_names
            ],
        },
    }


def _assign_names(
    groups: list[GroupKey],
    by_type: Mapping[str, TopologyType],
    existing: Iterable[Mapping[str, Any]],
) -> dict[GroupKey, str]:
    """Each group's name.

    Its own stable name when that HyperNode exists and fits exactly (the steady state,
    checked first without building the candidate index), else a reusable existing name,
    else its stable name (hashed if a foreign HyperNode holds it).
    """
    foreign: set[str] = set()
    ours: dict[str, Mapping[str, str]] = {}
    for obj in existing:
        labels = labels_of(obj)
        if labels.get(NETWORK_TOPOLOGY_SOURCE_LABEL) == LABEL_DISCOVERER:
            ours[name_of(obj)] = labels
        else:
            foreign.add(name_of(obj))
    names: dict[GroupKey, str] = {}
    used: set[str] = set()
    pending: list[GroupKey] = []
    for group in groups:
        topology = by_type[group[0]]
        name = group_name(topology, group, foreign)
        found = ours.get(name)
        if found is not None and name not in used and _fits(topology, group, found, True):
            names[group] = name
            used.add(name)
        else:
            pending.append(group)
    if not pending:
        return names
    candidates: dict[tuple[str, str], list[_Candidate]] = defaultdict(list)
    for name, labels in sorted(ours.items()):
        for key, value in labels.items():
            candidates[(key, value)].append(_Candidate(name, labels))
    for strict in (True, False):
        for group in pending:
            if group in names:
                continue
            reused = _reusable(group, by_type[group[0]], candidates, used, strict=strict)
            if reused is not None:
                names[group] = reused
                used.add(reused)
    for group in pending:
        if group not in names:
            names[group] = group_name(by_type[group[0]], group, foreign | used)
            used.add(names[group])
    return names


def _fits(topology: TopologyType, group: GroupKey, labels: Mapping[str, str], strict: bool) -> bool:
    """Whether a HyperNode's ``labels`` stand for ``group`` (``strict``: every path label)."""
    tier, values = group[1], group[2]
    if any(key in labels for key in topology.levels[tier - 1 + len(values) :]):
        return False
    path = _path_labels(topology, group)
    if strict:
        return all(labels.get(k) == v for k, v in path.items())
    return all(labels.get(k, v) == v for k, v in path.items())


def _reusable(
    group: GroupKey,
    topology: TopologyType,
    candidates: Mapping[tuple[str, str], list[_Candidate]],
    used: set[str],
    *,
    strict: bool,
) -> str | None:
    tier, values = group[1], group[2]
    prefix = f"hypernode-{topology.prefix_name}-tier{tier}-"
    for candidate in candidates.get((topology.levels[tier - 1], values[0]), ()):
        if candidate.name in used or not candidate.name.startswith(prefix):
            continue
        if _fits(topology, group, candidate.labels, strict):
            return candidate.name
    return None


def group_name(topology: TopologyType, group: GroupKey, taken: set[str]) -> str:
    """The stable name of ``group`` (``names.stable_name``), hashed when ``taken`` has it."""
    tier, values = group[1], group[2]
    prefix = f"hypernode-{topology.prefix_name}-tier{tier}"
    identity = "\x00".join((LABEL_DISCOVERER, topology.name, str(tier), *values))
    name = stable_name(prefix, list(reversed(values)), identity)
    if name in taken:  # a hand-made HyperNode holds it: the hashed form is ours
        name = stable_name(prefix, (), identity)
    return name


# -- the discoverer -----------------------------------------------------------------------


class LabelDiscoverer:
    """The ``label`` source: discovers on start, on relevant changes, and every interval."""

    def __init__(
        self, config: DiscoveryConfig, context: DiscoveryContext, *, min_gap: float = MIN_GAP_S
    ) -> None:
        types, problems = parse_types(config.config)
        for problem in problems:
            context.report(f"{config.entry}: {problem}")
        if not types:
            raise ConfigError("config.networkTopologyTypes: no usable topology type")
        self.types = types
        self.watched = frozenset(key for t in types for key in t.levels)
        self.interval = config.interval
        self.min_gap = min_gap
        self._context = context
        self._clock = context.clock
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._unsubscribe: list[Any] = []
        self._memo = DiscoveryMemo()  # the last discovery's input and result
        self.runs = 0

    @property
    def name(self) -> str:
        """``label``."""
        return LABEL_DISCOVERER

    def discover(self) -> list[JSON]:
        """One full discovery from the caches.

        The previous result counts as existing too: the HyperNodes it created may not have
        reached the cache yet, and naming their groups afresh would churn them.
        """
        existing = self._context.hypernodes.list()
        cached = {name_of(obj) for obj in existing}
        existing.extend(h for h in self._memo.result if name_of(h) not in cached)
        return discover_label_hypernodes(
            self._context.nodes.list(), existing, self.types, self._memo
        )

    # -- triggers ---------------------------------------------------------------------

    def trigger(self) -> None:
        """Ask for a rediscovery (coalesced and rate-limited)."""
        self._wake.set()

    def _watched_labels(self, obj: Mapping[str, Any]) -> dict[str, str]:
        labels = labels_of(obj)
        return {k: labels[k] for k in self.watched if k in labels}

    def on_node_add(self, obj: JSON) -> None:
        """A node with a watched label appeared."""
        if self._watched_labels(obj):
            self.trigger()

    def on_node_update(self, old: JSON, new: JSON) -> None:
        """A watched label changed."""
        if self._watched_labels(old) != self._watched_labels(new):
            self.trigger()

    def on_node_delete(self, obj: JSON) -> None:
        """A node with a watched label went away."""
        if self._watched_labels(obj):
            self.trigger()

    def on_hypernode_delete(self, obj: JSON) -> None:
        """One of our HyperNodes was deleted (by hand?): put it back if it still belongs."""
        if labels_of(obj).get(NETWORK_TOPOLOGY_SOURCE_LABEL) == LABEL_DISCOVERER:
            self.trigger()

    # -- lifecycle --------------------------------------------------------------------

    def start(self, sink: ResultSink) -> None:
        """Subscribe to Node/HyperNode changes and start thread ``discovery:label``."""
        self._unsubscribe = [
            self._context.node_events.subscribe(
                EventHandler(self.on_node_add, self.on_node_update, self.on_node_delete)
            ),
            self._context.hypernode_events.subscribe(
                EventHandler(on_delete=self.on_hypernode_delete)
            ),
        ]
        self.trigger()
        self._thread = threading.Thread(
            target=self._loop, args=(sink,), name="discovery:label", daemon=True
        )
        self._thread.start()

    def run_once(self, sink: ResultSink) -> bool:
        """Discover and deliver; False when the discoverer is being stopped."""
        self.runs += 1
        try:
            hypernodes = self.discover()
        except DiscoveryError as e:
            log.warning("discovery source label: %s", e)
            return sink.fail(str(e))
        log.info("discovery source label: discovered %d HyperNodes", len(hypernodes))
        return sink.submit(hypernodes, self.relabelled(hypernodes))

    def relabelled(self, hypernodes: Sequence[JSON]) -> frozenset[str]:
        """The source's HyperNodes ``hypernodes`` leaves out because their nodes were relabelled."""
        owned = [
            h
            for h in self._context.hypernodes.list()
            if labels_of(h).get(NETWORK_TOPOLOGY_SOURCE_LABEL) == LABEL_DISCOVERER
        ]
        nodes = {name_of(n) for n in self._context.nodes.list()}
        return relabelled(owned, hypernodes, nodes)

    def _loop(self, sink: ResultSink) -> None:
        last = None
        while not self._stop.is_set():
            self._clock.wait_event(self._wake, self.interval)
            if self._stop.is_set():
                return
            if last is not None:
                wait = last + self.min_gap - self._clock.now()
                if wait > 0 and self._clock.wait_event(self._stop, wait):
                    return
            self._wake.clear()
            last = self._clock.now()
            if not self.run_once(sink):
                return

    def stop(self) -> None:
        """Unsubscribe, stop the thread and wait for it."""
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._stop.set()
        self._wake.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=60.0)

    def result_synced(self) -> None:
        """Nothing to do: the manager holds the next result until this one is reconciled."""


def new_label_discoverer(config: DiscoveryConfig, context: DiscoveryContext) -> LabelDiscoverer:
    """The registry factory for ``label``."""
    return LabelDiscoverer(config, context)
