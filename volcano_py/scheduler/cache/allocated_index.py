"""Which jobs' PodGroups name each HyperNode in ``volcano.sh/job-allocated-hypernode``.

The cache keeps this index so that a HyperNode added or deleted brings exactly the settled
jobs recorded on it back into cycles (``SchedulerCache.update_hypernode`` /
``delete_hypernode``), without scanning every PodGroup.
"""

from __future__ import annotations

from volcano_py.api import JSON
from volcano_py.api.constants import JOB_ALLOCATED_HYPERNODE_ANNOTATION


def allocated_of(pg: JSON | None) -> str:
    """The PodGroup's ``volcano.sh/job-allocated-hypernode`` ("" when none)."""
    annotations = ((pg or {}).get("metadata") or {}).get("annotations") or {}
    value = annotations.get(JOB_ALLOCATED_HYPERNODE_ANNOTATION, "")
    return value if isinstance(value, str) else ""


class AllocatedIndex:
    """HyperNode name -> keys of the jobs whose PodGroup's annotation names it."""

    __slots__ = ("_holders",)

    def __init__(self) -> None:
        self._holders: dict[str, set[str]] = {}

    def index(self, key: str, old: JSON | None, new: JSON | None) -> None:
        """The PodGroup ``key`` changed from ``old`` to ``new`` (None: absent)."""
        before, after = allocated_of(old), allocated_of(new)
        if before == after:
            return
        if before:
            holders = self._holders.get(before)
            if holders is not None:
                holders.discard(key)
                if not holders:
                    del self._holders[before]
        if after:
            self._holders.setdefault(after, set()).add(key)

    def holders(self, hypernode: str) -> set[str]:
        """The jobs recorded on ``hypernode`` (read-only; empty when none)."""
        return self._holders.get(hypernode, set())
