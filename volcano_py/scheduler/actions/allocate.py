"""``allocate``: place pending tasks, gang by gang, topology first.

Without an ``enqueue`` action in the configuration, allocate first admits every Pending
PodGroup (Pending → Inqueue), as Volcano's allocate does: nothing else would.

Jobs (Inqueue or already Running, valid, with pending tasks) go in the plugins' job order
(priority, then age), queue by queue. **Minimum first**: a flat job (no topology, no
partition) not yet ready gets only its minimum in the first round; the flat jobs ready with
pods left (those just placed, and running gangs scaling up) get the rest in a second round,
in the same order — so every gang gets its minimum before any gang gets more (Volcano puts a
job that became ready back into its queue, behind the gangs not yet ready). With
hierarchical DRF (``Session.one_task_per_turn``) the second round goes one task per turn,
the queue re-chosen after each, as Volcano's loop does. While an admitted gang has fewer pods
than its minimum (its job controller has not created them yet) and its bounded hold runs,
there is no second round: the others' minimums are placed, their surplus waits
(``api/awaited_gangs.py``). Pods with
scheduling gates are never placed; a gang they keep below minMember is not tried and says so
(``scheduling_gates``), as is a job with a pending pod asking for DRA resource claims
(``dra_claims``) or with a PersistentVolumeClaim it cannot use yet (``volume_claims``). For
each job:

- **Partitioned jobs** (``subGroupPolicy``): ``allocate_sub_jobs``.
- **Native groups keyed by a label no HyperNode tier names**: ``allocate_label`` (within
  one value of the label, as kube-scheduler).
- **Topology jobs** (hard or soft): the hypernode gradients of the job from the virtual
  cluster top: one list per tier from the lowest tier up, after the resource pre-filter, up
  to the job's tier (hard) or the virtual top tier (soft, as Volcano HEAD). In a gradient
  every HyperNode is a candidate and the best by hypernode score wins. The score (binpack
  of the job's request over the HyperNode's cached usage, task-count tie break) is
  computed before any trial and a discarded trial leaves the cache as it was, so "try every
  HyperNode, keep the best that fits" is the same as "try them best-first, stop at the
  first that fits" — which is what runs here. A trial places the job's pending tasks on the
  HyperNode's nodes in a Statement; it is committed only when the gang is ready, else
  discarded. Nothing fits in any gradient → the job waits, with the per-tier message.
- **Other jobs**: one trial over every node; commit when the gang is ready, else discard.

Inside a trial each task gets the feasible node with the highest total score (node order +
batch node order), ties to the first by name (``placement``). ``job.allocated_hypernode``
follows the placed tasks (their lowest common HyperNode) so the topology node score pulls
the next tasks close; a discard restores it.

**Nominations** (``volcano.sh/nominated-hypernode``, set by preempt/reclaim): a nominated
job tries its HyperNode before the gradients; while it still has pending pods, the nodes of
that HyperNode are kept out of every other job's trials, so nobody takes the freed space.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

from volcano_py.api.constants import (
    NOT_ENOUGH_RESOURCES_REASON,
    PodGroupPhase,
)
from volcano_py.scheduler.actions.allocate_label import allocate_within_label
from volcano_py.scheduler.actions.allocate_sub_jobs import allocate_partitioned
from volcano_py.scheduler.actions.dra_claims import claims_fit
from volcano_py.scheduler.actions.fit_errors import (
    is_resource_reason,
    nodes_message,
    oversized_message,
    tiers_message,
)
from volcano_py.scheduler.actions.placement import (
    gang_prefix,
    place_tasks,
    tier_reports,
    without_reserved,
)
from volcano_py.scheduler.actions.pod_slots import pod_slots_fit
from volcano_py.scheduler.actions.queue_heap import QueueHeap
from volcano_py.scheduler.actions.queue_quota import queue_ordered, queue_refusal
from volcano_py.scheduler.actions.scheduling_gates import gated_fit
from volcano_py.scheduler.actions.volume_claims import volume_fit
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.node_info import NodeInfo
from volcano_py.scheduler.api.task_info import TaskStatus
from volcano_py.scheduler.api.wake_hints import NO_EVENTS
from volcano_py.scheduler.framework.interface import JobFit
from volcano_py.scheduler.framework.session import Session

log = logging.getLogger(__name__)

SCHEDULABLE_PHASES = (PodGroupPhase.INQUEUE, PodGroupPhase.RUNNING, PodGroupPhase.UNKNOWN)


class AllocateAction:
    """Gang + topology placement."""

    name = "allocate"

    def execute(self, ssn: Session) -> None:
        """Admit Pending jobs without ``enqueue``; every gang its minimum, then the rest."""
        if "enqueue" not in ssn.actions:
            admit_pending(ssn)
        jobs = [
            job
            for job in ssn.jobs.values()
            if job.phase in SCHEDULABLE_PHASES
            and any(t.status == TaskStatus.PENDING for t in job.tasks.values())  # gated too
        ]
        reserved = nominated_nodes(ssn)
        more: list[JobInfo] = []  # ready flat jobs with pods left: the second round
        over: list[JobInfo] = []  # jobs that ran out of placement budget: tried last
        # a turn is bounded to protect the jobs behind it: the last one tried, with no second
        # round and no job past its budget waiting, would only be tried again at once
        for left, job in enumerate(queue_ordered(ssn, jobs), start=1 - len(jobs)):
            if not _may_try(ssn, job):
                continue
            ssn.work.begin(job.key, bounded=bool(left or more or over))
            if _place(ssn, job, _others(reserved, job), until_ready=True):
                more.append(job)
            if ssn.work.end():
                over.append(job)
        # past the minimums: not while an admitted gang's pods are still coming (module doc)
        defer = bool(more or over) and ssn.awaited_gangs.waiting(ssn.jobs)
        if defer:
            more = []
        elif ssn.one_task_per_turn:
            _one_task_per_turn(ssn, more, reserved)
            more = []
        for left, job in enumerate(queue_ordered(ssn, more), start=1 - len(more)):
            refused = queue_refusal(ssn, job)  # the first round may have filled the queue
            if refused is not None:
                ssn.job_fit[job.key] = refused
                continue
            ssn.work.begin(job.key, bounded=bool(left or over))
            allocate_without_topology(ssn, job, _others(reserved, job))
            if ssn.work.end() and job not in over:
                over.append(job)
        # behind the rest of the queue, unbounded (``api/work_budget``)
        for job in over:
            if queue_refusal(ssn, job) is None and job.pending_tasks():
                ssn.work.begin(job.key, bounded=False)
                _place(ssn, job, _others(reserved, job), until_ready=defer)
                ssn.work.end()


def _one_task_per_turn(ssn: Session, jobs: list[JobInfo], reserved: dict[str, set[str]]) -> None:
    """The second round task by task, queues taking turns as in Volcano's allocate.

    Volcano puts a ready job back into its queue after each task and the queue back into
    its heap of queues (``queue_heap``), so with hierarchical DRF what is left after the
    minimums is split by the tree's weights rather than taken by the first job in order.
    """
    job_key = ssn.job_order_key()
    by_queue: dict[str, list[JobInfo]] = {}
    for job in jobs:
        by_queue.setdefault(job.queue, []).append(job)
    queue_key = ssn.queue_order_key()

    def key(name: str) -> Any:
        return queue_key(ssn.queues[name])

    heap = QueueHeap(lambda a, b: bool(key(a) < key(b)))
    for name in sorted(by_queue, key=key):
        heap.push(name)
    while heap:
        name = heap.pop()
        waiting = by_queue[name]
        if not waiting:
            continue  # its last job is done: the queue leaves the heap
        job = min(waiting, key=job_key)
        refused = queue_refusal(ssn, job)
        left = len(job.pending_tasks())
        if refused is None:
            ssn.work.begin(job.key, bounded=False)
            allocate_without_topology(ssn, job, _others(reserved, job), until_ready=True)
            ssn.work.end()
            if len(job.pending_tasks()) == left:  # none of its pods fits now: say why
                allocate_without_topology(ssn, job, _others(reserved, job))
        else:
            ssn.job_fit[job.key] = refused
        if refused is not None or len(job.pending_tasks()) in (0, left):
            waiting.remove(job)
        heap.push(name)


def _others(reserved: dict[str, set[str]], job: JobInfo) -> set[str]:
    """The nodes nominated for jobs other than ``job``."""
    return {n for uid, names in reserved.items() if uid != job.key for n in names}


def _place(ssn: Session, job: JobInfo, others: set[str], *, until_ready: bool) -> bool:
    """Place ``job`` by its kind; True for a ready flat job with pods left (``until_ready``)."""
    if job.has_sub_group_policy():
        allocate_partitioned(ssn, job, job.nominated_hypernode(), others)
    elif job.label_key:
        allocate_within_label(ssn, job, others)
    elif job.with_network_topology():
        allocate_with_topology(ssn, job, others)
    elif until_ready:
        return _first_round(ssn, job, others)
    else:
        allocate_without_topology(ssn, job, others)
    return False


def _first_round(ssn: Session, job: JobInfo, reserved: set[str]) -> bool:
    """A flat job's minimum; True when it is ready with pods left (for the second round)."""
    if not ssn.job_ready(job):
        committed = allocate_without_topology(ssn, job, reserved, until_ready=True)
        if not committed:
            return False
    return any(t.status == TaskStatus.PENDING for t in job.tasks.values())


def admit_pending(ssn: Session) -> None:
    """Pending -> Inqueue for every readable job (Volcano's allocate when enqueue is off)."""
    for job in ssn.jobs.values():
        if job.phase == PodGroupPhase.PENDING and not job.invalid:
            job.phase = PodGroupPhase.INQUEUE
            log.debug("job %s: Pending -> Inqueue (no enqueue action configured)", job.key)


def _may_try(ssn: Session, job: JobInfo) -> bool:
    """Valid, its queue lets it in and its topology resolved; else why not in ``job_fit``."""
    invalid = ssn.job_valid(job)
    if invalid is not None:
        ssn.job_fit[job.key] = JobFit(invalid.reason, invalid.message)
        return False
    # a gate, a DRA claim or a volume claim: none when every pod is ``TaskInfo.plain``
    plain = all(task.plain for task in job.tasks.values())
    # before the queue: no room helps a gated gang or one with DRA claims
    waits = None if plain else gated_fit(job) or claims_fit(job)
    if waits is not None:
        # only the job's own pods can lift these (a gate removed, a new pod): no
        # cluster event un-parks it (``api/wake_hints.py``)
        ssn.wake_hints.declare(waits.reason, NO_EVENTS)
        ssn.job_fit[job.key] = waits
        return False
    refused = queue_refusal(ssn, job)
    if refused is not None:
        ssn.job_fit[job.key] = refused
        return False
    if not job.has_pending_tasks():  # only gated pods of a gang that is already met
        return False
    unusable = None if plain else volume_fit(ssn, job)  # declares its own wake-up events
    if unusable is not None:
        ssn.job_fit[job.key] = unusable
        return False
    if job.topology_error:
        ssn.job_fit[job.key] = JobFit(NOT_ENOUGH_RESOURCES_REASON, job.topology_error)
        return False
    no_slots = pod_slots_fit(ssn, job)  # declares its own wake-up events
    if no_slots is not None:
        ssn.job_fit[job.key] = no_slots
        return False
    return True


def nominated_nodes(ssn: Session) -> dict[str, set[str]]:
    """Per job still waiting for its nominated HyperNode, that HyperNode's nodes."""
    out: dict[str, set[str]] = {}
    for job in ssn.jobs.values():
        name = job.nominated_hypernode()
        if name and name in ssn.real_nodes and job.pending_tasks():
            out[job.key] = set(ssn.real_nodes[name])
    return out


def allocate_without_topology(
    ssn: Session,
    job: JobInfo,
    reserved: frozenset[str] | set[str] = frozenset(),
    *,
    until_ready: bool = False,
) -> bool:
    """One trial over every node (but those reserved for others); True when committed.

    ``until_ready``: place only the gang's minimum (the first round); the pods left are
    placed in the second round, and say nothing yet.
    """
    stmt = ssn.statement()
    reasons: Counter[str] = Counter()
    nodes = ssn.node_list()
    if reserved:
        nodes = [n for n in nodes if n.name not in reserved]
    place_tasks(ssn, stmt, job, nodes, reasons, until_ready=until_ready)
    if ssn.job_ready(job):
        stmt.commit()
        if not until_ready and job.pending_tasks():  # the extra pods say why they wait
            record_fit(ssn, job, nodes_message(len(ssn.nodes), reasons), reasons)
        return True
    stmt.discard()
    record_fit(ssn, job, nodes_message(len(ssn.nodes), reasons), reasons)
    return False


def record_fit(ssn: Session, job: JobInfo, text: str, reasons: Counter[str] | None = None) -> None:
    """Why the job's pending tasks wait: a pod no node can hold first, then ``text``.

    ``reasons``: the node-level reasons behind ``text`` (their wake-up hints add up).
    """
    oversized = oversized_message(
        job.pending_tasks(), ssn.nodes.values(), ssn.largest_allocatable()
    )
    if oversized:
        text = f"{oversized}; {text}"
    ssn.job_fit[job.key] = JobFit(
        NOT_ENOUGH_RESOURCES_REASON, gang_prefix(job) + text, frozenset(reasons or ())
    )


def allocate_with_topology(
    ssn: Session, job: JobInfo, reserved: frozenset[str] | set[str] = frozenset()
) -> bool:
    """The nominated HyperNode, then gradients from the lowest tier up, best HyperNode first.

    Nodes reserved for other jobs are left out; True when committed.
    """
    top = ssn.tree.top
    reasons: Counter[str] = Counter()
    mine = job.nominated_hypernode()
    if (
        mine
        and mine in ssn.hypernodes
        and try_hypernode(ssn, job, mine, ssn.nodes_in(mine), reasons)
    ):
        return True
    gradients = ssn.hypernode_gradient_for_job(job, top)
    for gradient in gradients:
        candidates = without_reserved({hn.name: ssn.nodes_in(hn.name) for hn in gradient}, reserved)
        scores = ssn.hypernode_order_map(job, candidates)
        for name in sorted(candidates, key=lambda n: (-scores.get(n, 0.0), n)):
            if try_hypernode(ssn, job, name, candidates[name], reasons):
                return True
    _record_topology_failure(ssn, job, reasons)
    return False


def try_hypernode(
    ssn: Session, job: JobInfo, hypernode: str, nodes: list[NodeInfo], reasons: Counter[str]
) -> bool:
    """One trial inside ``hypernode``; commit when the gang is ready."""
    stmt = ssn.statement()
    before = job.allocated_hypernode
    place_tasks(ssn, stmt, job, nodes, reasons)
    if len(stmt) and ssn.job_ready(job):
        stmt.commit()
        job.allocated_hypernode = ssn.placed_lca(job)
        log.info(
            "job %s: placed in HyperNode %s, AllocatedHyperNode=%s",
            job.key,
            hypernode,
            job.allocated_hypernode,
        )
        return True
    stmt.discard()
    job.allocated_hypernode = before
    return False


def _record_topology_failure(ssn: Session, job: JobInfo, reasons: Counter[str]) -> None:
    reports = tier_reports(ssn, job)
    nodes_said = nodes_message(sum(reasons.values()), reasons) if reasons else ""
    if reasons and not any(is_resource_reason(r) for r in reasons):
        # not ready, tainted, unschedulable, wrong selector: no node took the pod for a reason
        # other than room, so that comes first and the tiers are not called "fragmented"
        for report in reports:
            report.fragmented = False
        tiers = tiers_message(reports) if reports else "no HyperNode within the allowed tier"
        record_fit(ssn, job, f"{nodes_said.rstrip('.')}; {tiers}", reasons)
        return
    text = tiers_message(reports) if reports else "no HyperNode within the allowed tier"
    if reasons and all(r.fragmented for r in reports):
        # the reasons are those of the first task that found no node in its HyperNode
        text += "; " + nodes_said
    record_fit(ssn, job, text, reasons)
