"""``priority``: jobs with a higher priority (their pods' ``spec.priority``) go first.

As a preemptable victim function it permits only pods of a lower priority than the
preemptor's job (Volcano compares the jobs' priorities). Like Volcano's, it has no say in
reclaim: a queue over its share gives back whatever the other plugins permit.
"""

from __future__ import annotations

from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.task_info import TaskInfo
from volcano_py.scheduler.framework.arguments import Arguments
from volcano_py.scheduler.framework.session import Session


class PriorityPlugin:
    """Job order by priority."""

    name = "priority"

    def __init__(self, args: Arguments) -> None:
        """No arguments."""
        self.args = args

    def on_session_open(self, ssn: Session) -> None:
        """Register the job order function."""
        ssn.add_job_order_fn(self.name, job_order)
        ssn.add_job_starving_fn(self.name, lambda job: job.ready_task_num() < len(job.tasks))

        def victims(preemptor: TaskInfo, candidates: list[TaskInfo]) -> list[TaskInfo]:
            return lower_priority(ssn.jobs, preemptor, candidates)

        ssn.add_preemptable_fn(self.name, victims)

    def on_session_close(self, ssn: Session) -> None:
        """Nothing to release."""


def job_order(left: JobInfo, right: JobInfo) -> int:
    """Higher priority first (negative: left first)."""
    if left.priority == right.priority:
        return 0
    return -1 if left.priority > right.priority else 1


def _priority(jobs: dict[str, JobInfo], task: TaskInfo) -> int:
    job = jobs.get(task.job)
    return job.priority if job is not None else task.priority


def lower_priority(
    jobs: dict[str, JobInfo], preemptor: TaskInfo, candidates: list[TaskInfo]
) -> list[TaskInfo]:
    """The candidates whose job's priority is below the preemptor's job's."""
    mine = _priority(jobs, preemptor)
    return [t for t in candidates if _priority(jobs, t) < mine]
