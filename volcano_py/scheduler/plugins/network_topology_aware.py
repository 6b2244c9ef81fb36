"""``network-topology-aware``: HyperNode gradients, HyperNode and node scores for topology jobs.

Behaviour from the design doc (``001``) and Volcano's plugin:

- **Gradients** for jobs and SubJobs, with the resource pre-filter: ``hypernode_gradient``
  (a mixin of this class).
- **HyperNode score**: binpack ``(used + request) / allocatable`` per weighted resource
  (cpu, memory, ``hypernode.binpack.resources``), 0 when a resource would overflow; ties at
  the top broken by the share of the job's tasks already inside; times 100 x ``weight``.
  For a SubJob: its own request and its own tasks. ``request`` is what the job (or SubJob)
  still has pending: ``used`` already holds its placed tasks. Volcano sums every task, so a
  rescheduled job counts its running pods twice: its own rack looks fuller than it is, or
  overflows and scores 0, and replacements are pushed away from their partition.
- **Node score**, topology jobs (for a partitioned job: the task's SubJob when it has a
  topology, with the SubJob's allocated HyperNode and tasks): 1 on the allocated HyperNode,
  else ``(maxTier - tier(LCA)) / (maxTier - minTier)``, task-count tie break, x 100 x ``weight``.
  Normal pods (``hypernode.binpack.normal-pod.enable``): per tier the binpack score of the
  HyperNode holding the node (1 when none), weighted ``fading^(tier-1)``, averaged — summed
  in closed form over the tiers that exist, so a tree of tiers 1 and 1000 costs what tiers 1
  and 2 do (Volcano loops over every integer between them).
- **Resource cache** per HyperNode (allocatable, used, idle, future idle), kept by the
  allocate/deallocate event handlers through each node's HyperNode chain (O(depth), where
  Volcano's loop visits every HyperNode).
"""

from __future__ import annotations

import logging
import math
from collections import Counter

from volcano_py.api.constants import (
    CLUSTER_TOP_HYPERNODE,
    NETWORK_TOPOLOGY_AWARE_PLUGIN,
    NTA_ARG_BINPACK_CPU,
    NTA_ARG_BINPACK_MEMORY,
    NTA_ARG_BINPACK_NORMAL_POD_ENABLE,
    NTA_ARG_BINPACK_NORMAL_POD_FADING,
    NTA_ARG_BINPACK_RESOURCES,
    NTA_ARG_EVICT_MAX_HYPERNODES,
    NTA_ARG_WEIGHT,
)
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.node_info import NodeInfo
from volcano_py.scheduler.api.resource import CPU, MEMORY
from volcano_py.scheduler.api.sub_job_info import SubJobInfo
from volcano_py.scheduler.api.task_info import OCCUPYING, TaskInfo, TaskStatus
from volcano_py.scheduler.framework.arguments import Arguments
from volcano_py.scheduler.framework.interface import EventHandler
from volcano_py.scheduler.framework.session import DEFAULT_EVICT_MAX_HYPERNODES, Session
from volcano_py.scheduler.plugins.support.hypernode_gradient import HyperNodeGradients
from volcano_py.scheduler.plugins.support.hypernode_resources import (
    ResourceStatus,
    build_resource_cache,
)

log = logging.getLogger(__name__)

MAX_NODE_SCORE = 100.0
FULL_SCORE = 1.0
ZERO_SCORE = 0.0
DEFAULT_WEIGHT = 1
DEFAULT_NORMAL_POD_ENABLE = True
DEFAULT_NORMAL_POD_FADING = 0.8


def _weight(args: Arguments, key: str) -> int:
    value = args.get_int(key, DEFAULT_WEIGHT)
    if value < 0:
        args.warn(
            log,
            "plugin %s: %s=%d is negative, using %d",
            NETWORK_TOPOLOGY_AWARE_PLUGIN,
            key,
            value,
            DEFAULT_WEIGHT,
        )
        return DEFAULT_WEIGHT
    return value


class NetworkTopologyAwarePlugin(HyperNodeGradients):
    """The plugin; one instance per session."""

    name = NETWORK_TOPOLOGY_AWARE_PLUGIN

    def __init__(self, args: Arguments) -> None:
        """Read the arguments with Volcano's defaults and fallbacks (each logged)."""
        self.global_weight = _weight(args, NTA_ARG_WEIGHT)
        self.binpack_weights: dict[str, int] = {
            CPU: _weight(args, NTA_ARG_BINPACK_CPU),
            MEMORY: _weight(args, NTA_ARG_BINPACK_MEMORY),
        }
        extra = args.get_str(NTA_ARG_BINPACK_RESOURCES, "")
        for raw in extra.split(","):
            resource = raw.strip()
            if resource:
                self.binpack_weights[resource] = _weight(
                    args, f"{NTA_ARG_BINPACK_RESOURCES}.{resource}"
                )
        self.evict_max_hypernodes = args.get_int(
            NTA_ARG_EVICT_MAX_HYPERNODES, DEFAULT_EVICT_MAX_HYPERNODES
        )
        if self.evict_max_hypernodes < 1:
            raise ValueError(f"{NTA_ARG_EVICT_MAX_HYPERNODES} must be at least 1")
        self.normal_pod_enable = args.get_bool(
            NTA_ARG_BINPACK_NORMAL_POD_ENABLE, DEFAULT_NORMAL_POD_ENABLE
        )
        fading = args.get_float(NTA_ARG_BINPACK_NORMAL_POD_FADING, DEFAULT_NORMAL_POD_FADING)
        if fading < 0:
            args.warn(
                log,
                "plugin %s: %s=%g is negative, using %g",
                self.name,
                NTA_ARG_BINPACK_NORMAL_POD_FADING,
                fading,
                DEFAULT_NORMAL_POD_FADING,
            )
            fading = DEFAULT_NORMAL_POD_FADING
        self.fading = fading
        self.min_tier = 0
        self.max_tier = 0
        self.resource_cache: dict[str, ResourceStatus] = {}
        self._task_counts: dict[str, Counter[str]] = {}
        self._lca_scores: dict[str, dict[str, float]] = {}
        self._ssn: Session | None = None

    # -- session ----------------------------------------------------------------------------

    def on_session_open(self, ssn: Session) -> None:
        """Build the resource cache and register the extension points."""
        self._ssn = ssn
        ssn.evict_max_hypernodes = self.evict_max_hypernodes
        tiers = ssn.hypernode_tiers
        self.min_tier, self.max_tier = (tiers[0], tiers[-1]) if tiers else (0, 0)
        self.init_hypernode_resource_cache(ssn)
        ssn.add_hypernode_order_fn(self.name, self.hypernode_order_fn)
        ssn.add_batch_node_order_fn(self.name, self.batch_node_order_fn)
        ssn.add_hypernode_gradient_for_job_fn(self.name, self.hypernode_gradient_for_job)
        ssn.add_hypernode_gradient_for_sub_job_fn(self.name, self.hypernode_gradient_for_sub_job)
        ssn.add_event_handler(EventHandler(self._on_allocate, self._on_deallocate))

    def on_session_close(self, ssn: Session) -> None:
        """Drop per-session state."""
        self.resource_cache = {}
        self._task_counts = {}
        self._ssn = None

    def init_hypernode_resource_cache(self, ssn: Session) -> None:
        """Aggregate every HyperNode's real nodes (one pass over the node chains).

        A session with no job has nothing to score or place: its cache stays empty (an idle
        cycle at 10,000 racks spent most of its time here).
        """
        self.resource_cache = build_resource_cache(ssn) if ssn.jobs else {}

    def _job_counts(self, job: JobInfo) -> Counter[str]:
        counts = self._task_counts.get(job.key)
        if counts is None:
            assert self._ssn is not None
            chains = self._ssn.tree.node_chain
            counts = Counter()
            for task in job.tasks.values():
                if task.status in OCCUPYING and task.node_name:
                    counts.update(chains.get(task.node_name, ()))
            self._task_counts[job.key] = counts
        return counts

    def _counts(self, tasks: dict[str, TaskInfo]) -> Counter[str]:
        """Placed tasks per HyperNode (a SubJob's: small, counted on demand)."""
        assert self._ssn is not None
        chains = self._ssn.tree.node_chain
        counts: Counter[str] = Counter()
        for task in tasks.values():
            if task.status in OCCUPYING and task.node_name:
                counts.update(chains.get(task.node_name, ()))
        return counts

    def _on_allocate(self, task: TaskInfo) -> None:
        assert self._ssn is not None
        chain = self._ssn.tree.node_chain.get(task.node_name, ())
        for hn in chain:
            status = self.resource_cache.get(hn)
            if status is not None:
                status.used.add(task.resreq)
                status.idle.sub(task.resreq)
                status.future_idle.sub(task.resreq)
        if task.job in self._task_counts:
            self._task_counts[task.job].update(chain)

    def _on_deallocate(self, task: TaskInfo) -> None:
        assert self._ssn is not None
        chain = self._ssn.tree.node_chain.get(task.node_name, ())
        for hn in chain:
            status = self.resource_cache.get(hn)
            if status is not None:
                status.used.sub(task.resreq)
                status.idle.add(task.resreq)
                status.future_idle.add(task.resreq)
        if task.job in self._task_counts:
            self._task_counts[task.job].subtract(chain)

    # -- scores -------------------------------------------------------------------------------

    def hypernode_order_fn(
        self,
        job: JobInfo,
        hypernodes: dict[str, list[NodeInfo]],
        sub_job: SubJobInfo | None = None,
    ) -> dict[str, float]:
        """Binpack score per HyperNode with the task-count tie break (of the SubJob), scaled."""
        tasks = job.tasks if sub_job is None else sub_job.tasks
        request: dict[str, int] = {}
        for task in tasks.values():
            if task.status != TaskStatus.PENDING:
                continue  # placed: already in the HyperNodes' used resources
            for name, amount in task.resreq.items():
                if name in self.binpack_weights:
                    request[name] = request.get(name, 0) + amount
        scores: dict[str, float] = {}
        for hn in hypernodes:
            status = self.resource_cache.get(hn)
            scores[hn] = ZERO_SCORE if status is None else self._binpack(request, status)
        if scores:
            best = max(scores.values())
            top = [hn for hn, s in scores.items() if s == best]
            if len(top) > 1:
                counts = self._job_counts(job) if sub_job is None else self._counts(tasks)
                total = len(tasks)
                for hn in top:
                    scores[hn] += counts.get(hn, 0) / total if total else FULL_SCORE
        return self.scale(scores)

    def _binpack(self, request: dict[str, int], status: ResourceStatus) -> float:
        total_score = 0.0
        total_weight = 0
        for name, amount in request.items():
            weight = self.binpack_weights[name]
            allocatable = status.allocatable.get(name)
            used = status.used.get(name)
            if used + amount > allocatable:
                return ZERO_SCORE
            total_score += weight * (used + amount) / allocatable
            total_weight += weight
        return total_score / total_weight if total_weight > 0 else ZERO_SCORE

    def batch_node_order_fn(self, task: TaskInfo, nodes: list[NodeInfo]) -> dict[str, float]:
        """LCA-tier scores for topology jobs, fading binpack for normal pods; scaled."""
        assert self._ssn is not None
        job = self._ssn.jobs.get(task.job)
        sub_job = job.sub_job_of(task) if job is not None and job.policies else None
        if sub_job is not None and sub_job.with_network_topology():
            scores = self._network_aware_scores(job, nodes, sub_job)  # type: ignore[arg-type]
        elif sub_job is None and job is not None and job.with_network_topology():
            scores = self._network_aware_scores(job, nodes)
        else:
            scores = self._normal_pod_scores(task, nodes)
        return self.scale(scores)

    def _network_aware_scores(
        self, job: JobInfo, nodes: list[NodeInfo], sub_job: SubJobInfo | None = None
    ) -> dict[str, float]:
        allocated = job.allocated_hypernode if sub_job is None else sub_job.allocated_hypernode
        if not allocated:
            return {}
        assert self._ssn is not None
        tree = self._ssn.tree
        by_leaf = self._lca_scores.setdefault(allocated, {})
        chains = tree.node_chain
        scores: dict[str, float] = {}
        for node in nodes:
            chain = chains.get(node.name)
            leaf = chain[0] if chain else CLUSTER_TOP_HYPERNODE
            score = by_leaf.get(leaf)
            if score is None:
                score = self.network_topology_aware_score(leaf, allocated)
                by_leaf[leaf] = score
            scores[node.name] = score
        if scores:
            best = max(scores.values())
            top = [n for n, s in scores.items() if s == best]
            if len(top) > 1:
                tasks = job.tasks if sub_job is None else sub_job.tasks
                counts = self._job_counts(job) if sub_job is None else self._counts(tasks)
                total = len(tasks)
                for name in top:
                    leaf = tree.leaf_of(name)
                    scores[name] += counts.get(leaf, 0) / total if total else FULL_SCORE
        return scores

    def network_topology_aware_score(self, hypernode: str, allocated: str) -> float:
        """1 on the allocated HyperNode, else the LCA tier's place between min and max tier."""
        if not hypernode or not allocated:
            return ZERO_SCORE
        if hypernode == allocated:
            return FULL_SCORE
        assert self._ssn is not None
        lca = self._ssn.tree.lca(hypernode, allocated)
        info = self._ssn.hypernodes.get(lca)
        return ZERO_SCORE if info is None else self.score_with_tier(info.tier)

    def score_with_tier(self, tier: int) -> float:
        """``(maxTier - tier) / (maxTier - minTier)`` in [0, 1]."""
        if self.min_tier == self.max_tier:
            return FULL_SCORE
        if self.min_tier <= tier <= self.max_tier:
            return (self.max_tier - tier) / (self.max_tier - self.min_tier)
        return ZERO_SCORE

    def _normal_pod_scores(self, task: TaskInfo, nodes: list[NodeInfo]) -> dict[str, float]:
        """Volcano's per-tier average, over the tiers a node's chain holds (O(depth) a node).

        Every tier ``t`` in ``[min_tier, max_tier]`` weighs ``fading^(t-1)`` and scores 1 when
        the node has no HyperNode there, so a node's sum is the whole range's weight plus, for
        each HyperNode on its chain, ``weight * (score - 1)``; the range's weight is a
        geometric sum in closed form. The cost never depends on the distance between tiers.
        """
        assert self._ssn is not None
        ssn = self._ssn
        if not self.normal_pod_enable or len(ssn.hypernodes) <= 1:
            # no HyperNode but the virtual cluster top, which every node's chain ends in:
            # every node would score the same
            return {}
        total_weight = _tier_weight_sum(self.fading, self.min_tier, self.max_tier)
        if not total_weight > 0 or math.isinf(total_weight):
            ssn.notes.warning(
                log,
                f"plugin/{self.name}",
                "plugin %s: total tier weight is %g",
                self.name,
                total_weight,
            )
            return {}
        hn_score: dict[str, float] = {}
        scores: dict[str, float] = {}
        for node in nodes:
            per_tier = {
                ssn.hypernodes[hn].tier: hn for hn in ssn.tree.node_chain.get(node.name, ())
            }
            total = total_weight
            for tier, hn in per_tier.items():
                if not self.min_tier <= tier <= self.max_tier:
                    continue
                score = hn_score.get(hn, -1.0)
                if score < 0:
                    score = self._pod_binpack(task, hn)
                    hn_score[hn] = score
                total += _tier_weight(self.fading, tier) * (score - FULL_SCORE)
            scores[node.name] = total / total_weight
        return scores

    def _pod_binpack(self, task: TaskInfo, hn: str) -> float:
        status = self.resource_cache.get(hn)
        if status is None:
            return ZERO_SCORE
        request = {n: a for n, a in task.resreq.items() if n in self.binpack_weights}
        return self._binpack(request, status)

    def scale(self, scores: dict[str, float]) -> dict[str, float]:
        """Times ``MaxNodeScore`` (100) times ``weight``."""
        factor = MAX_NODE_SCORE * self.global_weight
        return {name: factor * score for name, score in scores.items()}


def _tier_weight(fading: float, tier: int) -> float:
    """``fading^(tier-1)``; 0 where that is undefined (``fading`` 0 and ``tier`` < 1)."""
    if fading == 0:
        return 1.0 if tier == 1 else 0.0
    try:
        return float(fading ** (tier - 1))
    except OverflowError:
        return math.inf


def _tier_weight_sum(fading: float, low: int, high: int) -> float:
    """``sum(fading^(t-1) for t in low..high)`` in closed form (a geometric series)."""
    if high < low:
        return 0.0
    if fading == 1:
        return float(high - low + 1)
    if fading == 0:
        return 1.0 if low <= 1 <= high else 0.0
    try:
        return (fading ** (low - 1) - fading**high) / (1 - fading)
    except OverflowError:
        return math.inf
