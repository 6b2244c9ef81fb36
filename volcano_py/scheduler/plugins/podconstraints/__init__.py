"""kube-scheduler's InterPodAffinity and PodTopologySpread, inside ``predicates`` / ``nodeorder``.

Volcano runs kube-scheduler's own plugins inside its ``predicates`` and ``nodeorder``
plugins; this package is our version of those two, with kube-scheduler v1.37's semantics
and reason wording:

- ``terms``: a pod's affinity terms and spread constraints read and checked;
- ``placed``: the session's placed pods and the journal that keeps counts current while
  statements allocate and discard (a gang's own pods count, as kube counts assumed pods);
  one per session, shared by the filters and the scores (``placed_pods``);
- ``interpodaffinity`` / ``topologyspread``: the counts, the filters and the scores.

``PodFilters`` is what ``predicates`` calls after its own checks, ``PodScores`` what
``nodeorder`` registers as its batch node order. Both keep their counts per kind of pod
(everything the counts depend on: namespace, labels, terms, node selection), so the 50 pods
of a gang share one scan. A pod with no terms in a cluster where no placed pod holds
required anti-affinity is answered from a dictionary lookup.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

import orjson

from volcano_py.api import JSON
from volcano_py.scheduler.api.node_info import NodeInfo
from volcano_py.scheduler.api.task_info import TaskInfo
from volcano_py.scheduler.api.wake_hints import ClusterEvent
from volcano_py.scheduler.framework.arguments import Arguments
from volcano_py.scheduler.framework.session import Session
from volcano_py.scheduler.plugins.podconstraints.interpodaffinity import (
    REASON_AFFINITY,
    AffinityCounts,
    AffinityScores,
)
from volcano_py.scheduler.plugins.podconstraints.placed import placed_pods
from volcano_py.scheduler.plugins.podconstraints.terms import (
    DO_NOT_SCHEDULE,
    NO_TERMS,
    SCHEDULE_ANYWAY,
    PodTerms,
    SpreadConstraint,
    TermError,
    pod_terms,
    spread_constraints,
)
from volcano_py.scheduler.plugins.podconstraints.topologyspread import (
    REASON_SPREAD,
    REASON_SPREAD_LABEL,
    SpreadCounts,
    SpreadScores,
)

log = logging.getLogger(__name__)

SCORE_WEIGHTS = {"podaffinity.weight": 2, "podtopologyspread.weight": 2}


@dataclass(slots=True)
class _Pod:
    """What one pending pod asks, read once per session."""

    pod: JSON
    error: str | None = None
    terms: PodTerms = NO_TERMS
    hard: tuple[SpreadConstraint, ...] = ()
    soft: tuple[SpreadConstraint, ...] = ()
    affinity: AffinityCounts | AffinityScores | None = None
    spread: SpreadCounts | SpreadScores | None = None

    @property
    def unfiltered(self) -> bool:
        """Nothing of its own for the filters: no error, no hard spread, no required term."""
        return self.error is None and not self.hard and not self.terms.required


# pods with neither inter-pod terms nor spread constraints share this reading (never changed)
PLAIN = _Pod({})


def _read(task: TaskInfo) -> _Pod:
    if not task.pod_constraints:
        return PLAIN
    entry = _Pod(task.pod)
    try:
        entry.terms = pod_terms(task.pod)
    except TermError as err:
        entry.error = f"pod has an invalid inter-pod affinity term: {err}"
        return entry
    try:
        constraints = spread_constraints(task.pod)
    except TermError as err:
        entry.error = f"pod has an invalid topology spread constraint: {err}"
        return entry
    entry.hard = tuple(c for c in constraints if c.when_unsatisfiable == DO_NOT_SCHEDULE)
    entry.soft = tuple(c for c in constraints if c.when_unsatisfiable == SCHEDULE_ANYWAY)
    return entry


def _kind(task: TaskInfo, spread: bool) -> str:
    """Everything the counts of ``task`` depend on, as text (pods alike share counts)."""
    meta = task.pod.get("metadata") or {}
    spec = task.pod.get("spec") or {}
    parts: list[Any] = [task.namespace, meta.get("labels"), spec.get("affinity")]
    if spread:
        parts += [spec.get("topologySpreadConstraints"), spec.get("nodeSelector")]
        parts.append(spec.get("tolerations"))
    return orjson.dumps(parts, option=orjson.OPT_SORT_KEYS).decode()


State = TypeVar("State")


def _shared(table: dict[str, State], kind: str, build: Callable[[], State]) -> State:
    """The counts of pods of ``kind``, made by ``build`` the first time one asks."""
    state = table.get(kind)
    if state is None:
        state = table[kind] = build()
    return state


def _add_weighted(total: dict[str, float], scores: dict[str, float], weight: int) -> None:
    for name, score in scores.items():
        total[name] = total.get(name, 0.0) + weight * score


class _PerPod:
    """Each pending pod's reading, cached by pod for the session."""

    def __init__(self, ssn: Session, required_anti: bool) -> None:
        """``required_anti``: only placed pods' required anti-affinity matters (filters)."""
        self.placed = placed_pods(ssn)
        self._required_anti = required_anti
        self._pods: dict[str, _Pod] = {}
        self._seen = 0  # journal entries looked at by ``_placed_with_terms``
        self._with_terms: bool | None = None
        # the journal's length when no placed pod was found holding terms (-1: one was)
        self.quiet_at = -1

    def entry(self, task: TaskInfo) -> _Pod:
        """``task``'s reading: ``PLAIN`` while it has no terms and no placed pod has any."""
        entry = self._pods.get(task.key)
        if entry is None:
            entry = self._pods[task.key] = _read(task)
        if entry is PLAIN and self.quiet_at != len(self.placed.journal):
            if not self._placed_with_terms():
                self.quiet_at = len(self.placed.journal)
            else:  # its own reading, to hold its counts
                entry = self._pods[task.key] = _Pod(task.pod)
        return entry

    def _placed_with_terms(self) -> bool:
        """Whether some placed pod (or one placed since) holds inter-pod terms."""
        placed = self.placed
        if self._with_terms is None:
            self._with_terms = any(self._holds(task) for _, task in placed.pods(with_affinity=True))
        journal = placed.journal
        if not self._with_terms and self._seen < len(journal):
            self._with_terms = any(
                delta > 0 and self._holds(task) for task, _, delta in journal[self._seen :]
            )
        self._seen = len(journal)
        return self._with_terms

    def _holds(self, task: TaskInfo) -> bool:
        terms = self.placed.terms(task)
        return bool(terms.anti_affinity) if self._required_anti else terms is not NO_TERMS


class PodFilters(_PerPod):
    """The InterPodAffinity and PodTopologySpread filters of one session."""

    def __init__(self, ssn: Session) -> None:
        """Follow ``ssn``'s placements."""
        super().__init__(ssn, required_anti=True)
        self._affinity: dict[str, AffinityCounts] = {}
        self._spread: dict[str, SpreadCounts] = {}
        # kube's EventsToRegister for these checks: a pod placed (or relabelled) may be the
        # one an affinity term waits for, or raise the smallest spread domain; a pod leaving
        # (POD_FREED) and a Node's labels changing (NODE_CHANGED) wake every job already
        for reason in (REASON_AFFINITY, REASON_SPREAD, REASON_SPREAD_LABEL):
            ssn.wake_hints.add_for_node_reason(reason, (ClusterEvent.POD_PLACED,))

    def reason(self, task: TaskInfo, node: NodeInfo) -> str | None:
        """Why ``task`` may not go to ``node`` by these two filters (None: it may)."""
        entry = self._pods.get(task.key)
        if entry is None or entry is PLAIN:
            entry = self.entry(task)
            if entry is PLAIN:
                return None
        if entry.unfiltered and not self.placed.with_affinity:
            return None  # soft constraints only, and no placed pod holds terms
        if entry.error is not None:
            return entry.error
        if entry.hard:
            spread = entry.spread
            if not isinstance(spread, SpreadCounts):
                spread = entry.spread = _shared(
                    self._spread,
                    _kind(task, spread=True),
                    partial(SpreadCounts, self.placed, task, entry.hard),
                )
            reason = spread.reason(node)
            if reason is not None:
                return reason
        affinity = entry.affinity
        if not isinstance(affinity, AffinityCounts):
            if not entry.terms.required and (
                not self.placed.with_affinity or not self._placed_with_terms()
            ):
                return None
            affinity = entry.affinity = _shared(
                self._affinity,
                _kind(task, spread=False),
                partial(AffinityCounts, self.placed, task, entry.terms),
            )
        return affinity.reason(node)


class PodScores(_PerPod):
    """The InterPodAffinity and PodTopologySpread scores of one session, weighted."""

    def __init__(self, ssn: Session, weights: dict[str, int]) -> None:
        """Follow ``ssn``'s placements; ``weights`` as read by ``score_weights``."""
        super().__init__(ssn, required_anti=False)
        self.affinity_weight = weights["podaffinity.weight"]
        self.spread_weight = weights["podtopologyspread.weight"]
        self._affinity: dict[str, AffinityScores] = {}
        self._spread: dict[str, SpreadScores] = {}

    def scores(self, task: TaskInfo, nodes: list[NodeInfo]) -> dict[str, float]:
        """Weighted preferred inter-pod affinity and soft spread scores of ``nodes``."""
        if not task.pod_constraints and not self.placed.with_affinity:
            return {}  # the common case
        entry = self.entry(task)
        if entry is PLAIN or entry.error is not None:
            return {}
        total: dict[str, float] = {}
        if entry.soft and self.spread_weight:
            _add_weighted(total, self._spread_scores(task, entry).scores(nodes), self.spread_weight)
        if self.affinity_weight and (entry.terms.preferred or self._placed_with_terms()):
            scores = self._affinity_scores(task, entry).scores(nodes)
            _add_weighted(total, scores, self.affinity_weight)
        return total

    def _spread_scores(self, task: TaskInfo, entry: _Pod) -> SpreadScores:
        if not isinstance(entry.spread, SpreadScores):
            build = partial(SpreadScores, self.placed, task, entry.soft)
            entry.spread = _shared(self._spread, _kind(task, spread=True), build)
        return entry.spread

    def _affinity_scores(self, task: TaskInfo, entry: _Pod) -> AffinityScores:
        if not isinstance(entry.affinity, AffinityScores):
            build = partial(AffinityScores, self.placed, task, entry.terms)
            entry.affinity = _shared(self._affinity, _kind(task, spread=False), build)
        return entry.affinity


def score_weights(args: Arguments) -> dict[str, int]:
    """``podaffinity.weight`` and ``podtopologyspread.weight`` (negative: the default, logged)."""
    weights = {}
    for key, default in SCORE_WEIGHTS.items():
        value = args.get_int(key, default)
        if value < 0:
            args.warn(log, "plugin nodeorder: %s=%d is negative, using %d", key, value, default)
            value = default
        weights[key] = value
    return weights


__all__ = ["PodFilters", "PodScores", "score_weights"]
