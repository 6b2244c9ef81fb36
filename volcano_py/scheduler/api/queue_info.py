"""``QueueInfo``: one Queue as a scheduling session sees it (Volcano's ``api.QueueInfo``).

Built by the cache's snapshot from the Queue object (``volcano_py.api.queue.Queue``) and
every PodGroup naming it, settled ones included: ``allocated`` is what the queue's placed
tasks hold, ``request`` what all its tasks ask for (placed or not), ``inqueue`` what its
Inqueue jobs still reserve (their ``minResources`` not yet placed), and the PodGroup counts
by phase that the queue status shows. Quota plugins (proportion, capacity) keep their own
per-session attributes built from these.

``capability`` leaves a dimension it does not name unlimited, as in Volcano.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from volcano_py.api.queue import Queue, QueueState
from volcano_py.scheduler.api.resource import Resource


class QueueInfo:
    """A Queue's spec as Resources and its usage in this snapshot."""

    __slots__ = (
        "allocated",
        "capability",
        "capability_names",
        "deserved",
        "guarantee",
        "implicit",
        "inqueue",
        "name",
        "phases",
        "queue",
        "request",
    )

    def __init__(self, queue: Queue, *, implicit: bool = False) -> None:
        """Quantities parsed from ``queue`` (an implicit queue is one the cache assumes)."""
        self.queue = queue
        self.name = queue.name
        self.implicit = implicit
        self.capability = Resource.from_list(queue.capability, "spec.capability")
        self.capability_names = frozenset(n for n in queue.capability if n != "pods")
        self.guarantee = Resource.from_list(queue.guarantee, "spec.guarantee.resource")
        self.deserved = Resource.from_list(queue.deserved, "spec.deserved")
        self.allocated = Resource()
        self.request = Resource()
        self.inqueue = Resource()
        self.phases: Counter[str] = Counter()

    @property
    def weight(self) -> int:
        """``spec.weight``."""
        return self.queue.weight

    @property
    def parent(self) -> str:
        """``spec.parent``."""
        return self.queue.parent

    @property
    def hierarchy(self) -> str:
        """``volcano.sh/hierarchy`` (hierarchical DRF's path, ``root/eng/prod``)."""
        return self.queue.hierarchy

    @property
    def hierarchy_weights(self) -> str:
        """``volcano.sh/hierarchy-weights`` (one weight per path part, ``1/2/8``)."""
        return self.queue.hierarchy_weights

    @property
    def state(self) -> QueueState:
        """``status.state``."""
        return self.queue.state

    @property
    def reclaimable(self) -> bool:
        """``spec.reclaimable``: other queues may take back this queue's pods (default true)."""
        return self.queue.reclaimable

    def is_open(self) -> bool:
        """Whether new PodGroups may enter."""
        return self.queue.is_open

    def status(self) -> dict[str, Any]:
        """The ``status`` fields the scheduler writes (Volcano's ``QueueStatus`` names).

        Not ``state``: the queue controller owns it (``controllers/queue``), and a copy
        written from this cycle's snapshot could undo a close the controller just wrote.
        """
        return {
            "pending": self.phases.get("Pending", 0),
            "running": self.phases.get("Running", 0),
            "inqueue": self.phases.get("Inqueue", 0),
            "unknown": self.phases.get("Unknown", 0),
            "completed": self.phases.get("Completed", 0),
            "allocated": self.allocated.to_list(),
        }
