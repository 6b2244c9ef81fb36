"""Queue hooks the allocate action calls: which jobs may go, in what order, task by task.

Kept apart from ``allocate.py`` so the placement code stays about placement:

- ``queue_refusal(ssn, job)``: why a job's queue keeps it out this cycle — missing or not
  Open (``Session.queue_gate``; before it, a native PodGroup's missing Workload:
  ``Session.workload_gate``), or overused by a quota plugin (proportion, capacity).
- ``queue_ordered(ssn, jobs)``: the jobs to try, one at a time, from the queue that comes
  first in the plugins' queue order *now* (shares move as jobs are placed), each queue's
  jobs in job order — Volcano's queue-then-job loop. Without queue order functions, plain
  job order.
- ``task_quota_refusal(ssn, job, task)``: the per-task quota check (``Session.allocatable``)
  that every allocate trial runs before placing a task, topology trials included, so a gang
  never lands half inside its queue's quota (the trial is discarded instead).
"""

from __future__ import annotations

from collections.abc import Iterator

from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.task_info import TaskInfo
from volcano_py.scheduler.framework.interface import JobFit
from volcano_py.scheduler.framework.session import Session


def queue_refusal(ssn: Session, job: JobInfo) -> JobFit | None:
    """Why the job's queue keeps it out now, or None."""
    closed = ssn.workload_gate(job) or ssn.queue_gate(job)
    if closed is not None:
        return closed
    if ssn.overused(ssn.queues[job.queue]):
        return JobFit("QueueOverused", f"queue {job.queue!r} is overused")
    return None


def queue_ordered(ssn: Session, jobs: list[JobInfo]) -> Iterator[JobInfo]:
    """``jobs`` in queue order (re-evaluated after every job), then job order."""
    jobs.sort(key=ssn.job_order_key())
    if not ssn.has_queue_order_fns:
        yield from jobs
        return
    by_queue: dict[str, list[JobInfo]] = {}
    for job in jobs:
        if job.queue not in ssn.queues:
            yield job  # refused by queue_refusal, with the queue named
            continue
        by_queue.setdefault(job.queue, []).append(job)
    for waiting in by_queue.values():
        waiting.reverse()  # pop() from the end takes the first in job order
    queue_key = ssn.queue_order_key()
    while by_queue:
        name = min(by_queue, key=lambda q: queue_key(ssn.queues[q]))
        waiting = by_queue[name]
        yield waiting.pop()
        if not waiting:
            del by_queue[name]


def task_quota_refusal(ssn: Session, job: JobInfo, task: TaskInfo) -> str | None:
    """A predicate-style reason when the task would exceed its queue's quota, else None."""
    if not ssn.has_allocatable_fns:
        return None
    queue = ssn.queues.get(job.queue)
    if queue is None or ssn.allocatable(queue, task):
        return None
    return f"queue {job.queue} quota exceeded"
