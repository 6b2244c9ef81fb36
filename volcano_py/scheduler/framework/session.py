"""``Session``: one scheduling cycle over a snapshot (Volcano's ``framework.Session``).

Opening a session: take the cache's snapshot (nodes are shared copy-on-write, jobs are the
session's own), take the HyperNode tree with its virtual ``<cluster-top-hypernode>``, resolve
every job's network topology (``highestTierName`` through the tierName map, soft mode,
allocated HyperNode checked and recovered from placed tasks), then build the plugins of every
tier and let each register its extension point functions.

Extension points are named function maps, walked in tier order then plugin order:
job order/valid/ready, predicate, node order, batch node order, hypernode order (per job or
per SubJob), hypernode gradient for job and for SubJob, event handlers
(allocate/deallocate). Actions use the helpers here (``job_order_key``, ``predicate``,
``node_scores``, ...) and mutate only through a ``Statement``. Committed allocations
collect in ``binds``; nothing here writes.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from volcano_py.kube.changelog import ChangeLog
from volcano_py.metrics import PLUGIN_SCHEDULING_LATENCY
from volcano_py.scheduler.api.hypernode_info import HyperNodeInfo, HyperNodeTree
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.node_info import NodeInfo
from volcano_py.scheduler.api.queue_info import QueueInfo
from volcano_py.scheduler.api.resource import Resource
from volcano_py.scheduler.api.sub_job_info import SubJobInfo
from volcano_py.scheduler.api.task_info import OCCUPYING, TaskInfo
from volcano_py.scheduler.framework.arguments import Arguments
from volcano_py.scheduler.framework.conf import PluginOption, SchedulerConf
from volcano_py.scheduler.framework.statement import Statement
from volcano_py.scheduler.queues import queue_infos
from volcano_py.scheduler.topology import resolve_job_topology

if TYPE_CHECKING:
    from volcano_py.scheduler.framework.registry import Plugin, PluginRegistry

log = logging.getLogger(__name__)

DEFAULT_EVICT_MAX_HYPERNODES = 8

JobOrderFn = Callable[[JobInfo, JobInfo], int]
JobValidFn = Callable[[JobInfo], "ValidateResult | None"]
JobReadyFn = Callable[[JobInfo], bool]
PredicateFn = Callable[[TaskInfo, NodeInfo], "str | None"]
NodeOrderFn = Callable[[TaskInfo, NodeInfo], float]
BatchNodeOrderFn = Callable[[TaskInfo, list[NodeInfo]], dict[str, float]]
# scores HyperNodes for a job, or for one of its SubJobs when the third argument is given
HyperNodeOrderFn = Callable[
    [JobInfo, dict[str, list[NodeInfo]], "SubJobInfo | None"], dict[str, float]
]
HyperNodeGradientFn = Callable[[JobInfo, HyperNodeInfo], list[list[HyperNodeInfo]]]
SubJobGradientFn = Callable[[JobInfo, SubJobInfo, HyperNodeInfo], list[list[HyperNodeInfo]]]
QueueOrderFn = Callable[[QueueInfo, QueueInfo], int]
OverusedFn = Callable[[QueueInfo], bool]
AllocatableFn = Callable[[QueueInfo, TaskInfo], bool]
# a vote on a Pending job entering its queue: None abstains, else why not (Volcano's Permit/Reject)
JobEnqueueableFn = Callable[[JobInfo], "str | None"]
# the candidates a plugin lets an eviction (preempt/reclaim) take
EvictableFn = Callable[[list[TaskInfo]], list[TaskInfo]]
# a plugin's answer on preempt/reclaim victims: None abstains, else the candidates it permits
VictimFn = Callable[[TaskInfo, list[TaskInfo]], "list[TaskInfo] | None"]


@dataclass(frozen=True, slots=True)
class ValidateResult:
    """Why a job cannot be scheduled at all (Volcano's ``api.ValidateResult``)."""

    passed: bool
    reason: str = ""
    message: str = ""


@dataclass(slots=True)
class EventHandler:
    """Called after a statement allocates or deallocates a task."""

    allocate_func: Callable[[TaskInfo], None] | None = None
    deallocate_func: Callable[[TaskInfo], None] | None = None


@dataclass(slots=True)
class Snapshot:
    """What the cache hands a session (see ``SchedulerCache.snapshot``)."""

    nodes: dict[str, NodeInfo]
    jobs: dict[str, JobInfo]
    tree: HyperNodeTree
    # each job's change counter when the snapshot was taken (``SchedulerCache.settle``)
    job_versions: dict[str, int] = field(default_factory=dict)
    queues: dict[str, QueueInfo] = field(default_factory=dict)


@dataclass(slots=True)
class JobFit:
    """Why a job was not placed this cycle, for the PodGroup condition and events."""

    reason: str
    message: str


@dataclass(slots=True)
class _Points:
    job_order: dict[str, JobOrderFn] = field(default_factory=dict)
    job_valid: dict[str, JobValidFn] = field(default_factory=dict)
    job_ready: dict[str, JobReadyFn] = field(default_factory=dict)
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
    job_enqueued: dict[str, Callable[[JobInfo], None]] = field(default_factory=dict)
    evictable: dict[str, EvictableFn] = field(default_factory=dict)
    preemptable: dict[str, VictimFn] = field(default_factory=dict)
    reclaimable: dict[str, VictimFn] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Eviction:
    """A victim chosen by preempt/reclaim: the pod, the preempting job, the domain freed."""

    task: TaskInfo
    preemptor: str
    domain: str
    action: str


class Session:
    """One cycle's view of the cluster and the plugins' functions."""

    def __init__(
        self,
        snapshot: Snapshot,
        conf: SchedulerConf,
        plugins: PluginRegistry,
        notes: ChangeLog | None = None,
    ) -> None:
        """Open a session (see the module docstring).

        ``notes``: where lines about a job are logged once per change across sessions (the
        scheduler's; a fresh one, which logs everything, when None).
        """
        self.notes = notes if notes is not None else ChangeLog()
        self.jobs = snapshot.jobs
        self.queues = snapshot.queues or queue_infos(())
        self._nodes = snapshot.nodes
        self._owned: set[str] = set()
        self.tree = snapshot.tree
        self.hypernodes = snapshot.tree.hypernodes
        self.real_nodes = snapshot.tree.real_nodes
        self.hypernodes_by_tier = snapshot.tree.by_tier
        self.hypernode_tiers = snapshot.tree.tiers
        self.hypernode_tier_names = snapshot.tree.tier_names
        self.hypernodes_ready = snapshot.tree.ready
        self.node_names = sorted(self._nodes)
        self._members_sorted: dict[str, list[str]] = {}
        self._largest_allocatable: Resource | None = None
        self.binds: list[TaskInfo] = []
        self.job_fit: dict[str, JobFit] = {}
        # preempt/reclaim decisions: victims, and the HyperNode nominated for each preemptor
        self.evictions: list[Eviction] = []
        self.nominations: dict[str, str] = {}
        self.nominated_nodes: dict[str, dict[str, str]] = {}  # job -> {task: node}
        # pods whose eviction the API server refused lately (a PodDisruptionBudget)
        self.unevictable: frozenset[str] = frozenset()
        # domains preempt/reclaim evaluate per job (network-topology-aware's
        # ``hypernode.gradient.evict.max-hypernodes``)
        self.evict_max_hypernodes = DEFAULT_EVICT_MAX_HYPERNODES
        self.event_handlers: list[EventHandler] = []
        self._points = _Points()
        self._tiers: list[list[PluginOption]] = [list(t) for t in conf.tiers]
        for job in self.jobs.values():
            resolve_job_topology(job, self.tree, self._nodes, self.notes)
        self.plugins: list[Plugin] = []
        for tier in self._tiers:
            for option in tier:
                plugin = plugins.get(option.name)(
                    Arguments(option.name, option.arguments, self.notes)
                )
                self.plugins.append(plugin)
                started = time.perf_counter()
                plugin.on_session_open(self)
                PLUGIN_SCHEDULING_LATENCY.labels(option.name, "OnSessionOpen").observe(
                    (time.perf_counter() - started) * 1000
                )

    # -- nodes -----------------------------------------------------------------------------

    @property
    def nodes(self) -> dict[str, NodeInfo]:
        """Every node by name (read-only; change them through a Statement)."""
        return self._nodes

    def own_node(self, name: str) -> NodeInfo:
        """The session's private copy of a node, made on first write (copy-on-write)."""
        if name not in self._owned:
            self._nodes[name] = self._nodes[name].clone()
            self._owned.add(name)
        return self._nodes[name]

    def largest_allocatable(self) -> Resource:
        """Per resource, the most any one node has allocatable.

        Computed once per session: allocatable does not change within one.
        """
        if self._largest_allocatable is None:
            largest = Resource()
            for node in self._nodes.values():
                largest.max_with(node.allocatable)
            self._largest_allocatable = largest
        return self._largest_allocatable

    def node_list(self) -> list[NodeInfo]:
        """Every node, by name."""
        nodes = self._nodes
        return [nodes[n] for n in self.node_names]

    def nodes_in(self, hypernode: str) -> list[NodeInfo]:
        """The real nodes under a HyperNode, by name."""
        names = self._members_sorted.get(hypernode)
        if names is None:
            names = sorted(self.real_nodes.get(hypernode, ()))
            self._members_sorted[hypernode] = names
        nodes = self._nodes
        return [nodes[n] for n in names if n in nodes]

    def statement(self) -> Statement:
        """A new, empty statement."""
        return Statement(self)

    # -- registration (snake_case of Volcano's AddXxxFn) -------------------------------------

    def _enabled(self, plugin: str, point: str) -> bool:
        for tier in self._tiers:
            for option in tier:
                if option.name == plugin:
                    return option.enabled(point)
        return True

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

    def add_job_enqueueable_fn(self, name: str, fn: JobEnqueueableFn) -> None:
        """Register a vote on Pending jobs entering their queue."""
        if self._enabled(name, "job_enqueueable"):
            self._points.job_enqueueable[name] = fn

    def add_job_enqueued_fn(self, name: str, fn: Callable[[JobInfo], None]) -> None:
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
                    keep = {t.uid for t in answer}
                    victims = [t for t in victims if t.uid in keep]
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
        return -1 if left.uid < right.uid else (1 if left.uid > right.uid else 0)

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
        """None when no plugin rejects the job, else the first rejection's reason."""
        for fn in self._points.job_enqueueable.values():
            reason = fn(job)
            if reason is not None:
                return reason
        return None

    def job_enqueued(self, job: JobInfo) -> None:
        """Tell the plugins ``job`` went Pending -> Inqueue."""
        for fn in self._points.job_enqueued.values():
            fn(job)

    @property
    def has_job_enqueueable_fns(self) -> bool:
        """Whether any plugin votes on enqueue."""
        return bool(self._points.job_enqueueable)

    def queue_gate(self, job: JobInfo) -> JobFit | None:
        """Why ``job``'s queue keeps it out (missing or not Open), naming the queue."""
        queue = self.queues.get(job.queue)
        if queue is None:
            return JobFit("QueueNotFound", f"queue {job.queue!r} of the PodGroup does not exist")
        if not queue.is_open():
            return JobFit("QueueNotOpen", f"queue {job.queue!r} is {queue.state.value}, not Open")
        return None

    def job_ready(self, job: JobInfo) -> bool:
        """Every readiness check passes."""
        return all(fn(job) for fn in self._points.job_ready.values())

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

    # -- bookkeeping -------------------------------------------------------------------------

    def placed_lca(self, job: JobInfo) -> str:
        """The lowest HyperNode holding every placed task of the job ("" when none placed)."""
        lca = ""
        for task in job.tasks.values():
            if task.status in OCCUPYING and task.node_name:
                leaf = self.tree.leaf_of(task.node_name)
                lca = self.tree.lca(lca, leaf) if lca else leaf
        return lca

    def close(self) -> None:
        """Let plugins drop their per-session state, then let go of the plugins.

        Plugins keep the session and the session keeps their functions (bound methods and
        closures over it): a reference cycle that holds the whole snapshot, every job, task
        and pod of the cycle. Left to the cyclic collector, the cycles that outlive a young
        pass wait for a full one, which this process makes rare (``kube/runtime.py``), and
        the churn soak saw them pile up (``bench/bench_churn.py``). Dropping the functions
        here frees a closed session by reference counting. What the cycle decided (binds,
        fits, evictions, nominations) stays readable; the extension points do not.
        """
        for plugin in self.plugins:
            started = time.perf_counter()
            plugin.on_session_close(self)
            PLUGIN_SCHEDULING_LATENCY.labels(plugin.name, "OnSessionClose").observe(
                (time.perf_counter() - started) * 1000
            )
        self.plugins = []
        self.event_handlers = []
        self._points = _Points()
