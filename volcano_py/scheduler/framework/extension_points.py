"""``ExtensionPoints``: the plugins' functions a session holds, registered and called in order.

Volcano's ``session_plugins.go``. Each extension point is a named function map, filled by the
plugins' ``add_*_fn`` calls at session open (a point a plugin's tier entry switches off, e.g.
``enableJobOrder: false``, is not registered) and walked in tier order, then plugin order:
job order/valid/ready, enqueue votes, predicate, node order, batch node order, HyperNode order
(per job or per SubJob), HyperNode gradients, queue order/overused/allocatable, eviction
votes and the allocate/deallocate event handlers. ``Session`` is one; actions call the
dispatchers here, never a plugin.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from volcano_py.scheduler.api.hypernode_info import HyperNodeInfo
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.node_info import NodeInfo
from volcano_py.scheduler.api.queue_info import QueueInfo
from volcano_py.scheduler.api.sub_job_info import SubJobInfo
from volcano_py.scheduler.api.task_info import TaskInfo
from volcano_py.scheduler.framework.conf import PluginOption
from volcano_py.scheduler.framework.interface import (
    PERMIT,
    AllocatableFn,
    BatchNodeOrderFn,
    EventHandler,
    EvictableFn,
    HyperNodeGradientFn,
    HyperNodeOrderFn,
    JobEnqueueableFn,
    JobEnqueuedFn,
    JobOrderFn,
    JobReadyFn,
    JobValidFn,
    NodeOrderFn,
    OverusedFn,
    PredicateFn,
    QueueOrderFn,
    SubJobGradientFn,
    ValidateResult,
    VictimFn,
)


@dataclass(slots=True)
class _Points:
    job_order: dict[str, JobOrderFn] = field(default_factory=dict)
    job_valid: dict[str, JobValidFn] = field(default_factory=dict)
    job_ready: dict[str, JobReadyFn] = field(default_factory=dict)
    job_starving: dict[str, JobReadyFn] = field(default_factory=dict)
    predicate: dict[str, PredicateFn] = field(default_factory=dict)
    node_order: dict[str, NodeOrderFn] = field(default_factory=dict)
    batch_node_order: dict[str, BatchNodeOrderFn] = field(default_factory=dict)
    hypernode_order: dict[str, HyperNodeOrderFn] = field(default_factory=dict)
    hypernode_gradient: dict[str, HyperNodeGradientFn] = field(default_factory=dict)
    sub_job_gradient: dict[str, SubJobGradientFn] = field(default_factory=dict)
    queue_order: dict[str, QueueOrderFn] = field(default_factory=dict)
    overused: dict[str, OverusedFn] = field(default_factory=dict)
    allocatable: dict[str, AllocatableFn] = field(default_factory=dict)
    job_enqueueable: dict[str, JobEnqueueableFn] = field(default_factory=dict)
    job_enqueued: dict[str, JobEnqueuedFn] = field(default_factory=dict)
    evictable: dict[str, EvictableFn] = field(default_factory=dict)
    preemptable: dict[str, VictimFn] = field(default_factory=dict)
    reclaimable: dict[str, VictimFn] = field(default_factory=dict)


class ExtensionPoints:
    """The extension points of one session, in the order of its tiers."""

    def __init__(self, tiers: Sequence[Sequence[PluginOption]]) -> None:
        """Empty points for a session configured with ``tiers``."""
        self.event_handlers: list[EventHandler] = []
        self._points = _Points()
        self._permit_only: set[str] = set()
        self._tiers: list[list[PluginOption]] = [list(t) for t in tiers]

    def drop_functions(self) -> None:
        """Forget every registered function and handler (the session is closing)."""
        self.event_handlers = []
        self._points = _Points()
        self._permit_only = set()

    # -- registration (snake_case of Volcano's AddXxxFn) -------------------------------------

    def _enabled(self, plugin: str, point: str) -> bool:
        for tier in self._tiers:
            for option in tier:
                if option.name == plugin:
                    return option.enabled(point)
        return True

    def hierarchy_enabled(self, plugin: str) -> bool:
        """Volcano's ``HierarchyEnabled``: ``enableHierarchy: true`` on the plugin's entry."""
        return any(
            option.name == plugin and "hierarchy" in option.switched_on
            for tier in self._tiers
            for option in tier
        )

    def add_job_order_fn(self, name: str, fn: JobOrderFn) -> None:
        """Register a job comparator (negative: left first)."""
        if self._enabled(name, "job_order"):
            self._points.job_order[name] = fn

    def add_job_valid_fn(self, name: str, fn: JobValidFn) -> None:
        """Register a job validity check."""
        if self._enabled(name, "job_valid"):
            self._points.job_valid[name] = fn

    def add_job_ready_fn(self, name: str, fn: JobReadyFn) -> None:
        """Register a job readiness check (gang)."""
        if self._enabled(name, "job_ready"):
            self._points.job_ready[name] = fn

    def add_job_starving_fn(self, name: str, fn: JobReadyFn) -> None:
        """Register a check that a job still asks for more (preempt/reclaim act for it)."""
        if self._enabled(name, "job_starving"):
            self._points.job_starving[name] = fn

    def add_predicate_fn(self, name: str, fn: PredicateFn) -> None:
        """Register a node filter returning a reason when the task does not fit."""
        if self._enabled(name, "predicate"):
            self._points.predicate[name] = fn

    def add_node_order_fn(self, name: str, fn: NodeOrderFn) -> None:
        """Register a per-node score."""
        if self._enabled(name, "node_order"):
            self._points.node_order[name] = fn

    def add_batch_node_order_fn(self, name: str, fn: BatchNodeOrderFn) -> None:
        """Register a score over all candidate nodes at once."""
        if self._enabled(name, "batch_node_order"):
            self._points.batch_node_order[name] = fn

    def add_hypernode_order_fn(self, name: str, fn: HyperNodeOrderFn) -> None:
        """Register a HyperNode score."""
        if self._enabled(name, "hypernode_order"):
            self._points.hypernode_order[name] = fn

    def add_hypernode_gradient_for_job_fn(self, name: str, fn: HyperNodeGradientFn) -> None:
        """Register the HyperNode gradient builder for jobs."""
        if self._enabled(name, "hypernode_gradient"):
            self._points.hypernode_gradient[name] = fn

    def add_hypernode_gradient_for_sub_job_fn(self, name: str, fn: SubJobGradientFn) -> None:
        """Register the HyperNode gradient builder for a SubJob inside its job's domain."""
        if self._enabled(name, "hypernode_gradient"):
            self._points.sub_job_gradient[name] = fn

    def add_queue_order_fn(self, name: str, fn: QueueOrderFn) -> None:
        """Register a queue order function."""
        if self._enabled(name, "queue_order"):
            self._points.queue_order[name] = fn

    def add_overused_fn(self, name: str, fn: OverusedFn) -> None:
        """Register an overused check (an overused queue gets nothing more this cycle)."""
        if self._enabled(name, "overused"):
            self._points.overused[name] = fn

    def add_allocatable_fn(self, name: str, fn: AllocatableFn) -> None:
        """Register a per-task queue quota check (run inside every allocate trial)."""
        if self._enabled(name, "allocatable"):
            self._points.allocatable[name] = fn

    def add_job_enqueueable_fn(
        self, name: str, fn: JobEnqueueableFn, *, permit_only: bool = False
    ) -> None:
        """Register a vote on Pending jobs entering their queue.

        ``permit_only``: the function never rejects (``sla``): it does not count as a
        resource check, so the registry's enqueue fallback still opens without one.
        """
        if self._enabled(name, "job_enqueueable"):
            self._points.job_enqueueable[name] = fn
            if permit_only:
                self._permit_only.add(name)

    def add_job_enqueued_fn(self, name: str, fn: JobEnqueuedFn) -> None:
        """Register a callback for a job that entered its queue this cycle."""
        self._points.job_enqueued[name] = fn

    def add_evictable_fn(self, name: str, fn: EvictableFn) -> None:
        """Register a filter on eviction candidates (Volcano's preemptable/reclaimable)."""
        if self._enabled(name, "preemptable") or self._enabled(name, "reclaimable"):
            self._points.evictable[name] = fn

    def evictable(self, candidates: list[TaskInfo]) -> list[TaskInfo]:
        """The candidates every evictable filter keeps."""
        for fn in self._points.evictable.values():
            candidates = fn(candidates)
        return candidates

    def add_preemptable_fn(self, name: str, fn: VictimFn) -> None:
        """Register a preempt victim function (``enablePreemptable``)."""
        if self._enabled(name, "preemptable"):
            self._points.preemptable[name] = fn

    def add_reclaimable_fn(self, name: str, fn: VictimFn) -> None:
        """Register a reclaim victim function (``enableReclaimable``)."""
        if self._enabled(name, "reclaimable"):
            self._points.reclaimable[name] = fn

    def preemptable(self, preemptor: TaskInfo, candidates: list[TaskInfo]) -> list[TaskInfo]:
        """The victims the plugins let ``preemptor`` take within its queue (see ``_victims``)."""
        return self._victims(self._points.preemptable, preemptor, candidates)

    def reclaimable(self, reclaimer: TaskInfo, candidates: list[TaskInfo]) -> list[TaskInfo]:
        """The victims the plugins let ``reclaimer`` take from other queues."""
        return self._victims(self._points.reclaimable, reclaimer, candidates)

    def _victims(
        self, fns: dict[str, VictimFn], preemptor: TaskInfo, candidates: list[TaskInfo]
    ) -> list[TaskInfo]:
        """Volcano's tiered vote on victims.

        In each tier the answers of the plugins that do not abstain are intersected; an empty
        answer ends the tier with no victim; the first tier with a non-empty answer decides.
        Nobody answering at all means no victim.
        """
        for tier in self._tiers:
            victims: list[TaskInfo] | None = None
            for option in tier:
                fn = fns.get(option.name)
                if fn is None:
                    continue
                answer = fn(preemptor, candidates)
                if answer is None:
                    continue
                if not answer:
                    victims = None
                    break
                if victims is None:
                    victims = list(answer)
                else:
                    keep = {t.key for t in answer}
                    victims = [t for t in victims if t.key in keep]
            if victims:
                return victims
        return []

    def add_event_handler(self, handler: EventHandler) -> None:
        """Register allocate/deallocate callbacks."""
        self.event_handlers.append(handler)

    # -- calling the extension points --------------------------------------------------------

    def _compare_jobs(self, left: JobInfo, right: JobInfo) -> int:
        for fn in self._points.job_order.values():
            result = fn(left, right)
            if result:
                return result
        if left.creation != right.creation:
            return -1 if left.creation < right.creation else 1
        return -1 if left.key < right.key else (1 if left.key > right.key else 0)

    def job_order_key(self) -> Callable[[JobInfo], Any]:
        """A sort key putting jobs in the plugins' order (priority, then age)."""
        return functools.cmp_to_key(self._compare_jobs)

    def job_valid(self, job: JobInfo) -> ValidateResult | None:
        """The first failing validity check, or None."""
        for fn in self._points.job_valid.values():
            result = fn(job)
            if result is not None and not result.passed:
                return result
        return None

    def queue_order_key(self) -> Callable[[QueueInfo], Any]:
        """A sort key putting queues in the plugins' order, then by name."""

        def compare(left: QueueInfo, right: QueueInfo) -> int:
            for fn in self._points.queue_order.values():
                result = fn(left, right)
                if result:
                    return result
            return -1 if left.name < right.name else (1 if left.name > right.name else 0)

        return functools.cmp_to_key(compare)

    @property
    def has_queue_order_fns(self) -> bool:
        """Whether any plugin orders queues."""
        return bool(self._points.queue_order)

    def overused(self, queue: QueueInfo) -> bool:
        """Any plugin finds the queue over its share."""
        return any(fn(queue) for fn in self._points.overused.values())

    def allocatable(self, queue: QueueInfo, task: TaskInfo) -> bool:
        """Every quota plugin lets ``task`` into ``queue`` now."""
        return all(fn(queue, task) for fn in self._points.allocatable.values())

    @property
    def has_allocatable_fns(self) -> bool:
        """Whether any quota plugin checks tasks (allocate skips the check otherwise)."""
        return bool(self._points.allocatable)

    def job_enqueueable(self, job: JobInfo) -> str | None:
        """None when the job may enter, else the first rejection's reason.

        Volcano's tiered vote: tier by tier, a rejection ends it (the job waits); a tier with
        a permit and no rejection admits the job without asking the later tiers; a tier of
        abstentions passes to the next. Functions outside the tiers (the registry's enqueue
        fallback) vote last.
        """
        fns = self._points.job_enqueueable
        asked: set[str] = set()
        for tier in self._tiers:
            permitted = False
            for option in tier:
                fn = fns.get(option.name)
                if fn is None:
                    continue
                asked.add(option.name)
                vote = fn(job)
                if vote == PERMIT:
                    permitted = True
                elif vote is not None:
                    return vote
            if permitted:
                return None
        for name, fn in fns.items():
            vote = None if name in asked else fn(job)
            if vote:
                return vote
        return None

    def job_enqueued(self, job: JobInfo) -> None:
        """Tell the plugins ``job`` went Pending -> Inqueue."""
        for fn in self._points.job_enqueued.values():
            fn(job)

    @property
    def has_job_enqueueable_fns(self) -> bool:
        """Whether any plugin votes on enqueue with a resource check (one that can reject)."""
        return any(name not in self._permit_only for name in self._points.job_enqueueable)

    def job_ready(self, job: JobInfo) -> bool:
        """Every readiness check passes."""
        return all(fn(job) for fn in self._points.job_ready.values())

    def job_starving(self, job: JobInfo) -> bool:
        """Whether ``job`` still asks for more, so that preempt/reclaim evict for it.

        Volcano's tiered check: the first tier with a starving function decides, and every
        function of it must agree (gang: fewer than minMember ready; priority: fewer than all
        tasks). With no such function in any tier, every job with pending tasks asks.
        """
        fns = self._points.job_starving
        for tier in self._tiers:
            votes = [fns[o.name] for o in tier if o.name in fns]
            if votes:
                return all(fn(job) for fn in votes)
        return all(fn(job) for fn in fns.values())

    def predicate(self, task: TaskInfo, node: NodeInfo) -> str | None:
        """None when the task fits the node, else the first plugin's reason."""
        for fn in self._points.predicate.values():
            reason = fn(task, node)
            if reason is not None:
                return reason
        return None

    @property
    def predicate_fns(self) -> list[PredicateFn]:
        """The predicate functions in order (the allocate loop calls them directly)."""
        return list(self._points.predicate.values())

    def node_order_scores(self, task: TaskInfo, node: NodeInfo) -> dict[str, float]:
        """Each node-order plugin's score for one node."""
        return {name: fn(task, node) for name, fn in self._points.node_order.items()}

    @property
    def node_order_fns(self) -> list[NodeOrderFn]:
        """The per-node score functions in order."""
        return list(self._points.node_order.values())

    def batch_node_scores(
        self, task: TaskInfo, nodes: list[NodeInfo]
    ) -> dict[str, dict[str, float]]:
        """Each batch plugin's scores over ``nodes``."""
        return {name: fn(task, nodes) for name, fn in self._points.batch_node_order.items()}

    def hypernode_order_map(
        self,
        job: JobInfo,
        hypernodes: dict[str, list[NodeInfo]],
        sub_job: SubJobInfo | None = None,
    ) -> dict[str, float]:
        """Total HyperNode scores (for ``sub_job`` when given) over every order plugin."""
        total = dict.fromkeys(hypernodes, 0.0)
        for fn in self._points.hypernode_order.values():
            for name, score in fn(job, hypernodes, sub_job).items():
                total[name] = total.get(name, 0.0) + score
        return total

    def hypernode_gradient_for_job(
        self, job: JobInfo, hypernode: HyperNodeInfo
    ) -> list[list[HyperNodeInfo]]:
        """The first plugin's gradients; without one, just ``[[hypernode]]``."""
        for fn in self._points.hypernode_gradient.values():
            return fn(job, hypernode)
        return [[hypernode]]

    def hypernode_gradient_for_sub_job(
        self, job: JobInfo, sub_job: SubJobInfo, domain: HyperNodeInfo
    ) -> list[list[HyperNodeInfo]]:
        """The first plugin's gradients for ``sub_job`` inside ``domain``; else ``[[domain]]``."""
        for fn in self._points.sub_job_gradient.values():
            return fn(job, sub_job, domain)
        return [[domain]]

    def fire_allocate(self, task: TaskInfo) -> None:
        """Run the allocate event handlers."""
        for handler in self.event_handlers:
            if handler.allocate_func is not None:
                handler.allocate_func(task)

    def fire_deallocate(self, task: TaskInfo) -> None:
        """Run the deallocate event handlers."""
        for handler in self.event_handlers:
            if handler.deallocate_func is not None:
                handler.deallocate_func(task)
