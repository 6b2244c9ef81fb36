"""InterPodAffinity as kube-scheduler v1.37 decides it: the filter and the preferred score.

Filter (for one incoming pod, over its counts ``AffinityCounts``):

- **required affinity**: the node must carry every term's ``topologyKey``, and some placed
  pod matching *all* the terms must sit in the node's domain for each of them; when no
  placed pod anywhere matches them, a pod that matches its own terms may start the group
  (its first replica) -> ``node(s) didn't match pod affinity rules``;
- **required anti-affinity**: no placed pod matching a term in the node's domain of that
  term -> ``node(s) didn't match pod anti-affinity rules``;
- **the symmetric rule**: no placed pod whose own required anti-affinity term matches the
  incoming pod may sit in the node's domain of that term ->
  ``node(s) didn't satisfy existing pods anti-affinity rules``.

One deliberate difference: an anti-affinity term of the incoming pod whose ``topologyKey``
no node carries (a typo, most likely) refuses every node with a reason naming the key;
kube-scheduler lets it refuse nothing, which places the pod as if it had no term.

Score (``affinity_scores``): per topology pair, the weights of the incoming pod's preferred
terms matching placed pods (anti-affinity negative), plus placed pods' preferred terms and
required affinity terms (``hardPodAffinityWeight`` 1) matching the incoming pod; a node
scores the sum over its labels, then min-max normalised to 0-100 over the candidates.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from volcano_py.scheduler.api.node_info import NodeInfo
from volcano_py.scheduler.api.task_info import TaskInfo
from volcano_py.scheduler.plugins.podconstraints.placed import CountedState, PlacedPods
from volcano_py.scheduler.plugins.podconstraints.terms import AffinityTerm, PodTerms

REASON_AFFINITY = "node(s) didn't match pod affinity rules"
REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
REASON_UNKNOWN_KEY = (
    "pod's required anti-affinity term has topologyKey {!r}, a label no node carries"
)
HARD_POD_AFFINITY_WEIGHT = 1
MAX_NODE_SCORE = 100

Pair = tuple[str, str]


def _bump(counts: Counter[Pair], labels: Mapping[str, str], key: str, delta: int) -> None:
    value = labels.get(key)
    if value is not None:
        pair = (key, value)
        counts[pair] += delta
        if not counts[pair]:
            del counts[pair]


class AffinityCounts(CountedState):
    """One incoming pod's filter counts (kube's InterPodAffinity PreFilter state)."""

    def __init__(self, placed: PlacedPods, task: TaskInfo, terms: PodTerms) -> None:
        """Count the placed pods for ``task`` (its ``terms`` already checked)."""
        super().__init__(placed)
        self.pod = task.pod
        self.terms = terms
        self.namespace = task.namespace
        self.existing_anti: Counter[Pair] = Counter()
        self.affinity: Counter[Pair] = Counter()
        self.anti: Counter[Pair] = Counter()
        self._by_theirs: dict[int, tuple[PodTerms, tuple[str, ...]]] = {}
        self._by_labels: dict[tuple[int, str], tuple[Any, bool, tuple[str, ...]]] = {}
        ns_labels = placed.ns_labels
        self.self_affinity = bool(terms.affinity) and all(
            t.matches(task.pod, ns_labels) for t in terms.affinity
        )
        for node, other in placed.pods(with_affinity=not terms.required):
            self.update(other, node, 1)
        # bad input: kube-scheduler lets an anti-affinity term over a key no node has refuse
        # nothing, so the pod would go as if it had no term; here it waits, saying why
        known = placed.label_keys() if terms.anti_affinity else set()
        missing = [t.topology_key for t in terms.anti_affinity if t.topology_key not in known]
        self.bad_key = REASON_UNKNOWN_KEY.format(missing[0]) if missing else None

    def update(self, task: TaskInfo, node: NodeInfo, delta: int) -> None:
        """Count one placed pod in or out."""
        labels = node.labels
        if task.pod_affinity:
            for key in self._theirs(self.placed.terms(task)):
                _bump(self.existing_anti, labels, key, delta)
        matches_all, anti_keys = self._mine(task)
        if matches_all:
            for term in self.terms.affinity:
                _bump(self.affinity, labels, term.topology_key, delta)
        for key in anti_keys:
            _bump(self.anti, labels, key, delta)

    def _theirs(self, theirs: PodTerms) -> tuple[str, ...]:
        """The keys of a placed pod's anti-affinity terms that match the incoming pod.

        Memoised by the placed pod's terms, which the pods of a workload share.
        """
        known = self._by_theirs.get(id(theirs))
        if known is None or known[0] is not theirs:
            ns_labels = self.placed.ns_labels
            keys = tuple(
                t.topology_key for t in theirs.anti_affinity if t.matches(self.pod, ns_labels)
            )
            known = self._by_theirs[id(theirs)] = (theirs, keys)
        return known[1]

    def _mine(self, task: TaskInfo) -> tuple[bool, tuple[str, ...]]:
        """Whether a placed pod matches all the affinity terms; the anti terms' keys it matches.

        Memoised by the placed pod's labels object (shared by a workload's pods) and namespace.
        """
        terms = self.terms
        if not terms.required:
            return False, ()
        meta = task.pod.get("metadata") or {}
        labels = meta.get("labels")
        key = (id(labels), task.namespace)
        known = self._by_labels.get(key)
        if known is None or known[0] is not labels:
            ns_labels = self.placed.ns_labels
            pod = task.pod
            every = bool(terms.affinity) and all(t.matches(pod, ns_labels) for t in terms.affinity)
            anti = tuple(t.topology_key for t in terms.anti_affinity if t.matches(pod, ns_labels))
            known = self._by_labels[key] = (labels, every, anti)
        return known[1], known[2]

    def reason(self, node: NodeInfo) -> str | None:
        """Why the incoming pod may not go to ``node`` (None: it may)."""
        if self.bad_key is not None:
            return self.bad_key
        self.sync()
        labels = node.labels
        if self.terms.affinity and not self._affinity_holds(labels):
            return REASON_AFFINITY
        if self.anti:
            for term in self.terms.anti_affinity:
                value = labels.get(term.topology_key)
                if value is not None and self.anti.get((term.topology_key, value), 0) > 0:
                    return REASON_ANTI_AFFINITY
        if self.existing_anti:
            existing = self.existing_anti
            for pair in labels.items():
                if existing.get(pair, 0) > 0:
                    return REASON_EXISTING_ANTI_AFFINITY
        return None

    def _affinity_holds(self, labels: Mapping[str, str]) -> bool:
        pods_exist = True
        for term in self.terms.affinity:
            value = labels.get(term.topology_key)
            if value is None:
                return False
            if self.affinity.get((term.topology_key, value), 0) <= 0:
                pods_exist = False
        if pods_exist:
            return True
        # no matching pod anywhere: the first pod of a self-affine group may go
        return not self.affinity and self.self_affinity


class AffinityScores(CountedState):
    """One incoming pod's preferred-affinity sums per topology pair (kube's PreScore)."""

    def __init__(self, placed: PlacedPods, task: TaskInfo, terms: PodTerms) -> None:
        """Sum over the placed pods for ``task``."""
        super().__init__(placed)
        self.pod = task.pod
        self.terms = terms
        self.sums: dict[str, Counter[str]] = {}
        for node, other in placed.pods(with_affinity=not terms.preferred):
            self.update(other, node, 1)

    def _add(self, term: AffinityTerm, weight: int, labels: Mapping[str, str]) -> None:
        value = labels.get(term.topology_key)
        if value is not None:
            self.sums.setdefault(term.topology_key, Counter())[value] += weight

    def update(self, task: TaskInfo, node: NodeInfo, delta: int) -> None:
        """Add or take away one placed pod's contributions."""
        labels = node.labels
        if not labels:
            return
        ns_labels = self.placed.ns_labels
        for term in self.terms.preferred_affinity:
            if term.matches(task.pod, ns_labels):
                self._add(term, term.weight * delta, labels)
        for term in self.terms.preferred_anti_affinity:
            if term.matches(task.pod, ns_labels):
                self._add(term, -term.weight * delta, labels)
        if not task.pod_affinity:
            return
        theirs = self.placed.terms(task)
        for term in theirs.affinity:
            if term.matches(self.pod, ns_labels):
                self._add(term, HARD_POD_AFFINITY_WEIGHT * delta, labels)
        for term in theirs.preferred_affinity:
            if term.matches(self.pod, ns_labels):
                self._add(term, term.weight * delta, labels)
        for term in theirs.preferred_anti_affinity:
            if term.matches(self.pod, ns_labels):
                self._add(term, -term.weight * delta, labels)

    def scores(self, nodes: list[NodeInfo]) -> dict[str, float]:
        """Normalised 0-100 scores of ``nodes`` (empty when no pair has a sum)."""
        self.sync()
        if not any(self.sums.values()):
            return {}
        raw = {}
        for node in nodes:
            total = 0
            for key, values in self.sums.items():
                value = node.labels.get(key)
                if value is not None:
                    total += values.get(value, 0)
            raw[node.name] = total
        low, high = min(raw.values(), default=0), max(raw.values(), default=0)
        spread = high - low
        if spread <= 0:
            return dict.fromkeys(raw, 0.0)
        return {n: float(int(MAX_NODE_SCORE * ((s - low) / spread))) for n, s in raw.items()}
