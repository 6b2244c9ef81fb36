"""The HyperNode tree: ``HyperNodeInfo`` per HyperNode, built incrementally by ``HyperNodeIndex``.

``HyperNodeIndex`` lives in the scheduler cache. It keeps, per HyperNode, the parsed spec and
the set of nodes its Node members select, and per node its labels. A HyperNode change
re-resolves that one HyperNode against every node; a Node change re-checks that one node
against the regex/label members only (Volcano's ``triggerUpdateHyperNode``). ``build()``
turns that into an immutable ``HyperNodeTree`` (parents, children, real nodes under every
HyperNode, tiers, tierName → tier map, readiness) — cached until something it is built from
changes: a status write (the controller's ``nodeCount`` after every create) keeps it and only
points its info at the new object. ``last_built()`` hands an idle cycle the last tree without a
rebuild (``cache/snapshot.py``).

The tree always carries the virtual ``<cluster-top-hypernode>``: tier = highest real tier + 1,
parent of every parentless HyperNode, containing every node (Volcano's session adds it).

Broken parts are quarantined, not the whole tree (a departure from Volcano, which stops
topology scheduling cluster-wide while its tree is not ``HyperNodesReadyToSchedule``). When a
hand-made or pre-install object reaches the cache with

- a node directly under two leaf HyperNodes: every claimant but the first (oldest
  ``creationTimestamp``, then name) is quarantined, so the first claim keeps working;
- a HyperNode with two parents: that HyperNode is quarantined (its own children stay, now
  under the virtual top);
- a cycle: every HyperNode on it is quarantined;
- a ``spec.tier`` over ``MAX_HYPERNODE_TIER`` (the CRD, webhook and ``validate`` refuse it;
  it gets here only with the webhook off and Volcano's unbounded CRD): that HyperNode is
  quarantined, so no tier list, score or picture ever spans a huge range;

the quarantined HyperNodes are left out of the tree (``quarantined`` names each with the
reason; ``errors`` still lists every problem) and the rest is built and ``ready`` as usual, so
jobs that do not need them keep scheduling.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from volcano_py.api import JSON
from volcano_py.api.constants import (
    CLUSTER_TOP_HYPERNODE,
    MAX_HYPERNODE_TIER,
    NETWORK_TOPOLOGY_SOURCE_LABEL,
    MemberType,
)
from volcano_py.api.errors import FieldError
from volcano_py.api.hypernode import HyperNode, resolve_hypernode_members, resolve_node_members


@dataclass(slots=True)
class HyperNodeInfo:
    """One HyperNode in the tree (the virtual top has ``obj`` None)."""

    name: str
    tier: int
    tier_name: str = ""
    parent: str = ""
    children: tuple[str, ...] = ()
    obj: JSON | None = None


@dataclass(slots=True)
class HyperNodeTree:
    """An immutable snapshot of the tree, shared by every session until the tree changes."""

    hypernodes: dict[str, HyperNodeInfo]
    real_nodes: dict[str, frozenset[str]]
    node_chain: dict[str, tuple[str, ...]]
    by_tier: dict[int, tuple[str, ...]]
    tiers: list[int]
    tier_names: dict[str, int]
    ready: bool
    errors: list[str] = field(default_factory=list)
    quarantined: dict[str, str] = field(default_factory=dict)
    # per quarantined HyperNode, its own nodes that no healthy HyperNode holds
    quarantined_nodes: dict[str, frozenset[str]] = field(default_factory=dict)
    _ancestors: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False)
    _lca: dict[tuple[str, str], str] = field(default_factory=dict, repr=False)

    @property
    def top(self) -> HyperNodeInfo:
        """The virtual cluster-top HyperNode."""
        return self.hypernodes[CLUSTER_TOP_HYPERNODE]

    def ancestors(self, name: str) -> tuple[str, ...]:
        """``name`` and its ancestors, lowest tier first (bounded against cycles; memoised)."""
        known = self._ancestors.get(name)
        if known is not None:
            return known
        chain: list[str] = []
        seen: set[str] = set()
        current = name
        while current and current not in seen and current in self.hypernodes:
            seen.add(current)
            chain.append(current)
            current = self.hypernodes[current].parent
        result = tuple(chain)
        self._ancestors[name] = result
        return result

    def lca(self, a: str, b: str) -> str:
        """The lowest common ancestor of two HyperNodes ("" when either is empty/unknown)."""
        if not a:
            return b
        if not b or a == b:
            return a
        key = (a, b)
        known = self._lca.get(key)
        if known is not None:
            return known
        above_a = set(self.ancestors(a))
        result = next((n for n in self.ancestors(b) if n in above_a), "")
        self._lca[key] = result
        return result

    def leaf_of(self, node: str) -> str:
        """The lowest HyperNode containing the node (the virtual top if none other does)."""
        chain = self.node_chain.get(node)
        return chain[0] if chain else CLUSTER_TOP_HYPERNODE


class HyperNodeIndex:
    """Incremental member resolution; produce trees with ``build()``."""

    def __init__(self) -> None:
        """An empty index."""
        self._specs: dict[str, HyperNode] = {}
        self._objs: dict[str, JSON] = {}
        self._errors: dict[str, str] = {}
        self._direct_nodes: dict[str, set[str]] = {}
        self._node_labels: dict[str, Mapping[str, str]] = {}
        # HyperNodes with regex/label Node members: the only ones a node event can change
        self._selective: set[str] = set()
        self._tree: HyperNodeTree | None = None
        # the last tree built, kept when a change makes it out of date (``last_built``)
        self._last: HyperNodeTree | None = None
        # moves on every change the tree is built from (the cache wakes the loop on it)
        self.generation = 0

    def _invalidate(self) -> None:
        self._tree = None
        self.generation += 1

    def set_hypernode(self, obj: JSON) -> bool:
        """Add or replace a HyperNode and resolve its Node members against every node.

        Returns whether it is new or its spec changed (not a status-only update).
        """
        name = (obj.get("metadata") or {}).get("name", "")
        old = self._objs.get(name)
        self._objs[name] = obj
        if old is not None and _tree_key(old) == _tree_key(obj):
            # a status write (the controller's nodeCount, a stale condition): the tree stays,
            # its info shows the new object (what the view reads of it)
            self._swap_obj(name, obj)
            return False
        changed = old is None or old.get("spec") != obj.get("spec")
        self._invalidate()
        try:
            spec = HyperNode.from_dict(obj)
        except FieldError as e:
            self._specs.pop(name, None)
            self._direct_nodes.pop(name, None)
            self._selective.discard(name)
            self._errors[name] = f"HyperNode {name}: {e}"
            return changed
        self._errors.pop(name, None)
        self._specs[name] = spec
        if spec.selective:
            self._selective.add(name)
        else:
            self._selective.discard(name)
        selected: set[str] = set()
        for member in spec.node_members:
            selected |= resolve_node_members(member, self._node_labels)
        self._direct_nodes[name] = selected
        return changed

    def _swap_obj(self, name: str, obj: JSON) -> None:
        """Point the built tree's info (if any) at ``obj``: nothing the tree is built from moved."""
        info = self._tree.hypernodes.get(name) if self._tree is not None else None
        if info is not None:
            info.obj = obj

    def __contains__(self, name: object) -> bool:
        """Whether a HyperNode of this name is in the index (valid or not)."""
        return name in self._objs

    def delete_hypernode(self, name: str) -> None:
        """Forget a HyperNode."""
        self._invalidate()
        for table in (self._specs, self._objs, self._errors, self._direct_nodes):
            table.pop(name, None)
        self._selective.discard(name)

    def set_node(self, name: str, labels: Mapping[str, str]) -> None:
        """A node appeared or changed: re-check it against the regex/label Node members.

        Exact members selected their name when their HyperNode was set, whatever exists,
        so only the selective HyperNodes are visited: a node costs O(selective), not
        O(every HyperNode x its members) (5,000 nodes listed after 600 exact-member
        HyperNodes took ~20 s before the first cycle).
        """
        old = self._node_labels.get(name)
        self._node_labels[name] = labels
        if old == labels and old is not None:
            return
        self._invalidate()
        single = {name: labels}
        for hn in self._selective:
            members = self._direct_nodes.setdefault(hn, set())
            hit = any(name in resolve_node_members(m, single) for m in self._specs[hn].node_members)
            if hit:
                members.add(name)
            else:
                members.discard(name)

    def delete_node(self, name: str) -> None:
        """A node went away: it leaves the regex/label members that selected it.

        An exact member keeps naming it (it selects its name whatever exists), as a tree
        built from scratch without the node would.
        """
        if self._node_labels.pop(name, None) is None:
            return
        self._invalidate()
        for hn in self._selective:
            members = self._direct_nodes.get(hn)
            if members is None or name not in members:
                continue
            if not any(name in resolve_node_members(m, {}) for m in self._specs[hn].node_members):
                members.discard(name)

    def objects(self) -> list[JSON]:
        """The HyperNode objects as last seen."""
        return [self._objs[n] for n in sorted(self._objs)]

    def build(self) -> HyperNodeTree:
        """The current tree (rebuilt only after a change)."""
        if self._tree is None:
            self._tree = self._last = build_tree(
                self._specs, self._direct_nodes, self._node_labels.keys(), self._errors, self._objs
            )
        return self._tree

    def last_built(self) -> HyperNodeTree:
        """The tree as last built, even if out of date since (built now if never).

        For a cycle with no job: nothing in it reads the tree for a decision, so the
        HyperNode events of an idle cluster (discovery creating 10,000 racks) cost no
        rebuild; the first cycle with a job builds the tree once for all of them.
        """
        return self._last if self._last is not None else self.build()


def build_tree(
    specs: Mapping[str, HyperNode],
    direct_nodes: Mapping[str, set[str]],
    existing_nodes: Iterable[str],
    parse_errors: Mapping[str, str],
    objs: Mapping[str, JSON],
) -> HyperNodeTree:
    """Link parsed HyperNodes into a tree and check it (see the module docstring)."""
    nodes = set(existing_nodes)
    names = sorted(specs)
    children, parents = _links(specs, names)
    node_parents: dict[str, list[str]] = {}
    for name in names:
        for node in direct_nodes.get(name, ()):
            node_parents.setdefault(node, []).append(name)
    errors, quarantined = _faults(names, specs, children, parents, node_parents, objs)
    quarantined_nodes: dict[str, frozenset[str]] = {}
    if quarantined:
        healthy_nodes = {
            node for node, ps in node_parents.items() if any(p not in quarantined for p in ps)
        }
        quarantined_nodes = {
            name: frozenset(set(direct_nodes.get(name, ())) & nodes - healthy_nodes)
            for name in quarantined
        }
        names = [n for n in names if n not in quarantined]
        children = {n: [c for c in children[n] if c not in quarantined] for n in names}
        parents = {n: [p for p in parents[n] if p not in quarantined] for n in names}
        node_parents = {
            node: kept
            for node, ps in node_parents.items()
            if (kept := [p for p in ps if p not in quarantined])
        }
    # tierName conflicts are reported below but do not make the tree unusable
    infos: dict[str, HyperNodeInfo] = {}
    top_tier = 1
    for name in names:
        spec = specs[name]
        top_tier = max(top_tier, spec.tier + 1)
        ps = parents[name]
        infos[name] = HyperNodeInfo(
            name, spec.tier, spec.tier_name, ps[0] if ps else "", tuple(children[name]), objs[name]
        )
    roots = tuple(n for n in names if not infos[n].parent)
    for root in roots:
        infos[root].parent = CLUSTER_TOP_HYPERNODE
    infos[CLUSTER_TOP_HYPERNODE] = HyperNodeInfo(CLUSTER_TOP_HYPERNODE, top_tier, "", "", roots)
    real_nodes = _real_nodes(names, children, direct_nodes, nodes)
    real_nodes[CLUSTER_TOP_HYPERNODE] = frozenset(nodes)
    node_chain = _node_chains(infos, node_parents, nodes)
    by_tier_lists: dict[int, list[str]] = {}
    for name, info in infos.items():
        by_tier_lists.setdefault(info.tier, []).append(name)
    by_tier = {tier: tuple(sorted(v)) for tier, v in by_tier_lists.items()}
    tier_names, warnings = _tier_names(specs, names)
    return HyperNodeTree(
        hypernodes=infos,
        real_nodes=real_nodes,
        node_chain=node_chain,
        by_tier=by_tier,
        tiers=sorted(by_tier),
        tier_names=tier_names,
        ready=True,
        errors=errors + warnings + [parse_errors[n] for n in sorted(parse_errors)],
        quarantined=quarantined,
        quarantined_nodes=quarantined_nodes,
    )


def _links(
    specs: Mapping[str, HyperNode], names: list[str]
) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Children and parents of every HyperNode, from its HyperNode members."""
    children: dict[str, list[str]] = {n: [] for n in names}
    parents: dict[str, list[str]] = {n: [] for n in names}
    for name in names:
        for member in specs[name].members:
            if member.type is not MemberType.HYPERNODE:
                continue
            for child in sorted(resolve_hypernode_members(member, names)):
                if child in specs and child not in children[name]:
                    children[name].append(child)
                    parents[child].append(name)
    return children, parents


def _faults(
    names: list[str],
    specs: Mapping[str, HyperNode],
    children: Mapping[str, list[str]],
    parents: Mapping[str, list[str]],
    node_parents: Mapping[str, list[str]],
    objs: Mapping[str, JSON],
) -> tuple[list[str], dict[str, str]]:
    """The tree's errors, and the HyperNodes they quarantine (name -> why)."""
    errors: list[str] = []
    quarantined: dict[str, str] = {}
    for name in names:
        if specs[name].tier > MAX_HYPERNODE_TIER:
            error = (
                f"HyperNode {name}: spec.tier {specs[name].tier} is over the maximum tier "
                f"{MAX_HYPERNODE_TIER}"
            )
            errors.append(error)
            quarantined[name] = error
    for child, ps in parents.items():
        if len(ps) > 1:
            error = f"HyperNode {child} has more than one parent: {', '.join(sorted(ps))}"
            errors.append(error)
            quarantined.setdefault(child, error)
    for node in sorted(node_parents):
        if len(node_parents[node]) > 1:
            claimants = sorted(node_parents[node], key=lambda n: (_created(objs.get(n)), n))
            error = f"node {node} is a member of more than one HyperNode: {', '.join(claimants)}"
            errors.append(error)
            first = claimants[0]
            for later in claimants[1:]:
                mixed = ""
                if origin(objs.get(first)) != origin(objs.get(later)):
                    # a hand-made HyperNode beside discovered ones (Volcano's script, say)
                    mixed = (
                        f"; {first} is {origin(objs.get(first))}, {later} {origin(objs.get(later))}"
                    )
                quarantined.setdefault(later, f"{error} ({first} claimed it first{mixed})")
    for loop in _cycles(names, children):
        error = "HyperNode cycle: " + " -> ".join(loop)
        errors.append(error)
        for name in loop:
            quarantined.setdefault(name, error)
    return errors, quarantined


def _tier_names(
    specs: Mapping[str, HyperNode], names: list[str]
) -> tuple[dict[str, int], list[str]]:
    """Each tierName's tier, and a warning for each tierName naming two tiers (the first wins)."""
    tier_names: dict[str, int] = {}
    warnings: list[str] = []
    for name in names:
        spec = specs[name]
        if not spec.tier_name:
            continue
        known = tier_names.setdefault(spec.tier_name, spec.tier)
        if known != spec.tier:
            warnings.append(
                f"tierName {spec.tier_name} names tiers {known} and {spec.tier} (HyperNode {name})"
            )
    return tier_names, warnings


def _tree_key(obj: JSON) -> tuple[object, ...]:
    """What of a HyperNode object the tree is built from.

    Its spec, and of its metadata what the checks read: the uid, ``creationTimestamp`` (which
    orders claimants of a node) and the source label (which the errors quote).
    """
    meta = obj.get("metadata") or {}
    labels = meta.get("labels") or {}
    return (
        obj.get("spec"),
        meta.get("uid"),
        meta.get("creationTimestamp"),
        labels.get(NETWORK_TOPOLOGY_SOURCE_LABEL),
    )


def origin(obj: JSON | None) -> str:
    """``discovered by <source>`` for a HyperNode a discovery source owns, else ``made by hand``."""
    labels = ((obj or {}).get("metadata") or {}).get("labels") or {}
    source = labels.get(NETWORK_TOPOLOGY_SOURCE_LABEL)
    return f"discovered by {source}" if source else "made by hand"


def _created(obj: JSON | None) -> str:
    """``metadata.creationTimestamp`` (RFC 3339 sorts as text); "" when unknown (sorts first)."""
    meta = (obj or {}).get("metadata") or {}
    stamp = meta.get("creationTimestamp")
    return stamp if isinstance(stamp, str) else ""


def _cycles(names: list[str], children: Mapping[str, list[str]]) -> list[list[str]]:
    """Each cycle found, as the path that closes it (iterative DFS with colours)."""
    white, grey, black = 0, 1, 2
    colour = dict.fromkeys(names, white)
    loops: list[list[str]] = []
    for start in names:
        if colour[start] != white:
            continue
        stack: list[tuple[str, int]] = [(start, 0)]
        path: list[str] = [start]
        colour[start] = grey
        while stack:
            name, i = stack[-1]
            kids = children[name]
            if i < len(kids):
                stack[-1] = (name, i + 1)
                kid = kids[i]
                if colour[kid] == grey:
                    loops.append([*path[path.index(kid) :], kid])
                elif colour[kid] == white:
                    colour[kid] = grey
                    stack.append((kid, 0))
                    path.append(kid)
            else:
                colour[name] = black
                stack.pop()
                path.pop()
    return loops


def _real_nodes(
    names: list[str],
    children: Mapping[str, list[str]],
    direct_nodes: Mapping[str, set[str]],
    nodes: set[str],
) -> dict[str, frozenset[str]]:
    """Existing nodes under each HyperNode (memoised post-order; cycles contribute nothing)."""
    result: dict[str, frozenset[str]] = {}
    # A module-level function over explicit state, not a closure that calls itself: that
    # would be a function <-> cell cycle left to the (rarely full) cyclic collector.
    visit = functools.partial(_visit_real_nodes, result, set(), children, direct_nodes, nodes)
    for name in names:
        if name not in result:
            _iterative_visit(name, children, visit)
    return result


def _visit_real_nodes(
    result: dict[str, frozenset[str]],
    visiting: set[str],
    children: Mapping[str, list[str]],
    direct_nodes: Mapping[str, set[str]],
    nodes: set[str],
    name: str,
) -> frozenset[str]:
    done = result.get(name)
    if done is not None:
        return done
    if name in visiting:
        return frozenset()
    visiting.add(name)
    acc = set(direct_nodes.get(name, ())) & nodes
    for kid in children[name]:
        acc |= _visit_real_nodes(result, visiting, children, direct_nodes, nodes, kid)
    visiting.discard(name)
    result[name] = frozenset(acc)
    return result[name]


def _iterative_visit(root: str, children: Mapping[str, list[str]], visit: Any) -> None:
    """Visit deep trees bottom-up first so ``visit`` never recurses deeply."""
    order: list[str] = []
    stack = [root]
    seen: set[str] = set()
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        order.append(name)
        stack.extend(children[name])
    for name in reversed(order):
        visit(name)


def _node_chains(
    infos: Mapping[str, HyperNodeInfo], node_parents: Mapping[str, list[str]], nodes: set[str]
) -> dict[str, tuple[str, ...]]:
    """Per node, the HyperNodes containing it from the lowest tier up to the virtual top."""
    chains: dict[str, tuple[str, ...]] = {}
    for node in nodes:
        chain: list[str] = []
        leaves = node_parents.get(node)
        current = sorted(leaves)[0] if leaves else CLUSTER_TOP_HYPERNODE
        while current and current not in chain:
            chain.append(current)
            current = infos[current].parent if current in infos else ""
        if chain[-1] != CLUSTER_TOP_HYPERNODE:
            chain.append(CLUSTER_TOP_HYPERNODE)
        chains[node] = tuple(chain)
    return chains
