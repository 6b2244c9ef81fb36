"""``preempt`` (and Volcano's ``gangpreempt``): evict within a queue, by priority.

A starving job evicts lower-priority pods of its
own queue, in the cheapest domain (``eviction``), through the plugins' preemptable functions.
"""

from __future__ import annotations

from volcano_py.scheduler.actions.eviction import evict_for_jobs
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.framework.session import Session


def same_queue(preemptor: JobInfo, victim: JobInfo) -> bool:
    """Preemption stays inside the preemptor's queue."""
    return victim.queue == preemptor.queue


class PreemptAction:
    """Evict within a queue, by priority."""

    def __init__(self, name: str = "preempt") -> None:
        """``name``: ``preempt`` or ``gangpreempt`` (the same action)."""
        self.name = name

    def execute(self, ssn: Session) -> None:
        """Plan evictions for every starving job."""
        evict_for_jobs(ssn, self.name, ssn.preemptable, same_queue)
