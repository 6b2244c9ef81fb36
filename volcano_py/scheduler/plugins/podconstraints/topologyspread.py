"""PodTopologySpread as kube-scheduler v1.37 decides it: DoNotSchedule filter, soft score.

Domains are the values of a constraint's ``topologyKey`` on the nodes that carry every
key of the pod's constraints (of that kind) and pass the constraint's node inclusion
policies (``nodeAffinityPolicy`` Honor: the pod's nodeSelector and required node affinity;
``nodeTaintsPolicy`` Honor: its tolerations of NoSchedule/NoExecute taints). A domain counts
the placed pods of the incoming pod's namespace, not terminating, that the selector matches.

- **Filter** (``SpreadCounts``): a node without a constraint's key is refused with
  ``node(s) didn't match pod topology spread constraints (missing required label)``; else
  ``count(node's domain) + (1 if the pod matches its own selector) - min`` must not exceed
  ``maxSkew``, where ``min`` is the smallest domain count, or 0 while there are fewer
  domains than ``minDomains`` -> ``node(s) didn't match pod topology spread constraints``.
- **Score** (``SpreadScores``, ScheduleAnyway): per node, the sum over constraints of
  ``count * log(domains among the candidates + 2) + maxSkew - 1`` (a hostname constraint
  counts the node's own pods), rounded; then ``100 * (max + min - score) / max`` over the
  candidates, 0 for a candidate missing a key.
"""

from __future__ import annotations

import math
from collections import Counter

from volcano_py.scheduler.api.node_info import NodeInfo
from volcano_py.scheduler.api.task_info import OCCUPYING, TaskInfo
from volcano_py.scheduler.plugins.podconstraints.placed import CountedState, PlacedPods
from volcano_py.scheduler.plugins.podconstraints.terms import SpreadConstraint
from volcano_py.scheduler.plugins.support.node_affinity import (
    selector_and_affinity_match,
    untolerated_taint,
)

REASON_SPREAD = "node(s) didn't match pod topology spread constraints"
REASON_SPREAD_LABEL = REASON_SPREAD + " (missing required label)"
HOSTNAME = "kubernetes.io/hostname"
MAX_NODE_SCORE = 100


class _Domains(CountedState):
    """Per constraint, matching placed pods per domain value, over the eligible nodes."""

    def __init__(
        self, placed: PlacedPods, task: TaskInfo, constraints: tuple[SpreadConstraint, ...]
    ) -> None:
        super().__init__(placed)
        self.pod = task.pod
        self.namespace = task.namespace
        self.constraints = constraints
        self.counts: list[Counter[str]] = [Counter() for _ in constraints]
        self._eligible: dict[str, tuple[bool, ...]] = {}
        for node in placed.ssn.nodes.values():
            included = self._included(node)
            for i, constraint in enumerate(constraints):
                if included[i]:
                    value = node.labels[constraint.topology_key]
                    self.counts[i][value] += 0  # a domain, even with no pod yet
        for node, other in placed.pods():
            self.update(other, node, 1)

    def _included(self, node: NodeInfo) -> tuple[bool, ...]:
        """Per constraint, whether ``node`` is in its domains (cached per node)."""
        known = self._eligible.get(node.name)
        if known is not None:
            return known
        labels = node.labels
        if not all(c.topology_key in labels for c in self.constraints):
            known = (False,) * len(self.constraints)
        else:
            affinity = taints = None
            flags = []
            for c in self.constraints:
                ok = True
                if c.honor_node_affinity:
                    if affinity is None:
                        affinity = selector_and_affinity_match(self.pod, node.name, labels)
                    ok = affinity
                if ok and c.honor_node_taints:
                    if taints is None:
                        taints = untolerated_taint(self.pod, node.taints) is None
                    ok = taints
                flags.append(ok)
            known = tuple(flags)
        self._eligible[node.name] = known
        return known

    def update(self, task: TaskInfo, node: NodeInfo, delta: int) -> None:
        """Count one placed pod in or out of its node's domains."""
        included = None
        for i, constraint in enumerate(self.constraints):
            if constraint.counts(task.pod, self.namespace):
                if included is None:
                    included = self._included(node)
                if included[i]:
                    self.counts[i][node.labels[constraint.topology_key]] += delta


class SpreadCounts(_Domains):
    """The DoNotSchedule constraints' counts of one incoming pod (kube's PreFilter state)."""

    def __init__(
        self, placed: PlacedPods, task: TaskInfo, constraints: tuple[SpreadConstraint, ...]
    ) -> None:
        """Count the domains for ``task``'s hard constraints."""
        super().__init__(placed, task, constraints)
        labels = (task.pod.get("metadata") or {}).get("labels") or {}
        self.self_match = tuple(int(c.selects(labels)) for c in constraints)
        self._minimum: list[int | None] = [None] * len(constraints)

    def update(self, task: TaskInfo, node: NodeInfo, delta: int) -> None:
        """Count one pod in or out; the cached minimum is recomputed when next asked."""
        super().update(task, node, delta)
        self._minimum = [None] * len(self.constraints)

    def _min(self, i: int) -> int:
        minimum = self._minimum[i]
        if minimum is None:
            counts = self.counts[i]
            few = len(counts) < self.constraints[i].min_domains
            minimum = 0 if few else min(counts.values())
            self._minimum[i] = minimum
        return minimum

    def reason(self, node: NodeInfo) -> str | None:
        """Why the incoming pod may not go to ``node`` (None: it may)."""
        self.sync()
        labels = node.labels
        for i, constraint in enumerate(self.constraints):
            value = labels.get(constraint.topology_key)
            if value is None:
                return REASON_SPREAD_LABEL
            skew = self.counts[i].get(value, 0) + self.self_match[i] - self._min(i)
            if skew > constraint.max_skew:
                return REASON_SPREAD
        return None


class SpreadScores(_Domains):
    """The ScheduleAnyway constraints' counts of one incoming pod (kube's PreScore state)."""

    def __init__(
        self, placed: PlacedPods, task: TaskInfo, constraints: tuple[SpreadConstraint, ...]
    ) -> None:
        """Count the domains for ``task``'s soft constraints."""
        self._node_values: dict[str, tuple[str, ...] | None] = {}
        super().__init__(placed, task, constraints)

    def _on_node(self, constraint: SpreadConstraint, node: NodeInfo) -> int:
        return sum(
            1
            for t in node.tasks.values()
            if t.status in OCCUPYING and constraint.counts(t.pod, self.namespace)
        )

    def _values(self, node: NodeInfo) -> tuple[str, ...] | None:
        """The node's value of each constraint's key; None when it lacks one (cached)."""
        name = node.name
        if name in self._node_values:
            return self._node_values[name]
        labels = node.labels
        keys = [c.topology_key for c in self.constraints]
        known = tuple(labels[k] for k in keys) if all(k in labels for k in keys) else None
        self._node_values[name] = known
        return known

    def scores(self, nodes: list[NodeInfo]) -> dict[str, float]:
        """Normalised 0-100 scores of ``nodes``."""
        self.sync()
        constraints = self.constraints
        kept = [(n, v) for n in nodes if (v := self._values(n)) is not None]
        weights = []
        for i, c in enumerate(constraints):
            size = len(kept) if c.topology_key == HOSTNAME else len({v[i] for _, v in kept})
            weights.append(math.log(size + 2))
        raw: dict[str, int] = {}
        for node, values in kept:
            score = 0.0
            for i, c in enumerate(constraints):
                if c.topology_key == HOSTNAME:
                    count = self._on_node(c, node)
                else:
                    count = self.counts[i].get(values[i], 0)
                score += count * weights[i] + (c.max_skew - 1)
            raw[node.name] = math.floor(score + 0.5)  # Go's math.Round (score >= 0)
        out = dict.fromkeys((n.name for n in nodes), 0.0)
        if not raw:
            return out
        low, high = min(raw.values()), max(raw.values())
        for name, score in raw.items():
            if high == 0:
                out[name] = float(MAX_NODE_SCORE)
            else:
                out[name] = float(MAX_NODE_SCORE * (high + low - score) // high)
        return out
