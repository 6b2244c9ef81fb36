"""``reclaim`` (and Volcano's ``gangreclaim``): evict across queues.

A starving job takes back what its queue deserves from pods of other queues that are over
their share (proportion/capacity decide), in the cheapest domain (``eviction``), through
the plugins' reclaimable functions.
"""

from __future__ import annotations

from volcano_py.scheduler.actions.eviction import evict_for_jobs
from volcano_py.scheduler.actions.preempt import victim_scope
from volcano_py.scheduler.framework.session import Session


class ReclaimAction:
    """Evict across queues."""

    def __init__(self, name: str = "reclaim") -> None:
        """``name``: ``reclaim`` or ``gangreclaim`` (the same action)."""
        self.name = name

    def execute(self, ssn: Session) -> None:
        """Plan evictions for every starving job whose queue is not over its share."""
        evict_for_jobs(ssn, self.name, *victim_scope(ssn, self.name))
