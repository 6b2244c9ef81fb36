"""``gang``: all-or-nothing by ``minMember`` (Volcano's gang plugin).

- job valid: a job with fewer valid tasks than minMember is not tried at all
  (``NotEnoughTasks``: ``Not enough valid tasks for gang-scheduling, valid: N, min: M``);
  a PodGroup whose spec cannot be read is refused with the field named.
- job ready: at least minMember tasks allocated, binding, bound, running or done — the
  allocate action commits a job's statement only then.
- job order: jobs not yet ready before ready ones.
"""

from __future__ import annotations

from volcano_py.api.constants import GANG_PLUGIN, NOT_ENOUGH_PODS_REASON
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.task_info import TaskStatus
from volcano_py.scheduler.framework.arguments import Arguments
from volcano_py.scheduler.framework.session import Session, ValidateResult


class GangPlugin:
    """minMember all-or-nothing."""

    name = GANG_PLUGIN

    def __init__(self, args: Arguments) -> None:
        """No arguments."""
        self.args = args

    def on_session_open(self, ssn: Session) -> None:
        """Register valid/ready/order functions."""
        ssn.add_job_valid_fn(self.name, job_valid)
        ssn.add_job_ready_fn(self.name, JobInfo.is_ready)
        ssn.add_job_order_fn(self.name, job_order)

    def on_session_close(self, ssn: Session) -> None:
        """Nothing to release."""


def valid_task_num(job: JobInfo) -> int:
    """Tasks that can still count towards the gang (not failed or unknown)."""
    return sum(
        1 for t in job.tasks.values() if t.status not in (TaskStatus.FAILED, TaskStatus.UNKNOWN)
    )


def job_valid(job: JobInfo) -> ValidateResult | None:
    """Refuse jobs that cannot possibly reach minMember, or whose spec is unreadable."""
    if job.invalid:
        return ValidateResult(False, "InvalidPodGroup", job.invalid)
    valid = valid_task_num(job)
    if valid < job.min_member:
        return ValidateResult(
            False,
            NOT_ENOUGH_PODS_REASON,
            f"Not enough valid tasks for gang-scheduling, valid: {valid}, min: {job.min_member}",
        )
    return None


def job_order(left: JobInfo, right: JobInfo) -> int:
    """Jobs not yet ready first."""
    left_ready, right_ready = left.is_ready(), right.is_ready()
    if left_ready == right_ready:
        return 0
    return 1 if left_ready else -1
