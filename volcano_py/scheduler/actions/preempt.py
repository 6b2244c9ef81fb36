"""``preempt`` (and Volcano's ``gangpreempt``): evict within a queue, by priority.

A starving job evicts lower-priority pods of its
own queue, in the cheapest domain (``eviction``), through the plugins' preemptable functions.
"""

from __future__ import annotations

import functools

from volcano_py.scheduler.actions.eviction import evict_for_jobs
from volcano_py.scheduler.actions.eviction_domains import Scope, VictimFn
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.framework.session import Session


def other_reclaimable_queue(ssn: Session, reclaimer: JobInfo, victim: JobInfo) -> bool:
    """Reclaim only takes from other queues, and never from one with ``reclaimable: false``."""
    if victim.queue == reclaimer.queue:
        return False
    queue = ssn.queues.get(victim.queue)
    return queue is None or queue.reclaimable


def same_queue(preemptor: JobInfo, victim: JobInfo) -> bool:
    """Preemption stays inside the preemptor's queue."""
    return victim.queue == preemptor.queue


def victim_scope(ssn: Session, action: str) -> tuple[VictimFn, Scope]:
    """The victim function and the scope of ``action`` (preempt/reclaim, gang* aliases)."""
    if action.endswith("reclaim"):
        return ssn.reclaimable, functools.partial(other_reclaimable_queue, ssn)
    return ssn.preemptable, same_queue


class PreemptAction:
    """Evict within a queue, by priority."""

    def __init__(self, name: str = "preempt") -> None:
        """``name``: ``preempt`` or ``gangpreempt`` (the same action)."""
        self.name = name

    def execute(self, ssn: Session) -> None:
        """Plan evictions for every starving job."""
        evict_for_jobs(ssn, self.name, *victim_scope(ssn, self.name))
