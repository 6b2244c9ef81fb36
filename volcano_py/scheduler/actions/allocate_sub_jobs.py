"""``allocate`` for partitioned gangs (PodGroups with ``subGroupPolicy``): Volcano's allocateForJob.

- **Domains.** The job-level gradient (hard: its tiers after the resource pre-filter; soft:
  up to the virtual top tier; no job topology: the virtual top) gives candidate domains,
  lowest tier first.
- **A trial per domain.** Inside one domain the SubJobs go in order: those the policies'
  ``minSubGroups`` still require, then those not ready, then by priority, then by partition
  index (the first match value as a number), then by id. Each runs its own gradient inside
  the domain (``hypernode_gradient_for_sub_job``) and takes the best HyperNode by its own
  score (binpack of the SubJob's request, task-count tie break) where its next
  ``subGroupSize`` tasks fit — a SubJob not yet ready only when they all do. A SubJob with
  pending tasks left goes back in the queue; the trial stops as soon as the job is ready
  (``minMember``, ``minTaskMember``, every policy's ``minSubGroups``) — unless it was ready
  already (a later round), then it places every SubJob it can. The trial's score is
  the sum of the placed SubJobs' HyperNode scores. A native CompositePodGroup's trial that
  fails is run again with the SubJob (child PodGroup) that failed first moved to the front,
  up to once per SubJob (``_try_domain``): backtracking across children.
- **Nomination.** A HyperNode preempt/reclaim nominated for the job is tried first, as a
  gradient of its own; the nodes nominated for other jobs are left out of every SubJob's
  candidates (``reserved``), so nobody takes the room freed for them.
- **Choice.** Every domain of a gradient is tried (a domain identical to one tried before
  is skipped: same trial, same sum, and the earlier name wins the tie —
  ``domain_signature``); the ready trial with the highest sum wins, ties to the first
  domain by name (Volcano picks among ties by map order). It is run
  again and committed; tasks still pending then get another round, where the allocated
  HyperNodes narrow the search. No domain of any gradient ready: the job waits, and the
  message names the SubJob that could not be placed and, per tier, what it lacked.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Hashable

from volcano_py.api.constants import NOT_ENOUGH_RESOURCES_REASON, NetworkTopologyMode
from volcano_py.scheduler.actions.domain_signature import (
    domain_signature,
    job_nodes,
    label_blind,
)
from volcano_py.scheduler.actions.fit_errors import nodes_message, tiers_message
from volcano_py.scheduler.actions.placement import (
    gang_prefix,
    place_tasks,
    reach_reports,
    without_reserved,
)
from volcano_py.scheduler.api.hypernode_info import HyperNodeInfo
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.sub_job_info import SubJobInfo
from volcano_py.scheduler.framework.interface import JobFit
from volcano_py.scheduler.framework.session import Session
from volcano_py.scheduler.framework.statement import Statement

log = logging.getLogger(__name__)


def allocate_partitioned(
    ssn: Session,
    job: JobInfo,
    nominated: str = "",
    reserved: frozenset[str] | set[str] = frozenset(),
) -> bool:
    """Rounds of domain search until nothing is pending or a round fails; True if any commit.

    ``nominated``: the HyperNode preempt/reclaim freed for the job (tried first);
    ``reserved``: nodes nominated for other jobs (never used).
    """
    committed = False
    while job.pending_tasks():
        before = len(job.pending_tasks())
        if not _allocate_round(ssn, job, nominated, reserved):
            break
        committed = True
        if len(job.pending_tasks()) >= before:
            break
    if committed:
        ssn.job_fit.pop(job.key, None)
    return committed


def ordered_sub_jobs(job: JobInfo) -> list[SubJobInfo]:
    """SubJobs with pending tasks, in the order a trial places them (module docstring)."""
    waiting = [sj for sj in job.sub_jobs.values() if sj.pending_tasks()]
    ready_count: Counter[str] = Counter(
        sj.policy for sj in job.sub_jobs.values() if sj.uid and sj.is_ready()
    )
    wanted = {p.name: p.min_sub_groups for p in job.policies}
    waiting.sort(key=lambda sj: (sj.is_ready(), -sj.priority, sj.match_index, sj.uid))
    required: set[str] = set()
    for sj in waiting:
        if sj.uid and not sj.is_ready() and ready_count[sj.policy] < wanted.get(sj.policy, 0):
            required.add(sj.uid)
            ready_count[sj.policy] += 1
    waiting.sort(key=lambda sj: sj.uid not in required)  # stable: keeps the order above
    return waiting


def _allocate_round(
    ssn: Session, job: JobInfo, nominated: str, reserved: frozenset[str] | set[str]
) -> bool:
    failure = ""
    blind = label_blind(job)
    placed = job_nodes(job) if blind else set()
    gradients = ssn.hypernode_gradient_for_job(job, ssn.tree.top)
    if nominated in ssn.hypernodes:
        gradients = [[ssn.hypernodes[nominated]], *gradients]
    for gradient in gradients:
        best: tuple[float, HyperNodeInfo, list[SubJobInfo]] | None = None
        seen: set[Hashable] = set()
        order = ordered_sub_jobs(job)
        shapes = {sj.uid: _fresh_shape(sj) for sj in order}
        for domain in sorted(gradient, key=lambda hn: hn.name):
            if blind and len(gradient) > 1:
                signature = domain_signature(ssn, domain, placed)
                if signature is not None and signature in seen:
                    continue  # a copy of a domain tried before: same sum, the earlier name wins
                seen.add(signature)
            ready, score, failed, tried = _try_domain(
                ssn, job, domain, order, shapes, explain=not failure, reserved=reserved
            )
            if ready and (best is None or score > best[0]):
                best = (score, domain, tried)
            elif not ready and not failure:
                failure = failed
        if best is not None:
            stmt = ssn.statement()
            trial(ssn, stmt, job, best[1], best[2], shapes, reserved=reserved)
            stmt.commit()
            job.allocated_hypernode = ssn.placed_lca(job)
            log.info(
                "job %s: SubJobs placed in domain %s (score %.1f), AllocatedHyperNode=%s",
                job.key,
                best[1].name,
                best[0],
                job.allocated_hypernode,
            )
            return True
    _record_failure(ssn, job, failure)
    return False


def _try_domain(
    ssn: Session,
    job: JobInfo,
    domain: HyperNodeInfo,
    order: list[SubJobInfo],
    shapes: dict[str, Hashable | None],
    explain: bool,
    reserved: frozenset[str] | set[str],
) -> tuple[bool, float, str, list[SubJobInfo]]:
    """One domain's trial: (ready, score, why it failed, the SubJob order that was ready).

    A native CompositePodGroup (``job.children``) whose trial fails is tried again with the
    SubJob that failed first placed first, up to once per SubJob: the children that went
    before it may have taken the room only it could use (kube-scheduler places the children
    greedily, once). Other jobs get the one trial Volcano gives them.
    """
    tried, failure = order, ""
    for _ in range(len(order) if job.children else 1):
        stmt = ssn.statement()
        saved = _save(job)
        failed_first: list[str] = []
        score, failed = trial(
            ssn, stmt, job, domain, tried, shapes, explain and not failure, reserved, failed_first
        )
        failure = failure or failed
        ready = len(stmt) > 0 and ssn.job_ready(job)
        stmt.discard()
        _restore(job, saved)
        if ready:
            return True, score, failure, tried
        if not failed_first or failed_first[0] == tried[0].uid:
            break
        first = next(sj for sj in tried if sj.uid == failed_first[0])
        tried = [first, *(sj for sj in tried if sj is not first)]
    return False, 0.0, failure, tried


def trial(
    ssn: Session,
    stmt: Statement,
    job: JobInfo,
    domain: HyperNodeInfo,
    order: list[SubJobInfo],
    shapes: dict[str, Hashable | None],
    explain: bool = False,
    reserved: frozenset[str] | set[str] = frozenset(),
    failed_first: list[str] | None = None,
) -> tuple[float, str]:
    """Place SubJobs (in ``order``) inside ``domain``: (sum of their scores, why the first failed).

    The reason (only with ``explain``) is worked out when the SubJob fails, against the
    trial's state (the SubJobs placed before it hold their resources). A fresh SubJob (none of
    its pods placed) shaped like one that already failed in this trial is not tried: room only
    shrinks as the trial goes on, so it would fail the same way. ``shapes``: each SubJob's
    shape at the start of the round (``_fresh_shape``). ``reserved``: nodes no SubJob may use.
    ``failed_first``: gets the id of the first SubJob that could not be placed.
    """
    queue = list(order)
    total = 0.0
    failed = ""
    failed_shapes: set[Hashable] = set()
    touched: set[str] = set()
    # a job not ready yet stops as soon as it is (Volcano); one already ready (minMember
    # below its size, a later round) places every SubJob it can in this trial instead of
    # one per round, which would cost a domain search per SubJob
    stop_when_ready = not ssn.job_ready(job)
    while queue:
        sub_job = queue.pop(0)
        shape = None if sub_job.uid in touched else shapes.get(sub_job.uid)
        if shape is not None and shape in failed_shapes:
            continue
        reasons: Counter[str] = Counter()
        score = place_sub_job(ssn, stmt, job, sub_job, domain, reasons, reserved)
        if score is None:
            if failed_first is not None and not failed_first:
                failed_first.append(sub_job.uid)
            if explain and not failed:
                failed = sub_job_failure(ssn, sub_job, domain, reasons)
            if shape is not None:
                failed_shapes.add(shape)
            continue
        total += score
        touched.add(sub_job.uid)
        if stop_when_ready and ssn.job_ready(job):
            break
        if sub_job.pending_tasks():
            queue.append(sub_job)
    return total, failed


def _fresh_shape(sub_job: SubJobInfo) -> Hashable | None:
    """What a SubJob with nothing placed is made of (None once any of its pods is placed)."""
    if sub_job.allocated_hypernode or sub_job.ready_task_num():
        return None
    return (
        sub_job.policy,
        sub_job.min_available,
        sub_job.mode,
        sub_job.highest_tier,
        tuple(sorted(t.template for t in sub_job.tasks.values())),
    )


def place_sub_job(
    ssn: Session,
    stmt: Statement,
    job: JobInfo,
    sub_job: SubJobInfo,
    domain: HyperNodeInfo,
    reasons: Counter[str],
    reserved: frozenset[str] | set[str] = frozenset(),
) -> float | None:
    """Place the SubJob's next ``subGroupSize`` tasks in its best HyperNode; its score."""
    before = (job.allocated_hypernode, sub_job.allocated_hypernode)
    was_ready = sub_job.is_ready()
    for gradient in ssn.hypernode_gradient_for_sub_job(job, sub_job, domain):
        candidates = without_reserved({hn.name: ssn.nodes_in(hn.name) for hn in gradient}, reserved)
        scores = ssn.hypernode_order_map(job, candidates, sub_job)
        for name in sorted(candidates, key=lambda n: (-scores.get(n, 0.0), n)):
            mark = len(stmt)
            place_tasks(ssn, stmt, job, candidates[name], reasons, sub_job)
            if len(stmt) > mark and (was_ready or sub_job.is_ready()):
                return scores.get(name, 0.0)
            stmt.discard(mark)
            job.allocated_hypernode, sub_job.allocated_hypernode = before
    return None


def _save(job: JobInfo) -> tuple[str, dict[str, str]]:
    return job.allocated_hypernode, {
        uid: sj.allocated_hypernode for uid, sj in job.sub_jobs.items()
    }


def _restore(job: JobInfo, saved: tuple[str, dict[str, str]]) -> None:
    job.allocated_hypernode = saved[0]
    for uid, allocated in saved[1].items():
        job.sub_jobs[uid].allocated_hypernode = allocated


def sub_job_failure(
    ssn: Session, sub_job: SubJobInfo, domain: HyperNodeInfo, reasons: Counter[str]
) -> str:
    """``SubJob <id> could not be placed in <domain>: tier 1: 0/4 fit (...)``."""
    text = f"SubJob {sub_job.uid or '<default>'} could not be placed in {domain.name}"
    highest = domain.tier
    if sub_job.mode == NetworkTopologyMode.HARD and sub_job.highest_tier is not None:
        highest = min(highest, sub_job.highest_tier)
    reports = reach_reports(
        ssn, sub_job.min_resources(), highest, sub_job.allocated_hypernode, domain.name
    )
    if any(r.short for r in reports):
        return f"{text}: {tiers_message(reports)}"
    if reasons:
        return f"{text}: {nodes_message(sum(reasons.values()), reasons)}"
    return text


def _record_failure(ssn: Session, job: JobInfo, failure: str) -> None:
    text = failure
    if not text:
        text = "no candidate HyperNode for the job within its allowed tier"
        hard, highest = job.is_hard_topology_mode()
        if hard:
            reports = reach_reports(ssn, job.gang_min_resources(), highest, job.allocated_hypernode)
            if reports:
                text = tiers_message(reports)
    ssn.job_fit[job.key] = JobFit(NOT_ENOUGH_RESOURCES_REASON, gang_prefix(job) + text)
