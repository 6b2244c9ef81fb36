"""``gang``: all-or-nothing by ``minMember`` (Volcano's gang plugin).

- job valid: a job with fewer valid tasks than minMember is not tried at all
  (``NotEnoughTasks``: ``Not enough valid tasks for gang-scheduling, valid: N, min: M``);
  a PodGroup whose spec cannot be read is refused with the field named.
- job valid, partitioned gangs: every role of ``minTaskMember`` has enough valid pods and
  every ``subGroupPolicy`` has ``minSubGroups`` SubJobs (``NotEnoughPodsOfTask``, naming
  the role or the policy).
- job ready: at least minMember tasks allocated, binding, bound, running or done, every
  ``minTaskMember`` role and every policy's ``minSubGroups`` ready SubJobs — the allocate
  action commits a job's statement only then.
- job order: jobs not yet ready before ready ones.
- wake-up hints: a job refused by job valid waits for its own pods or PodGroup to change,
  which un-parks it anyway, so no cluster event does (``api/wake_hints.py``).
- preemptable / reclaimable (victims): a victim gang keeps at least minMember ready pods —
  only its surplus above minMember may go — unless every one of its ready pods is among the
  candidates, in which case the whole gang may go (gang-aware eviction's bundle model).
- session close: Volcano's ``volcano_job_retry_counts`` (+1 per job left not ready) and
  ``volcano_unschedule_task_count`` (``support/job_metrics.py``).
"""

from __future__ import annotations

from volcano_py.api.constants import (
    GANG_PLUGIN,
    INVALID_PODGROUP_REASON,
    NOT_ENOUGH_PODS_OF_TASK_REASON,
    NOT_ENOUGH_PODS_REASON,
)
from volcano_py.scheduler.api.job_info import JobInfo, task_role
from volcano_py.scheduler.api.task_info import READY, TaskInfo, TaskStatus
from volcano_py.scheduler.api.wake_hints import NO_EVENTS
from volcano_py.scheduler.framework.arguments import Arguments
from volcano_py.scheduler.framework.interface import ValidateResult
from volcano_py.scheduler.framework.session import Session
from volcano_py.scheduler.plugins.support.job_metrics import export_gang_outcome


class GangPlugin:
    """minMember all-or-nothing."""

    name = GANG_PLUGIN

    def __init__(self, args: Arguments) -> None:
        """No arguments."""
        self.args = args

    def on_session_open(self, ssn: Session) -> None:
        """Register valid/ready/order functions and job valid's wake-up hints."""
        ssn.add_job_valid_fn(self.name, job_valid)
        for reason in JOB_VALID_REASONS:
            ssn.wake_hints.declare(reason, NO_EVENTS)
        ssn.add_job_ready_fn(self.name, JobInfo.is_ready)
        ssn.add_job_starving_fn(self.name, below_min_member)
        ssn.add_job_order_fn(self.name, job_order)

        def victims(_preemptor: TaskInfo, candidates: list[TaskInfo]) -> list[TaskInfo]:
            return gang_victims(ssn.jobs, candidates)

        ssn.add_preemptable_fn(self.name, victims)
        ssn.add_reclaimable_fn(self.name, victims)

    def on_session_close(self, ssn: Session) -> None:
        """Export the jobs' retry and unscheduled-task counts (nothing to release)."""
        export_gang_outcome(ssn.jobs.values())


def valid_task_num(job: JobInfo) -> int:
    """Tasks that can still count towards the gang (not failed or unknown)."""
    return sum(
        1 for t in job.tasks.values() if t.status not in (TaskStatus.FAILED, TaskStatus.UNKNOWN)
    )


# job_valid's reasons: each depends only on the job's own PodGroup and pods
JOB_VALID_REASONS = (
    INVALID_PODGROUP_REASON,
    NOT_ENOUGH_PODS_OF_TASK_REASON,
    NOT_ENOUGH_PODS_REASON,
)


def job_valid(job: JobInfo) -> ValidateResult | None:
    """Refuse jobs that cannot possibly reach minMember, or whose spec is unreadable."""
    if job.invalid:
        return ValidateResult(False, INVALID_PODGROUP_REASON, job.invalid)
    short = _roles_short_of_valid_pods(job)
    if short:
        return ValidateResult(
            False,
            NOT_ENOUGH_PODS_OF_TASK_REASON,
            "Not enough valid pods of each task for gang-scheduling: " + short,
        )
    groups = job.sub_groups_short(ready=False)
    if groups:
        detail = ", ".join(f"{name} has {n}, min {m}" for name, (n, m) in groups.items())
        return ValidateResult(
            False,
            NOT_ENOUGH_PODS_OF_TASK_REASON,
            f"Not enough valid subGroups of each task for gang-scheduling: {detail}",
        )
    valid = valid_task_num(job)
    if valid < job.min_member:
        return ValidateResult(
            False,
            NOT_ENOUGH_PODS_REASON,
            f"Not enough valid tasks for gang-scheduling, valid: {valid}, min: {job.min_member}",
        )
    return None


def _roles_short_of_valid_pods(job: JobInfo) -> str:
    """``minTaskMember`` roles with fewer valid pods than their count (Volcano's check)."""
    if not job.min_task_member or job.min_member < sum(job.min_task_member.values()):
        return ""
    valid: dict[str, int] = {}
    for task in job.tasks.values():
        if task.status not in (TaskStatus.FAILED, TaskStatus.UNKNOWN):
            role = task_role(task)
            valid[role] = valid.get(role, 0) + 1
    return ", ".join(
        f"{role} has {valid.get(role, 0)}, min {wanted}"
        for role, wanted in sorted(job.min_task_member.items())
        if valid.get(role, 0) < wanted
    )


def below_min_member(job: JobInfo) -> bool:
    """Starving for preemption: fewer than minMember tasks ready (minTaskMember aside)."""
    return job.ready_task_num() < job.min_member


def job_order(left: JobInfo, right: JobInfo) -> int:
    """Jobs not yet ready first."""
    left_ready, right_ready = left.is_ready(), right.is_ready()
    if left_ready == right_ready:
        return 0
    return 1 if left_ready else -1


def gang_victims(jobs: dict[str, JobInfo], candidates: list[TaskInfo]) -> list[TaskInfo]:
    """The candidates whose eviction leaves every victim gang whole or at minMember or more.

    Per job, candidates are taken in order while the job keeps more than minMember ready
    pods; when all of a job's ready pods are candidates, all of them are permitted.
    """
    by_job: dict[str, list[TaskInfo]] = {}
    for task in candidates:
        by_job.setdefault(task.job, []).append(task)
    permitted: set[str] = set()
    for uid, tasks in by_job.items():
        job = jobs.get(uid)
        if job is None:
            continue  # a pod whose PodGroup is gone: Volcano skips it too
        ready = {t.key for t in job.tasks.values() if t.status in READY}
        offered = {t.key for t in tasks if t.key in ready}
        if ready and offered == ready:
            permitted |= offered
            continue
        surplus = len(ready) - job.min_member
        for task in tasks:
            if surplus <= 0:
                break
            if task.key in ready:
                permitted.add(task.key)
                surplus -= 1
    return [t for t in candidates if t.key in permitted]
