"""``PlacedPods``: the session's placed pods as the pod-constraint checks count them.

kube-scheduler computes, per pod and cycle, counts of matching pods per topology value
(PreFilter state), then keeps them right with ``AddPod``/``RemovePod`` while it tries
victims. Here the counts live per session and per *kind* of incoming pod (``CountedState``
subclasses, cached by what they depend on), so the pods of a gang share one scan of the
cluster. What the session places or takes away after a state was counted (a statement's
allocations, its discard, preempt's trial evictions) reaches every state through a
journal: the allocate/deallocate event handlers append ``(task, node, +1/-1)``, and a
state replays the entries it has not seen before it answers. A gang's second pod therefore
sees the first one where the statement put it, as kube-scheduler sees assumed pods, and a
discarded statement leaves no trace.

Cost: nothing is counted until a pod with constraints (or a cluster with pods holding
required anti-affinity) asks; nodes without pods holding inter-pod terms are skipped by
their ``affinity_pods`` count when only those pods matter.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from weakref import WeakKeyDictionary

from volcano_py.scheduler.api.node_info import NodeInfo
from volcano_py.scheduler.api.task_info import OCCUPYING, TaskInfo
from volcano_py.scheduler.framework.interface import EventHandler
from volcano_py.scheduler.framework.session import Session
from volcano_py.scheduler.plugins.podconstraints.terms import (
    NAMESPACE_NAME_LABEL,
    NO_TERMS,
    PodTerms,
    TermError,
    pod_terms,
)


class PlacedPods:
    """The placed pods of one session, the journal of its changes and parsed terms."""

    def __init__(self, ssn: Session) -> None:
        """Follow ``ssn``'s allocations through its event handlers."""
        self.ssn = ssn
        self.journal: list[tuple[TaskInfo, str, int]] = []
        self._terms: dict[str, PodTerms] = {}
        self._ns_labels: dict[str, Mapping[str, str]] = {}
        self._label_keys: set[str] | None = None
        # whether a placed pod may hold inter-pod terms (never reset: a hint, not a count);
        # while not, a pod without terms of its own has nothing to check
        self.with_affinity = any(node.affinity_pods for node in ssn.nodes.values())
        ssn.add_event_handler(EventHandler(self._allocated, self._deallocated))

    def _allocated(self, task: TaskInfo) -> None:
        self.journal.append((task, task.node_name, 1))
        if task.pod_affinity:
            self.with_affinity = True

    def _deallocated(self, task: TaskInfo) -> None:
        self.journal.append((task, task.node_name, -1))

    def ns_labels(self, namespace: str) -> Mapping[str, str]:
        """A namespace's labels (the name label the API server sets on every namespace)."""
        labels = self._ns_labels.get(namespace)
        if labels is None:
            labels = self._ns_labels[namespace] = {NAMESPACE_NAME_LABEL: namespace}
        return labels

    def terms(self, task: TaskInfo) -> PodTerms:
        """A placed pod's terms; invalid ones count as none (as kube's cache keeps them)."""
        if not task.pod_affinity:
            return NO_TERMS
        terms = self._terms.get(task.key)
        if terms is None:
            try:
                terms = pod_terms(task.pod)
            except TermError:
                terms = NO_TERMS
            self._terms[task.key] = terms
        return terms

    def label_keys(self) -> set[str]:
        """Every label key some node of the session carries (computed once)."""
        if self._label_keys is None:
            self._label_keys = {key for node in self.ssn.nodes.values() for key in node.labels}
        return self._label_keys

    def pods(self, *, with_affinity: bool = False) -> Iterator[tuple[NodeInfo, TaskInfo]]:
        """Every placed pod with its node (only those with inter-pod terms when asked)."""
        for node in self.ssn.nodes.values():
            if with_affinity and not node.affinity_pods:
                continue
            for task in node.tasks.values():
                if task.status in OCCUPYING and (task.pod_affinity or not with_affinity):
                    yield node, task


# each session's one PlacedPods, shared by the filters (``predicates``) and the scores
# (``nodeorder``): one journal entry per allocation, not one per user; gone with the session
_PER_SESSION: WeakKeyDictionary[Session, PlacedPods] = WeakKeyDictionary()


def placed_pods(ssn: Session) -> PlacedPods:
    """``ssn``'s ``PlacedPods``, made (and following the session) the first time one asks."""
    placed = _PER_SESSION.get(ssn)
    if placed is None:
        placed = _PER_SESSION[ssn] = PlacedPods(ssn)
    return placed


class CountedState:
    """Counts over the placed pods, kept current by replaying the session's journal."""

    def __init__(self, placed: PlacedPods) -> None:
        """Counted as of now: later journal entries are replayed on ``sync``."""
        self.placed = placed
        self.applied = len(placed.journal)

    def sync(self) -> None:
        """Apply what the session placed or took away since the counts were made."""
        journal = self.placed.journal
        if self.applied == len(journal):
            return
        nodes = self.placed.ssn.nodes
        for task, node_name, delta in journal[self.applied :]:
            node = nodes.get(node_name)
            if node is not None:
                self.update(task, node, delta)
        self.applied = len(journal)

    def update(self, task: TaskInfo, node: NodeInfo, delta: int) -> None:
        """Count (``delta`` 1) or uncount (-1) one pod on ``node``."""
        raise NotImplementedError
