"""``Session``: one scheduling cycle over a snapshot (Volcano's ``framework.Session``).

Opening a session: take the cache's snapshot (nodes are shared copy-on-write, jobs are the
session's own), take the HyperNode tree with its virtual ``<cluster-top-hypernode>``, resolve
every job's network topology (``highestTierName`` through the tierName map, soft mode,
allocated HyperNode checked and recovered from placed tasks). ``framework.open_session``
then builds the plugins of every tier and lets each register its extension point functions;
the session itself never sees a registry.

The session is state: nodes (copy-on-write through ``own_node``), jobs, queues, the tree, and
what the cycle decided (``binds``, ``job_fit``, ``evictions``, ``nominations``). The
extension points it inherits from ``ExtensionPoints`` (``extension_points.py``) are how
actions reach plugins (``job_order_key``, ``predicate``, ``job_enqueueable``, ...). Actions
mutate only through a ``Statement``; nothing here writes.
"""

from __future__ import annotations

import logging
import time

from volcano_py.api.native_groups import view_waiting
from volcano_py.kube.changelog import ChangeLog
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.node_info import NodeInfo
from volcano_py.scheduler.api.node_search import NodeSearch
from volcano_py.scheduler.api.resource import Resource
from volcano_py.scheduler.api.snapshot import Snapshot
from volcano_py.scheduler.api.task_info import OCCUPYING, TaskInfo
from volcano_py.scheduler.api.wake_hints import NO_EVENTS, WakeHints
from volcano_py.scheduler.api.work_budget import WorkBudget
from volcano_py.scheduler.framework.conf import SchedulerConf
from volcano_py.scheduler.framework.extension_points import ExtensionPoints
from volcano_py.scheduler.framework.interface import Binder, Eviction, JobFit, Plugin
from volcano_py.scheduler.framework.statement import Statement
from volcano_py.scheduler.queues import queue_infos
from volcano_py.scheduler.topology import resolve_job_topology

log = logging.getLogger(__name__)

DEFAULT_EVICT_MAX_HYPERNODES = 8
# ``queue_gate``'s reasons: a job waits for its queue (a Queue change unparks every job)
QUEUE_NOT_FOUND_REASON = "QueueNotFound"
QUEUE_NOT_OPEN_REASON = "QueueNotOpen"
# ``workload_gate``'s: a native PodGroup waits for the Workload (or template) it names
WORKLOAD_NOT_FOUND_REASON = "WorkloadNotFound"


class Session(ExtensionPoints):
    """One cycle's view of the cluster and the plugins' functions (``ExtensionPoints``)."""

    def __init__(
        self,
        snapshot: Snapshot,
        conf: SchedulerConf,
        notes: ChangeLog | None = None,
        node_search: NodeSearch | None = None,
        binder: Binder | None = None,
    ) -> None:
        """A session on ``snapshot`` with no plugin yet (``framework.open_session`` adds them).

        ``notes``: where lines about a job are logged once per change across sessions (the
        scheduler's; a fresh one, which logs everything, when None). ``binder``: where
        committed tasks go to be bound at once (none: they are only listed in ``binds``).
        """
        self.notes = notes if notes is not None else ChangeLog()
        # the configured actions: allocate admits Pending jobs itself when enqueue is not one
        self.actions = conf.actions
        # wall-clock seconds at the session's start, what creationTimestamps are compared to
        # (the sla plugin's deadlines); tests set it
        self.now = time.time()
        self.jobs = snapshot.jobs
        self.queues = snapshot.queues or queue_infos(())
        self.volumes = snapshot.volumes  # claims, PersistentVolumes, StorageClasses
        # admitted gangs short of pods: allocate defers others' surplus (``awaited_gangs``)
        self.awaited_gangs = snapshot.awaited_gangs
        self._nodes = snapshot.nodes
        self._owned: set[str] = set()
        self.tree = snapshot.tree
        self.hypernodes = snapshot.tree.hypernodes
        self.real_nodes = snapshot.tree.real_nodes
        self.hypernodes_by_tier = snapshot.tree.by_tier
        self.hypernode_tiers = snapshot.tree.tiers
        self.hypernodes_ready = snapshot.tree.ready
        self.node_names = sorted(self._nodes)
        # node_list's order, kept current by own_node (a task's search starts from it)
        self._node_list: list[NodeInfo] | None = None
        self._node_index: dict[str, int] = {}
        self._members_sorted: dict[str, list[str]] = {}
        self._largest_allocatable: Resource | None = None
        self.binds: list[TaskInfo] = []
        # told of each commit's tasks as it happens: the loop's starts their binds at once
        self.binder = binder
        # how many feasible nodes a task's search finds (the scheduler's, kept across cycles)
        self.node_search = node_search or NodeSearch()
        # node trials spent placing, and the budget of one job's turn (``api/work_budget``)
        self.work = WorkBudget()
        self.job_fit: dict[str, JobFit] = {}
        # preempt/reclaim decisions: victims, and the HyperNode nominated for each preemptor
        self.evictions: list[Eviction] = []
        self.nominations: dict[str, str] = {}
        self.nominated_nodes: dict[str, dict[str, str]] = {}  # job -> {task: node}
        # pods whose eviction the API server refused lately (a PodDisruptionBudget)
        self.unevictable = binder.unevictable() if binder is not None else frozenset()
        # JobFit reason -> the cluster events that can un-park a job parked for it: the
        # checks declare them (plugins in on_session_open; ``api/wake_hints.py``)
        self.wake_hints = WakeHints()
        for reason in (QUEUE_NOT_FOUND_REASON, QUEUE_NOT_OPEN_REASON):
            self.wake_hints.declare(reason, NO_EVENTS)  # ``queue_gate``
        # the Workload's arrival changes the job's own view (the cache un-parks it)
        self.wake_hints.declare(WORKLOAD_NOT_FOUND_REASON, NO_EVENTS)
        # domains preempt/reclaim evaluate per job (network-topology-aware's
        # ``hypernode.gradient.evict.max-hypernodes``)
        self.evict_max_hypernodes = DEFAULT_EVICT_MAX_HYPERNODES
        # past the gangs' minimums, allocate re-chooses the queue after every task (hdrf)
        self.one_task_per_turn = False
        ExtensionPoints.__init__(self, conf.tiers)
        for job in self.jobs.values():
            resolve_job_topology(job, self.tree, self._nodes, self.notes)
        # the opened plugins, in tier order (``framework.open_session`` fills it)
        self.plugins: list[Plugin[Session]] = []

    # -- nodes -----------------------------------------------------------------------------

    @property
    def nodes(self) -> dict[str, NodeInfo]:
        """Every node by name (read-only; change them through a Statement)."""
        return self._nodes

    def own_node(self, name: str) -> NodeInfo:
        """The session's private copy of a node, made on first write (copy-on-write)."""
        if name not in self._owned:
            node = self._nodes[name] = self._nodes[name].clone()
            self._owned.add(name)
            if self._node_list is not None:
                self._node_list[self._node_index[name]] = node
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
        """Every node, by name (a fresh list over the session's current copies)."""
        if self._node_list is None:
            nodes = self._nodes
            self._node_list = [nodes[n] for n in self.node_names]
            self._node_index = {n: i for i, n in enumerate(self.node_names)}
        return list(self._node_list)

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

    def queue_gate(self, job: JobInfo) -> JobFit | None:
        """Why ``job``'s queue keeps it out (missing or not Open), naming the queue."""
        queue = self.queues.get(job.queue)
        if queue is None:
            message = f"queue {job.queue!r} of the PodGroup does not exist"
            return JobFit(QUEUE_NOT_FOUND_REASON, message)
        if not queue.is_open():
            message = f"queue {job.queue!r} is {queue.state.value}, not Open"
            return JobFit(QUEUE_NOT_OPEN_REASON, message)
        return None

    def workload_gate(self, job: JobInfo) -> JobFit | None:
        """Why a native PodGroup waits for the Workload or template it names, or None.

        The cache's view of the group says so while its ``spec.workloadRef`` names a
        Workload that is not cached, or a template that Workload does not list
        (``api/native_groups.workload_problem``); nothing of such a group is placed.
        """
        waiting = view_waiting(job.podgroup)
        return JobFit(WORKLOAD_NOT_FOUND_REASON, waiting) if waiting else None

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
        """Let go of the plugins and their functions (``framework.close_session`` calls it).

        Plugins keep the session and the session keeps their functions (bound methods and
        closures over it): a reference cycle that holds the whole snapshot, every job, task
        and pod of the cycle. Left to the cyclic collector, the cycles that outlive a young
        pass wait for a full one, which this process makes rare (``kube/runtime.py``), and
        the churn soak saw them pile up (``bench/bench_churn.py``). Dropping the functions
        here frees a closed session by reference counting. What the cycle decided (binds,
        fits, evictions, nominations) stays readable; the extension points do not.
        """
        self.plugins = []
        self.drop_functions()
