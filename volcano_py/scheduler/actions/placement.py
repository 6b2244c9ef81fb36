"""How ``allocate`` places a gang's tasks on a set of nodes, and what it says when it cannot.

Shared by the flat path (``allocate``) and the partitioned one (``allocate_sub_jobs``):

- ``place_tasks`` puts pending tasks (a job's, or the next ``subGroupSize`` of one SubJob)
  on the best feasible node each, inside one Statement, and stops as soon as the gang (or
  the SubJob) can no longer be met; the job's and SubJob's allocated HyperNodes follow the
  placed tasks (their lowest common HyperNode) so the topology node score pulls the next
  tasks close.
- ``select_node``: the feasible node with the highest total score (node order + batch node
  order), ties to the first by name.
- ``StageClock``: Volcano's ``volcano_scheduling_stage_duration_milliseconds`` for the
  ``Predicate`` and ``Scoring`` stages. Volcano observes them once per task; here
  ``select_node`` adds ``perf_counter`` deltas and ``place_tasks`` observes the sums once per
  placement trial (one job or SubJob on one set of nodes), so the per-task cost is two clock
  reads and no histogram update.
- ``without_reserved``: a HyperNode's candidate nodes minus those nominated for other jobs.
- ``gang_prefix`` / ``tier_reports`` / ``reach_reports``: Volcano's gang message head and the
  per-tier report (HyperNodes in reach, what the roomiest lacked).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable
from itertools import chain
from time import perf_counter

from volcano_py.metrics import SCHEDULING_STAGE_DURATION
from volcano_py.scheduler.actions.fit_errors import TierReport, tier_shortfall
from volcano_py.scheduler.actions.queue_quota import task_quota_refusal
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.node_info import NodeInfo
from volcano_py.scheduler.api.resource import Resource
from volcano_py.scheduler.api.sub_job_info import SubJobInfo
from volcano_py.scheduler.api.task_info import READY, TaskInfo
from volcano_py.scheduler.framework.session import Session
from volcano_py.scheduler.framework.statement import Statement

# Volcano's stage label values; created at import so the series exist (count 0) before a run
_PREDICATE_STAGE = SCHEDULING_STAGE_DURATION.labels("Predicate")
_SCORING_STAGE = SCHEDULING_STAGE_DURATION.labels("Scoring")


class StageClock:
    """Seconds spent in predicates and in scoring over one placement trial."""

    __slots__ = ("predicate", "scored", "scoring")

    def __init__(self) -> None:
        """Nothing measured yet."""
        self.predicate = 0.0
        self.scoring = 0.0
        self.scored = False

    def observe(self) -> None:
        """One observation per stage that ran (milliseconds)."""
        if self.predicate:
            _PREDICATE_STAGE.observe(self.predicate * 1000)
        if self.scored:
            _SCORING_STAGE.observe(self.scoring * 1000)


def place_tasks(
    ssn: Session,
    stmt: Statement,
    job: JobInfo,
    nodes: list[NodeInfo],
    reasons: Counter[str],
    sub_job: SubJobInfo | None = None,
    *,
    until_ready: bool = False,
) -> None:
    """Allocate as many pending tasks as fit on ``nodes``; stop when the gang cannot be met.

    With ``sub_job``: only its pending tasks, at most ``subGroupSize`` of them, stopping when
    the SubJob can no longer be ready; its allocated HyperNode follows the placed tasks too.
    ``until_ready``: stop as soon as the job is ready (its minimum; the rest waits for every
    other gang's minimum, ``allocate``'s minimum-first rounds).
    """
    gang: JobInfo | SubJobInfo = job if sub_job is None else sub_job
    pending = gang.pending_tasks()
    ready = gang.ready_task_num()
    need = job.min_member if sub_job is None else sub_job.min_available
    if sub_job is not None:
        pending = pending[: sub_job.min_available]
    topology = job.with_network_topology() or (sub_job is not None and sub_job.mode is not None)
    clock = StageClock()
    tree = ssn.tree
    work = ssn.work
    failed: set[Hashable] = set()  # shapes no node took in this trial
    for i, task in enumerate(pending):
        if work.exhausted():  # the job's turn is over (``api/work_budget``)
            break
        task_reasons: Counter[str] = Counter()
        over_quota = task_quota_refusal(ssn, job, task)
        shape = node_shape(task)
        if over_quota is not None:
            task_reasons[over_quota] += 1
            index = None
        elif shape is not None and shape in failed:
            index = None  # its twin found no node, and the trial only takes room
        else:
            index = select_node(ssn, task, nodes, task_reasons, clock)
            if index is None and shape is not None:
                failed.add(shape)
        if index is None:
            if not reasons:
                reasons.update(task_reasons)
            if ready + len(pending) - i - 1 < need:
                break
            continue
        node = nodes[index]
        stmt.allocate(task, node.name)
        nodes[index] = ssn.nodes[node.name]  # the session's copy-on-write clone
        ready += 1
        if topology:
            leaf = tree.leaf_of(node.name)
            current = job.allocated_hypernode
            job.allocated_hypernode = tree.lca(current, leaf) if current else leaf
            if sub_job is not None:
                current = sub_job.allocated_hypernode
                sub_job.allocated_hypernode = tree.lca(current, leaf) if current else leaf
        if until_ready and ready >= need and ssn.job_ready(job):
            break
    clock.observe()


def node_shape(task: TaskInfo) -> Hashable | None:
    """What decides on which nodes a pod fits, when only room can change the answer.

    Two pending pods of one shape fit the same nodes; in a trial room only shrinks, so once
    one finds no node its twins are not searched (a job of 100,000 replicas on 16 nodes
    searched every node for each of its ~3,800 pods left over, every cycle). None for a pod
    whose fit other placed pods can help (inter-pod affinity, topology spread) or that names
    its own claims.
    """
    if task.pod_constraints or task.claims:
        return None
    return task.template, task.host_ports


def select_node(
    ssn: Session,
    task: TaskInfo,
    nodes: list[NodeInfo],
    reasons: Counter[str],
    clock: StageClock | None = None,
) -> int | None:
    """Index in ``nodes`` of the feasible node with the best total score (first on ties).

    The search stops once it has found as many feasible nodes as ``ssn.node_search`` asks
    for, starting where the previous capped search stopped (``api/node_search.py``); a list
    searched whole starts at its first node. With ``clock``, the time in predicates and in
    scoring is added to it.
    """
    started = perf_counter()
    predicates = ssn.predicate_fns
    feasible: list[NodeInfo] = []
    positions: list[int] = []
    total = len(nodes)
    search = ssn.node_search
    wanted = search.feasible_to_find(total)
    capped = wanted < total
    start = search.start_of(total, capped)
    examined = 0
    for position in chain(range(start, total), range(start)):
        examined += 1
        node = nodes[position]
        for fn in predicates:
            reason = fn(task, node)
            if reason is not None:
                reasons[reason] += 1
                break
        else:
            feasible.append(node)
            positions.append(position)
            if len(feasible) >= wanted:
                break
    if capped:
        search.searched(start, examined, total)
    ssn.work.trials += examined
    scoring_started = perf_counter()
    if clock is not None:
        clock.predicate += scoring_started - started
    if len(feasible) <= 1:
        return positions[0] if positions else None
    order_fns = ssn.node_order_fns
    totals = [sum(fn(task, node) for fn in order_fns) for node in feasible]
    for scores in ssn.batch_node_scores(task, feasible).values():
        if scores:
            totals = [t + scores.get(n.name, 0.0) for t, n in zip(totals, feasible, strict=True)]
    best = 0
    for i in range(1, len(totals)):
        if totals[i] > totals[best]:
            best = i
    if clock is not None:
        clock.scoring += perf_counter() - scoring_started
        clock.scored = True
    return positions[best]


def without_reserved(
    candidates: dict[str, list[NodeInfo]], reserved: frozenset[str] | set[str]
) -> dict[str, list[NodeInfo]]:
    """``candidates`` (nodes per HyperNode) without the ``reserved`` nodes."""
    if not reserved:
        return candidates
    return {hn: [n for n in nodes if n.name not in reserved] for hn, nodes in candidates.items()}


def gang_prefix(job: JobInfo) -> str:
    """Volcano's gang message head; a gang that is already ready is scaling up, not "not ready"."""
    pending = len(job.pending_tasks()) + len(job.gated_tasks())
    ready = job.ready_task_num()
    if ready >= job.min_member > 0:
        return (
            f"{pending}/{len(job.tasks)} tasks unschedulable: the gang is running "
            f"({ready} ready, {job.min_member} minAvailable) and scaling up; "
        )
    return (
        f"{pending}/{len(job.tasks)} tasks in gang unschedulable: pod group is not ready, "
        f"{job.min_member} minAvailable; "
    )


def tier_reports(ssn: Session, job: JobInfo) -> list[TierReport]:
    """Per allowed tier: HyperNodes in the job's reach, how many fit (0 here), what is short."""
    hard, highest = job.is_hard_topology_mode()
    if not hard:
        highest = ssn.tree.top.tier
    return reach_reports(ssn, _shortfall_need(job), highest, job.allocated_hypernode)


def _shortfall_need(job: JobInfo) -> Resource:
    """What the tier counts compare with: what the pods not yet placed still need.

    A ready gang (running and scaling up) is short of what its extra pods ask. A gang with
    some pods placed and a ``minResources`` for the whole gang (KubeRay and Volcano Jobs
    write the total; a growing RayCluster's is its new size) needs ``minResources`` minus
    what its placed pods hold: the pods placed hold their share already, in the HyperNode
    the reach is counted under. Without ``minResources`` the need is derived from the
    pending pods alone (``gang_min_resources``).
    """
    if job.ready_task_num() >= job.min_member:
        need = Resource()
        for task in job.pending_tasks():
            need.add(task.resreq)
        return need
    need = job.gang_min_resources().clone()
    if not job.min_resources.is_empty():
        for task in job.tasks.values():
            if task.status in READY:
                need.sub(task.resreq)
    return need


def reach_by_tier(
    ssn: Session, highest: int, allocated: str, root: str = ""
) -> list[tuple[int, list[str]]]:
    """Per tier up to ``highest``, the HyperNodes under ``root`` (non-empty tiers only).

    ``root`` defaults to ``allocated``'s highest ancestor within ``highest`` (the whole tree
    when nothing is allocated).
    """
    if not root and allocated:
        for ancestor in ssn.tree.ancestors(allocated):
            if ssn.hypernodes[ancestor].tier <= highest:
                root = ancestor
    out = []
    for tier in ssn.hypernode_tiers:
        if tier > highest:
            break
        names = [
            n
            for n in ssn.hypernodes_by_tier.get(tier, ())
            if not root or root in ssn.tree.ancestors(n)
        ]
        if names:
            out.append((tier, names))
    return out


def reach_reports(
    ssn: Session, need: Resource, highest: int, allocated: str, root: str = ""
) -> list[TierReport]:
    """Per tier up to ``highest``, the HyperNodes under ``root``.

    ``root`` defaults to ``allocated``'s highest ancestor within ``highest`` (the whole tree
    when nothing is allocated).
    """
    reports = []
    for tier, names in reach_by_tier(ssn, highest, allocated, root):
        idles = []
        for name in names:
            idle = Resource()
            for node in ssn.nodes_in(name):
                idle.add(node.idle)
            idles.append(idle)
        short = tier_shortfall(need, idles)
        reports.append(TierReport(tier, len(names), 0, short, fragmented=not short))
    return reports
