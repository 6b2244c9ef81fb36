"""The HyperNode a PodGroup records in ``volcano.sh/job-allocated-hypernode``.

``JobStore`` indexes the jobs by it (a ``KeyIndex``) so that a HyperNode added or deleted
brings exactly the settled jobs recorded on it back into cycles
(``SchedulerCache.update_hypernode`` / ``delete_hypernode``), without scanning every PodGroup.
"""

from __future__ import annotations

from volcano_py.api import JSON
from volcano_py.api.constants import JOB_ALLOCATED_HYPERNODE_ANNOTATION


def allocated_of(pg: JSON | None) -> str:
    """The PodGroup's ``volcano.sh/job-allocated-hypernode`` ("" when none)."""
    annotations = ((pg or {}).get("metadata") or {}).get("annotations") or {}
    value = annotations.get(JOB_ALLOCATED_HYPERNODE_ANNOTATION, "")
    return value if isinstance(value, str) else ""
