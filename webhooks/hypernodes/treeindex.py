"""The tree checks read from an index the informer keeps, not from a walk of every HyperNode.

Who calls it: ``HyperNodeValidator`` (the webhook and ``volcano-py validate``). The walk in
``tree.py`` builds every HyperNode's edges for each review: ~71 ms a review at ~2,000 racks,
so label discovery's racks appeared at 7-10 a second (issue 44). Here four store indexes,
kept by the informer's ``Store`` in the same lock as its items (so always consistent with
them), answer what a review needs:

- ``NODE_EXACT``: Node name -> the HyperNodes selecting it by ``exactMatch``;
- ``NODE_FUZZY``: the HyperNodes with a ``regexMatch``/``labelMatch`` Node member (they may
  overlap anything, so every review checks them);
- ``MEMBER_EXACT``: HyperNode name -> the HyperNodes selecting it by ``exactMatch``;
- ``MEMBER_PATTERN``: the HyperNodes with a ``regexMatch`` HyperNode member.

A review then costs O(its own members + its ancestors + the fuzzy HyperNodes), whatever
the tree's size; an object with a fuzzy Node member, or a ``regexMatch`` HyperNode member,
still reads every name (what it selects depends on all of them). The decisions are the
walk's (``tree.graph_checks`` and ``tree.node_claims`` are shared; a property test compares
the two on random trees); a cycle is found upwards, from the object's ancestors, and then
named by the walk's own depth-first path (a denial: it may read the object's subtree).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from volcano_py.api.regex import re2_search
from webhooks.hypernodes.tree import (
    JSON,
    HyperNodeLister,
    TreeResult,
    cycle_path,
    forget_deleted,
    graph_checks,
    label_match_denial,
    name_of,
    node_claims,
    node_selectors,
    selectors,
)

NODE_EXACT = "hypernode-tree:node-exact"
NODE_FUZZY = "hypernode-tree:node-fuzzy"
MEMBER_EXACT = "hypernode-tree:member-exact"
MEMBER_PATTERN = "hypernode-tree:member-pattern"
ANY = "*"


def _node_exact(obj: JSON) -> list[str]:
    return sorted(node_selectors(obj, stored=False).exact)


def _node_fuzzy(obj: JSON) -> list[str]:
    found = node_selectors(obj, stored=False)
    return [ANY] if found.patterns or found.labels or found.expressions else []


def _member_exact(obj: JSON) -> list[str]:
    return sorted({s.exact for s in selectors(obj) if s.exact is not None})


def _member_pattern(obj: JSON) -> list[str]:
    return [ANY] if any(s.pattern is not None for s in selectors(obj)) else []


INDEXERS: dict[str, Callable[[JSON], Iterable[str]]] = {
    NODE_EXACT: _node_exact,
    NODE_FUZZY: _node_fuzzy,
    MEMBER_EXACT: _member_exact,
    MEMBER_PATTERN: _member_pattern,
}


class IndexedLister(HyperNodeLister, Protocol):
    """A lister with the store's indexes (an informer ``Store`` fits)."""

    def list_keys(self) -> list[str]:
        """Every name."""
        ...

    def index_keys(self, index: str, value: str) -> list[str]:
        """The names whose ``index`` function produced ``value``."""
        ...

    def __len__(self) -> int: ...

    def __contains__(self, key: object) -> bool: ...


def add_tree_indexes(lister: Any) -> bool:
    """Give ``lister`` the tree indexes when it can hold them; whether it has them now."""
    add = getattr(lister, "add_indexers", None)
    if add is None or not hasattr(lister, "index_keys"):
        return False
    for name, function in INDEXERS.items():
        with contextlib.suppress(ValueError):  # already there (a second validator, same store)
            add({name: function})
    return True


def check_tree_indexed(obj: JSON, lister: IndexedLister) -> TreeResult:
    """``tree.check_tree``'s verdict for ``obj``, read from ``lister``'s tree indexes."""
    result = TreeResult()
    result.denial = label_match_denial(obj)
    if result.denial is not None:
        return result
    name = name_of(obj)
    forget_deleted(lister)
    own = node_selectors(obj, stored=False)
    if own.patterns or own.labels or own.expressions:
        candidates: Iterable[str] = lister.list_keys()
    else:
        found = set(lister.index_keys(NODE_FUZZY, ANY))
        for node in own.exact:
            found.update(lister.index_keys(NODE_EXACT, node))
        candidates = found
    others = {}
    for other in candidates:
        stored = lister.get(other) if other and other != name else None
        if stored is not None:
            others[other] = stored
    if node_claims(obj, others, result):
        return result
    return graph_checks(obj, IndexedGraph(lister, obj), result)


class IndexedGraph:
    """``tree.TreeGraph`` over the indexes, with ``obj`` in place of its stored version."""

    def __init__(self, lister: IndexedLister, obj: JSON) -> None:
        """The graph of ``lister``'s HyperNodes with ``obj`` under review."""
        self._lister = lister
        self._obj = obj
        self._name = name_of(obj)
        own = selectors(obj)
        self._own_exact = {s.exact for s in own if s.exact is not None}
        self._own_patterns = [s.pattern for s in own if s.pattern is not None]
        self._children: list[str] | None = None

    def get(self, name: str) -> JSON | None:
        """``obj`` for its own name, else the stored HyperNode."""
        if name == self._name:
            return self._obj
        found: JSON | None = self._lister.get(name)
        return found

    def children(self, name: str) -> list[str]:
        """What ``name`` selects (read for the object under review only)."""
        own = name == self._name
        if own and self._children is not None:
            return self._children
        obj = self.get(name)
        chosen: set[str] = set()
        for sel in selectors(obj) if obj is not None else ():
            if sel.exact is not None:
                chosen.add(sel.exact)
            elif sel.pattern is not None:
                names = {*self._lister.list_keys(), self._name}
                chosen.update(n for n in names if re2_search(sel.pattern, n))
        found = sorted(chosen)
        if own:
            self._children = found
        return found

    def parents_of(self, targets: set[str]) -> dict[str, set[str]]:
        """For each target, the HyperNodes selecting it (the stored version of ``obj`` not)."""
        patterned = [
            (parent, sel.pattern)
            for parent in self._lister.index_keys(MEMBER_PATTERN, ANY)
            if parent != self._name and (stored := self._lister.get(parent)) is not None
            for sel in selectors(stored)
            if sel.pattern is not None
        ]
        parents: dict[str, set[str]] = {}
        for target in targets:
            found = set(self._lister.index_keys(MEMBER_EXACT, target))
            found.discard(self._name)
            found.update(p for p, pattern in patterned if re2_search(pattern, target))
            if target in self._own_exact or any(
                re2_search(pattern, target) for pattern in self._own_patterns
            ):
                found.add(self._name)
            if found:
                parents[target] = found
        return parents

    def cycle_through(self, start: str) -> list[str]:
        """``start -> ... -> start``, or empty when ``start`` is not on a cycle.

        Found upwards (``start`` among its own ancestors: the common answer, no cycle, costs
        the ancestors), then named by the walk's depth-first path.
        """
        seen = {start}
        frontier = [start]
        while frontier:
            parents_of = self.parents_of(set(frontier))
            frontier = []
            for parents in parents_of.values():
                for parent in sorted(parents):
                    if parent == start:  # a cycle: named as the walk names it (a denial)
                        return cycle_path(start, self)
                    if parent not in seen:
                        seen.add(parent)
                        frontier.append(parent)
        return []
