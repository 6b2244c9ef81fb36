"""``status.nodeCount``: the number of distinct real nodes under each HyperNode.

Definition (the API reference's): follow ``HyperNode`` members down the tree and count the
distinct nodes the ``Node`` members select, resolving ``exactMatch`` / ``regexMatch`` /
``labelMatch`` exactly as the scheduler does (``volcano_py.api.hypernode``) against the
current Nodes. (Volcano counts member *names* instead, so a ``regexMatch`` member counts 1.)

``NodeCountIndex`` keeps what that needs in memory and is fed by the informer handlers:

- the Nodes' labels, with an inverted ``key=value -> nodes`` index so a ``matchLabels``
  member is resolved from its smallest posting list instead of every node;
- per HyperNode: the nodes its own members select (``direct``), its resolved child
  HyperNodes and the reverse (``parents``);
- ``real`` node sets, computed on demand from ``direct`` and the children's sets, cached,
  and dropped for a HyperNode and all its ancestors when something under it changes.

A Node event only re-evaluates *that node* against the HyperNodes whose members depend on
nodes (regex/label members; exact members select their name whatever exists), so one label
change among 10,000 nodes costs a few set operations plus re-summing the affected
ancestors. Every handler returns the HyperNodes whose count may have changed; the
controller queues them, and ``NodeCountSync.sync(name)`` writes ``status.nodeCount`` with a
merge patch of the status subresource, only when it differs (no resourceVersion: the
field is ours alone, and the reconcile's condition writes never touch it), each write after
the scheduler's binds in flight, 1 s at most (a count only reports: ``kube/foreground.py``).
Cycles in a hand-made tree are cut, never followed for ever.
"""

from __future__ import annotations

import logging
import threading
from collections import defaultdict
from collections.abc import Mapping
from typing import Any, Protocol

from volcano_py.api import resources as R
from volcano_py.api.errors import FieldError
from volcano_py.api.hypernode import (
    HyperNode,
    Member,
    resolve_hypernode_members,
    resolve_node_members,
)
from volcano_py.api.meta import name_of
from volcano_py.controllers.hypernode.discovery import ReadStore
from volcano_py.kube.errors import NotFound
from volcano_py.kube.foreground import Foreground
from volcano_py.kube.verbs import Patch

log = logging.getLogger(__name__)

_EMPTY: frozenset[str] = frozenset()


class _Entry:
    """What the index knows about one HyperNode."""

    __slots__ = ("children", "direct", "exact", "node_members", "regex_children", "view")

    def __init__(self, view: HyperNode) -> None:
        self.view = view
        self.node_members = view.node_members
        self.exact = frozenset(
            m.selector.exact_match
            for m in self.node_members
            if m.selector.exact_match
            and m.selector.regex_match is None
            and m.selector.label_match is None
        )
        self.regex_children = any(
            m.selector.regex_match is not None for m in view.hypernode_members
        )
        self.direct: set[str] = set()
        self.children: set[str] = set()

    @property
    def selective(self) -> bool:
        """Whether its own node set depends on which nodes exist and their labels."""
        return self.view.selective


class NodeCountIndex:
    """In-memory node sets per HyperNode. Thread-safe. See the module docstring."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._nodes: dict[str, Mapping[str, str]] = {}
        self._by_label: dict[tuple[str, str], set[str]] = defaultdict(set)
        self._entries: dict[str, _Entry] = {}
        self._selective: set[str] = set()
        self._regex_parents: set[str] = set()
        self._parents: dict[str, set[str]] = defaultdict(set)
        self._real: dict[str, frozenset[str]] = {}

    # -- Node events --------------------------------------------------------------------

    def node_upserted(self, name: str, labels: Mapping[str, str]) -> set[str]:
        """A node was added or its labels changed; the HyperNodes whose count may change."""
        with self._lock:
            old = self._nodes.get(name)
            if old is not None and old == labels:
                return set()
            self._index_labels(name, old, labels)
            self._nodes[name] = labels
            return self._reevaluate(name, labels)

    def node_deleted(self, name: str) -> set[str]:
        """A node went away; the HyperNodes whose count may change."""
        with self._lock:
            old = self._nodes.pop(name, None)
            if old is None:
                return set()
            self._index_labels(name, old, None)
            return self._reevaluate(name, None)

    def _index_labels(
        self, name: str, old: Mapping[str, str] | None, new: Mapping[str, str] | None
    ) -> None:
        for pair in (old or {}).items():
            if new is None or new.get(pair[0]) != pair[1]:
                postings = self._by_label.get(pair)
                if postings is not None:
                    postings.discard(name)
                    if not postings:
                        del self._by_label[pair]
        for pair in (new or {}).items():
            if old is None or old.get(pair[0]) != pair[1]:
                self._by_label[pair].add(name)

    def _reevaluate(self, node: str, labels: Mapping[str, str] | None) -> set[str]:
        changed: set[str] = set()
        for hn in self._selective:
            entry = self._entries[hn]
            if labels is None:
                selected = node in entry.exact
            else:
                selected = any(m.matches_node(node, labels) for m in entry.node_members)
            if selected != (node in entry.direct):
                if selected:
                    entry.direct.add(node)
                else:
                    entry.direct.discard(node)
                changed.add(hn)
        return self._invalidate(changed)

    # -- HyperNode events ---------------------------------------------------------------

    def hypernode_upserted(self, obj: Mapping[str, Any]) -> set[str]:
        """A HyperNode was added or changed; the HyperNodes whose count may change."""
        name = name_of(obj)
        try:
            view = HyperNode.from_dict(obj)
        except FieldError as e:
            log.warning("HyperNode %s: cannot read it (%s); counting no members", name, e)
            view = HyperNode(name, 0, "", (), {}, {}, None, (), "", "")
        with self._lock:
            old = self._entries.get(name)
            if old is not None and old.view.members == view.members:
                old.view = view
                return {name}
            if old is not None:
                self._unlink(name, old)
            entry = _Entry(view)
            self._entries[name] = entry
            entry.direct = self._resolve_direct(entry)
            if entry.selective:
                self._selective.add(name)
            if entry.regex_children:
                self._regex_parents.add(name)
            self._link(name, entry)
            affected = {name}
            if old is None:  # a new name may match other HyperNodes' regex members
                affected |= self._relink_regex_parents()
            return self._invalidate(affected)

    def hypernode_deleted(self, name: str) -> set[str]:
        """A HyperNode was deleted; the HyperNodes whose count may change (not itself)."""
        with self._lock:
            entry = self._entries.pop(name, None)
            if entry is None:
                return set()
            self._unlink(name, entry)
            self._selective.discard(name)
            self._regex_parents.discard(name)
            affected = self._invalidate({name} | self._relink_regex_parents())
            self._real.pop(name, None)
            affected.discard(name)
            return affected

    def _resolve_direct(self, entry: _Entry) -> set[str]:
        direct: set[str] = set()
        for member in entry.node_members:
            direct |= resolve_node_members(member, self._candidates(member))
        return direct

    def _candidates(self, member: Member) -> Mapping[str, Mapping[str, str]]:
        """The nodes worth resolving ``member`` against (all of them, or a posting list)."""
        selector = member.selector
        label_match = selector.label_match
        if (
            label_match is not None
            and label_match.match_labels
            and selector.regex_match is None
            and selector.exact_match is None
        ):
            postings = min(
                (self._by_label.get(pair, _EMPTY) for pair in label_match.match_labels), key=len
            )
            return {node: self._nodes[node] for node in postings}
        return self._nodes

    def _link(self, name: str, entry: _Entry) -> None:
        names = self._entries.keys()
        children: set[str] = set()
        for member in entry.view.hypernode_members:
            children |= resolve_hypernode_members(member, names)
        entry.children = children
        for child in children:
            self._parents[child].add(name)

    def _unlink(self, name: str, entry: _Entry) -> None:
        for child in entry.children:
            parents = self._parents.get(child)
            if parents is not None:
                parents.discard(name)
                if not parents:
                    del self._parents[child]
        entry.children = set()

    def _relink_regex_parents(self) -> set[str]:
        changed: set[str] = set()
        for parent in self._regex_parents:
            entry = self._entries[parent]
            before = set(entry.children)
            self._unlink(parent, entry)
            self._link(parent, entry)
            if entry.children != before:
                changed.add(parent)
        return changed

    def _invalidate(self, names: set[str]) -> set[str]:
        """Drop cached sets of ``names`` and every ancestor; return them all."""
        seen: set[str] = set()
        stack = list(names)
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            self._real.pop(name, None)
            stack.extend(self._parents.get(name, ()))
        return {name for name in seen if name in self._entries}

    # -- queries ------------------------------------------------------------------------

    def node_count(self, name: str) -> int | None:
        """The number of distinct real nodes under ``name`` (None: unknown HyperNode)."""
        with self._lock:
            if name not in self._entries:
                return None
            return len(self._real_nodes(name, set()))

    def real_nodes(self, name: str) -> frozenset[str]:
        """The distinct real nodes under ``name``."""
        with self._lock:
            return self._real_nodes(name, set())

    def _real_nodes(self, name: str, path: set[str]) -> frozenset[str]:
        cached = self._real.get(name)
        if cached is not None:
            return cached
        entry = self._entries.get(name)
        if entry is None or name in path:
            return _EMPTY  # unknown child, or a cycle: cut it
        path.add(name)
        nodes = set(entry.direct)
        cut = False
        for child in entry.children:
            if child in path:
                cut = True
                continue
            nodes |= self._real_nodes(child, path)
        path.discard(name)
        result = frozenset(nodes)
        if not cut:
            self._real[name] = result
        return result

    def hypernode_names(self) -> list[str]:
        """Every HyperNode known to the index."""
        with self._lock:
            return list(self._entries)


class StatusClient(Patch, Protocol):
    """The ``KubeClient`` verb the status sync uses."""


class NodeCountSync:
    """Writes ``status.nodeCount`` when it differs from the index's count."""

    def __init__(
        self,
        client: StatusClient,
        hypernodes: ReadStore,
        index: NodeCountIndex,
        foreground: Foreground | None = None,
    ) -> None:
        """``foreground``: the binds each write first gives way to (``kube/foreground.py``)."""
        self._client = client
        self._foreground = foreground
        self._hypernodes = hypernodes
        self._index = index
        self.writes = 0

    def sync(self, name: str) -> None:
        """Bring one HyperNode's ``status.nodeCount`` up to date (the workqueue's sync)."""
        obj = self._hypernodes.get(name)
        if obj is None:
            return
        count = self._index.node_count(name)
        if count is None:
            return
        current = (obj.get("status") or {}).get("nodeCount")
        if current == count:
            return
        if self._foreground is not None:
            self._foreground.pause()  # a count only reports: binds go first
        try:
            self.writes += 1
            self._client.patch(
                R.HYPERNODES, name, {"status": {"nodeCount": count}}, subresource="status"
            )
        except NotFound:
            return
        log.debug("HyperNode %s: nodeCount %s -> %d", name, current, count)
