"""``nodeorder``: least-requested, balanced allocation and preferred node affinity scores.

The Kubernetes scheduler's formulas on a 0-100 scale, with Volcano's argument keys and
default weights: ``leastrequested.weight`` (1), ``balancedresource.weight`` (1),
``nodeaffinity.weight`` (2). A weight below zero falls back to its default (logged).

- least requested and balanced allocation: kube-scheduler's integer scores, as Volcano runs
  them (``support/resource_scores.py``), so near ties break as Volcano's do;
- preferred node affinity: matching preferred-term weight over the total weight, x 100.

Preferred inter-pod affinity and ScheduleAnyway topology spread are scored over all the
candidates at once (batch node order, ``podconstraints``), normalised as kube-scheduler does,
weighted by ``podaffinity.weight`` (2) and ``podtopologyspread.weight`` (2).

The score depends only on the node's state and the task's template, so it is cached by
(template, node) and the node's generation.
"""

from __future__ import annotations

import logging

from volcano_py.scheduler.api.node_info import NodeInfo
from volcano_py.scheduler.api.task_info import TaskInfo
from volcano_py.scheduler.framework.arguments import Arguments
from volcano_py.scheduler.framework.session import Session
from volcano_py.scheduler.plugins.podconstraints import PodScores, score_weights
from volcano_py.scheduler.plugins.support.node_affinity import preferred_affinity_score
from volcano_py.scheduler.plugins.support.resource_scores import (
    balanced_allocation,
    least_allocated,
)

log = logging.getLogger(__name__)

MAX_NODE_SCORE = 100.0
DEFAULTS = {"leastrequested.weight": 1, "balancedresource.weight": 1, "nodeaffinity.weight": 2}


class NodeOrderPlugin:
    """Per-node scores, cached by template and node generation."""

    name = "nodeorder"

    def __init__(self, args: Arguments) -> None:
        """Read the weights (negative → default, logged)."""
        self.weights: dict[str, int] = {}
        for key, default in DEFAULTS.items():
            value = args.get_int(key, default)
            if value < 0:
                args.warn(log, "plugin nodeorder: %s=%d is negative, using %d", key, value, default)
                value = default
            self.weights[key] = value
        self._cache: dict[tuple[str, str], tuple[int, float]] = {}
        self._pod_weights = score_weights(args)

    def on_session_open(self, ssn: Session) -> None:
        """Register the node order function and the inter-pod/spread batch scores."""
        ssn.add_node_order_fn(self.name, self.score)
        ssn.add_batch_node_order_fn(self.name, PodScores(ssn, self._pod_weights).scores)

    def on_session_close(self, ssn: Session) -> None:
        """Drop the cache."""
        self._cache = {}

    def score(self, task: TaskInfo, node: NodeInfo) -> float:
        """Weighted sum of the three scores."""
        key = (task.template, node.name)
        hit = self._cache.get(key)
        if hit is not None and hit[0] == node.generation:
            return hit[1]
        w = self.weights
        total = float(w["leastrequested.weight"] * least_allocated(task, node))
        total += w["balancedresource.weight"] * balanced_allocation(task, node)
        if w["nodeaffinity.weight"]:
            got, possible = preferred_affinity_score(task.pod, node.name, node.labels)
            if possible:
                total += w["nodeaffinity.weight"] * got * MAX_NODE_SCORE / possible
        self._cache[key] = (node.generation, total)
        return total
