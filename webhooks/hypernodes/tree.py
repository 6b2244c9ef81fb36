"""Tree checks: would admitting this HyperNode break the topology tree?

Volcano's scheduler stops topology-aware scheduling for the whole cluster when the HyperNode
tree is broken, so the webhook refuses, with a message naming both objects:

- a ``labelMatch`` on a ``HyperNode``-type member (label selectors only select Nodes);
- a cycle (the object would become its own ancestor);
- a second parent (a child selected by this object is already selected by another HyperNode,
  or two existing HyperNodes both select this object);
- a child whose tier is not lower than its parent's (in either direction).

- a ``Node`` member by ``exactMatch`` that another HyperNode already selects by ``exactMatch``
  (a node belongs to one leaf; the scheduler would quarantine the newcomer). HyperNodes that
  a discovery source owns get a warning instead: a discoverer moves nodes between its leaves
  in several writes and must not be wedged half way.

A member HyperNode that does not exist yet is allowed with a warning: discovery creates
parents and children in any order. ``Node`` members that *may* overlap another HyperNode's
(a ``regexMatch`` that matches its exact names or the other way round, two ``regexMatch``,
a ``regexMatch`` and a ``labelMatch``, a ``labelMatch`` with ``matchExpressions`` against any
Node member, or two ``matchLabels`` that do not contradict each other) are allowed with a
warning naming both: whether they really overlap depends on the nodes that exist, which the
webhook does not cache. If they do, the scheduler quarantines the later claimant (its reason
names the node and the first claimant), as it does for an exact overlap that got in.

The other HyperNodes come from a ``HyperNodeLister`` (the shared informer's store in the
manager, a file for ``volcano-py validate --existing``). The object under review replaces
its stored version (UPDATE). Only ``HyperNode``-type members are read; regexMatch members
select the existing HyperNode names they match (RE2, unanchored, like the scheduler).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from volcano_py.api.constants import NETWORK_TOPOLOGY_SOURCE_LABEL
from volcano_py.api.regex import re2_search
from volcano_py.kube.store import Store

HYPERNODE = "HyperNode"
JSON = Mapping[str, Any]


class HyperNodeLister(Protocol):
    """Read access to the HyperNodes already in the cluster (an informer ``Store`` fits)."""

    def get(self, key: str) -> Any:
        """The HyperNode named ``key`` (cluster-scoped: key == name), or None."""
        ...

    def list(self) -> Sequence[Any]:
        """Every HyperNode (the objects are not modified)."""
        ...


class Names(Protocol):
    """The names of the HyperNodes stored (a dict of them, or a ``Store``)."""

    def __len__(self) -> int: ...

    def __contains__(self, key: object) -> bool: ...


class StaticLister:
    """A ``HyperNodeLister`` over a fixed list of objects (files, tests).

    A ``Store`` underneath, so the validator can keep the tree indexes on it
    (``treeindex.py``) as it does on the informer's.
    """

    def __init__(self, objects: Iterable[JSON] = ()) -> None:
        self._store = Store()
        for obj in objects:
            if name_of(obj):
                self.put(obj)

    def get(self, key: str) -> JSON | None:
        """The object named ``key``."""
        return self._store.get(key)

    def list(self) -> Sequence[JSON]:
        """All objects."""
        return self._store.list()

    def list_keys(self) -> builtins.list[str]:
        """All names."""
        return self._store.list_keys()

    def index_keys(self, index: str, value: str) -> builtins.list[str]:
        """The names an index holds under ``value`` (``Store.index_keys``)."""
        return self._store.index_keys(index, value)

    def add_indexers(self, indexers: dict[str, Callable[[JSON], Iterable[str]]]) -> None:
        """``Store.add_indexers``."""
        self._store.add_indexers(indexers)  # type: ignore[arg-type]

    def __len__(self) -> int:
        return len(self._store)

    def __contains__(self, key: object) -> bool:
        return key in self._store

    def put(self, obj: JSON) -> None:
        """Add or replace ``obj`` (``volcano-py validate`` adds each allowed object)."""
        self._store.put(name_of(obj), obj)  # type: ignore[arg-type]


@dataclass(slots=True)
class TreeResult:
    """A denial message (None when allowed) and the warnings."""

    denial: str | None = None
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Selector:
    """One ``HyperNode``-type member: an exact name or a pattern."""

    exact: str | None
    pattern: str | None


class TreeGraph(Protocol):
    """Parent -> child edges among the HyperNodes, the object under review in place of its own.

    The walk below (``_Graph``) or the informer's indexes (``treeindex.py``).
    """

    def get(self, name: str) -> JSON | None:
        """The HyperNode named ``name`` in the graph, or None."""
        ...

    def children(self, name: str) -> list[str]:
        """The names ``name``'s ``HyperNode``-type members select, sorted."""
        ...

    def cycle_through(self, start: str) -> list[str]:
        """A path ``start -> ... -> start``, or empty when ``start`` is not on a cycle."""
        ...

    def parents_of(self, targets: set[str]) -> dict[str, set[str]]:
        """For each name in ``targets``, the HyperNodes that select it."""
        ...


def cycle_path(start: str, graph: TreeGraph) -> list[str]:
    """The walk's path ``start -> ... -> start`` (depth first), or empty when there is none.

    Both graphs name the cycle with it, so their messages are the same word for word.
    """
    stack: list[tuple[str, list[str]]] = [(start, [start])]
    seen: set[str] = set()
    while stack:
        node, path = stack.pop()
        for child in graph.children(node):
            if child == start:
                return [*path, start]
            if child not in seen and graph.get(child) is not None:
                seen.add(child)
                stack.append((child, [*path, child]))
    return []


def check_tree(obj: JSON, lister: HyperNodeLister | None) -> TreeResult:
    """Run the tree checks for ``obj`` against the HyperNodes ``lister`` holds (a walk)."""
    result = TreeResult()
    name = name_of(obj)
    result.denial = label_match_denial(obj)
    if result.denial is not None:
        return result
    universe: dict[str, JSON] = {}
    if lister is not None:
        for other in lister.list():
            other_name = name_of(other)
            if other_name and other_name != name:
                universe[other_name] = other
    forget_deleted(universe)
    if node_claims(obj, universe, result):
        return result
    universe[name] = obj
    return graph_checks(obj, _Graph(universe, sorted(universe)), result)


def node_claims(obj: JSON, others: Mapping[str, JSON], result: TreeResult) -> bool:
    """Check ``obj``'s Node members against ``others``' (warnings, denial); True if denied.

    ``others`` may be just the HyperNodes that can matter (``treeindex.py``): those that
    claim one of ``obj``'s exact nodes, and those with a fuzzy Node member.
    """
    own_nodes = node_selectors(obj, stored=False)
    if own_nodes.exact or own_nodes.patterns or own_nodes.labels or own_nodes.expressions:
        claim = _node_overlaps(name_of(obj), own_nodes, others, result.warnings, _discovered(obj))
        if claim and _discovered(obj):
            # A discoverer moves nodes between its leaves in several writes (two leaves may
            # even swap nodes); refusing one write could wedge it. The scheduler quarantines
            # the later claimant meanwhile.
            result.warnings.append(claim)
        elif claim:
            result.denial = claim
            return True
    return False


def graph_checks(obj: JSON, graph: TreeGraph, result: TreeResult) -> TreeResult:
    """Missing members (warnings), cycle, second parent and tiers of ``obj`` in ``graph``."""
    name = name_of(obj)
    children = graph.children(name)
    for child in children:
        if graph.get(child) is None:
            result.warnings.append(
                f'member HyperNode "{child}" of HyperNode "{name}" does not exist yet; '
                "it joins the tree when it is created"
            )
    cycle = graph.cycle_through(name)
    if cycle:
        result.denial = f'HyperNode "{name}" would form a cycle: ' + " -> ".join(cycle)
        return result
    parents_of = graph.parents_of(set(children) | {name})
    for child in children:
        others = sorted(p for p in parents_of.get(child, ()) if p != name)
        if others:
            result.denial = (
                f'member HyperNode "{child}" of HyperNode "{name}" already has the parent '
                f'HyperNode "{others[0]}"; a HyperNode can have only one parent'
            )
            return result
    own_parents = sorted(parents_of.get(name, ()))
    if len(own_parents) > 1:
        listed = ", ".join(f'"{p}"' for p in own_parents)
        result.denial = (
            f'HyperNode "{name}" would have more than one parent: {listed}; '
            "a HyperNode can have only one parent"
        )
        return result
    tier = _tier(obj)
    for child in children:
        stored = graph.get(child)
        child_tier = _tier(stored) if stored is not None else None
        if tier is not None and child_tier is not None and child_tier >= tier:
            result.denial = (
                f'member HyperNode "{child}" (tier {child_tier}) of HyperNode "{name}" '
                f"(tier {tier}) must have a lower tier than its parent"
            )
            return result
    for parent in own_parents:
        parent_obj = graph.get(parent)
        parent_tier = _tier(parent_obj) if parent_obj is not None else None
        if tier is not None and parent_tier is not None and parent_tier <= tier:
            result.denial = (
                f'HyperNode "{name}" (tier {tier}) must have a lower tier than its parent '
                f'HyperNode "{parent}" (tier {parent_tier})'
            )
            return result
    return result


def label_match_denial(obj: JSON) -> str | None:
    """The denial for a ``HyperNode``-type member selected by ``labelMatch``, if any."""
    for i, member in _members(obj):
        selector = member.get("selector")
        if isinstance(selector, Mapping) and "labelMatch" in selector:
            return (
                f'HyperNode "{name_of(obj)}": spec.members[{i}] is of type HyperNode but uses '
                "labelMatch, which only selects Nodes; select the member HyperNode by "
                "exactMatch or regexMatch"
            )
    return None


@dataclass(frozen=True, slots=True)
class NodeSelectors:
    """A HyperNode's ``Node``-type members: exact names, regex patterns, label selectors."""

    exact: frozenset[str]
    patterns: tuple[str, ...]
    labels: tuple[Mapping[str, str], ...]
    # a labelMatch with matchExpressions: without the Node objects, it may select anything
    expressions: bool = False


_NODE_SELECTORS: dict[str, tuple[Any, NodeSelectors]] = {}


def node_selectors(obj: JSON, *, stored: bool = True) -> NodeSelectors:
    """``obj``'s Node members; a stored object's are cached per (name, resourceVersion).

    The object under review is not ``stored``: an UPDATE carries new members under the stored
    object's resourceVersion.
    """
    meta = obj.get("metadata")
    version = meta.get("resourceVersion") if stored and isinstance(meta, Mapping) else None
    name = name_of(obj)
    if version is not None:
        cached = _NODE_SELECTORS.get(name)
        if cached is not None and cached[0] == version:
            return cached[1]
    exact: set[str] = set()
    patterns: list[str] = []
    labels: list[Mapping[str, str]] = []
    expressions = False
    spec = obj.get("spec")
    members = spec.get("members") if isinstance(spec, Mapping) else None
    for member in members if isinstance(members, list) else ():
        if not isinstance(member, Mapping) or member.get("type") != "Node":
            continue
        selector = member.get("selector")
        if not isinstance(selector, Mapping):
            continue
        match = selector.get("exactMatch")
        regex = selector.get("regexMatch")
        label = selector.get("labelMatch")
        if isinstance(match, Mapping) and isinstance(match.get("name"), str):
            exact.add(match["name"])
        elif isinstance(regex, Mapping) and isinstance(regex.get("pattern"), str):
            patterns.append(regex["pattern"])
        elif isinstance(label, Mapping):
            if label.get("matchExpressions"):
                expressions = True
            elif isinstance(label.get("matchLabels"), Mapping):
                labels.append(label["matchLabels"])
    found = NodeSelectors(frozenset(exact), tuple(patterns), tuple(labels), expressions)
    if version is not None:
        _NODE_SELECTORS[name] = (version, found)
    return found


def forget_deleted(names: Names) -> None:
    """Drop cached selectors of HyperNodes no longer stored (deleted names pile up otherwise).

    Every webhook thread shares ``_NODE_SELECTORS``: the keys are copied in one C call (atomic
    under the GIL) before the scan, which another thread's insert would otherwise break.
    """
    if len(_NODE_SELECTORS) > 2 * len(names) + 64:
        for gone in [n for n in list(_NODE_SELECTORS) if n not in names]:
            _NODE_SELECTORS.pop(gone, None)


def _node_overlaps(
    name: str,
    own: NodeSelectors,
    others: Mapping[str, JSON],
    warnings: list[str],
    discovered: bool = False,
) -> str | None:
    """A denial when an exact Node member is another HyperNode's exact member; else warnings.

    A hand-made HyperNode beside a discovered one (or the other way round) whose Node members
    are label selectors against exact names is warned about too: nothing here can rule the
    overlap out, and it is the usual way the two kinds collide (Volcano's hand-made HyperNode
    script selects racks by label; label discovery lists the same nodes by name).
    """
    mixed: list[str] = []
    for other_name in sorted(others):
        theirs = node_selectors(others[other_name])
        if discovered != _discovered(others[other_name]) and (
            _labels_against_names(own, theirs) or _labels_against_names(theirs, own)
        ):
            mixed.append(other_name)
            continue
        shared = own.exact & theirs.exact
        if shared:
            node = min(shared)
            return (
                f'Node "{node}" is already a member of HyperNode "{other_name}"; a node can '
                f'belong to only one leaf HyperNode, so HyperNode "{name}" cannot select it too'
            )
        if _may_overlap(own, theirs) or _may_overlap(theirs, own):
            warnings.append(
                f'the Node members of HyperNode "{name}" may select the same nodes as '
                f'HyperNode "{other_name}"; a node under two leaf HyperNodes is quarantined '
                "by the scheduler"
            )
    if mixed:
        named = ", ".join(f'"{n}"' for n in mixed[:3]) + (
            f" and {len(mixed) - 3} more" if len(mixed) > 3 else ""
        )
        this, those = (
            ("discovered", "made by hand") if discovered else ("made by hand", "discovered")
        )
        warnings.append(
            f'HyperNode "{name}" ({this}) may select the same nodes as the {those} '
            f"HyperNode(s) {named} (one lists Nodes by name, the other selects them by label); "
            "a node under two leaf HyperNodes is quarantined by the scheduler: keep one kind "
            "(delete the hand-made HyperNodes or turn the discovery source off)"
        )
    return None


def _labels_against_names(a: NodeSelectors, b: NodeSelectors) -> bool:
    """``a`` selects Nodes by label (or expression) and ``b`` lists Nodes by name."""
    return bool((a.labels or a.expressions) and b.exact)


def _may_overlap(a: NodeSelectors, b: NodeSelectors) -> bool:
    """Whether ``a``'s Node members may select one of ``b``'s nodes.

    Without the Node objects only exact names against patterns and matchLabels against
    matchLabels can be ruled out.
    """
    if not (b.exact or b.patterns or b.labels or b.expressions):
        return False
    if a.expressions:
        return True
    if any(re2_search(p, n) for p in a.patterns for n in b.exact):
        return True
    if a.patterns and (b.patterns or b.labels or b.expressions):
        return True
    return any(all(y.get(k, v) == v for k, v in x.items()) for x in a.labels for y in b.labels)


class _Graph:
    """Parent -> child edges among ``universe``, computed lazily per HyperNode."""

    def __init__(self, universe: Mapping[str, JSON], names: list[str]) -> None:
        self._universe = universe
        self._names = names
        self._children: dict[str, list[str]] = {}

    def get(self, name: str) -> JSON | None:
        return self._universe.get(name)

    def selectors(self, name: str) -> list[Selector]:
        obj = self._universe.get(name)
        return selectors(obj) if obj is not None else []

    def children(self, name: str) -> list[str]:
        found = self._children.get(name)
        if found is None:
            chosen: set[str] = set()
            for sel in self.selectors(name):
                if sel.exact is not None:
                    chosen.add(sel.exact)
                elif sel.pattern is not None:
                    chosen.update(n for n in self._names if re2_search(sel.pattern, n))
            found = self._children[name] = sorted(chosen)
        return found

    def cycle_through(self, start: str) -> list[str]:
        """A path ``start -> ... -> start``, or empty when ``start`` is not on a cycle."""
        return cycle_path(start, self)

    def parents_of(self, targets: set[str]) -> dict[str, set[str]]:
        """For each name in ``targets``, the HyperNodes that select it."""
        parents: dict[str, set[str]] = {}
        for parent in self._names:
            for sel in self.selectors(parent):
                if sel.exact is not None:
                    if sel.exact in targets:
                        parents.setdefault(sel.exact, set()).add(parent)
                elif sel.pattern is not None:
                    for target in targets:
                        if re2_search(sel.pattern, target):
                            parents.setdefault(target, set()).add(parent)
        return parents


def selectors(obj: JSON) -> list[Selector]:
    """``obj``'s ``HyperNode``-type members by exactMatch (a name) or regexMatch (a pattern)."""
    out = []
    for _, member in _members(obj):
        selector = member.get("selector")
        if not isinstance(selector, Mapping):
            continue
        exact = selector.get("exactMatch")
        regex = selector.get("regexMatch")
        if isinstance(exact, Mapping) and isinstance(exact.get("name"), str) and exact["name"]:
            out.append(Selector(exact["name"], None))
        elif isinstance(regex, Mapping) and isinstance(regex.get("pattern"), str):
            out.append(Selector(None, regex["pattern"]))
    return out


def _members(obj: JSON) -> list[tuple[int, Mapping[str, Any]]]:
    """The ``HyperNode``-type members of ``obj`` with their index (malformed ones skipped)."""
    spec = obj.get("spec")
    members = spec.get("members") if isinstance(spec, Mapping) else None
    if not isinstance(members, list):
        return []
    return [
        (i, m) for i, m in enumerate(members) if isinstance(m, dict) and m.get("type") == HYPERNODE
    ]


def _discovered(obj: JSON) -> bool:
    """Whether a discovery source owns ``obj`` (its ``network-topology-source`` label)."""
    meta = obj.get("metadata")
    labels = meta.get("labels") if isinstance(meta, Mapping) else None
    return isinstance(labels, Mapping) and bool(labels.get(NETWORK_TOPOLOGY_SOURCE_LABEL))


def name_of(obj: Any) -> str:
    """``metadata.name``, or "" when it is missing or not a string."""
    meta = obj.get("metadata") if isinstance(obj, Mapping) else None
    name = meta.get("name") if isinstance(meta, Mapping) else None
    return name if isinstance(name, str) else ""


def _tier(obj: JSON) -> int | None:
    spec = obj.get("spec")
    tier = spec.get("tier") if isinstance(spec, Mapping) else None
    return tier if isinstance(tier, int) and not isinstance(tier, bool) else None
