"""A PodGroup's ``volcano.sh/nominated-hypernode`` annotation: its value, or a copy with another.

Preempt/reclaim write it (``eviction_writes``), the job updater drops it once it has served,
and the cache shows a written value until its echo (``cache/nominations.py``).
"""

from __future__ import annotations

from volcano_py.api import JSON
from volcano_py.api.constants import NOMINATED_HYPERNODE_ANNOTATION


def nomination(pg: JSON) -> str | None:
    """The PodGroup's nominated HyperNode annotation (None when absent)."""
    value = ((pg.get("metadata") or {}).get("annotations") or {}).get(
        NOMINATED_HYPERNODE_ANNOTATION
    )
    return str(value) if value else None


def with_nomination(pg: JSON, value: str | None) -> JSON:
    """A copy of ``pg`` whose nominated HyperNode annotation is ``value`` (None: removed)."""
    meta = dict(pg.get("metadata") or {})
    annotations = {
        k: v
        for k, v in (meta.get("annotations") or {}).items()
        if k != NOMINATED_HYPERNODE_ANNOTATION
    }
    if value:
        annotations[NOMINATED_HYPERNODE_ANNOTATION] = value
    meta["annotations"] = annotations
    return {**pg, "metadata": meta}
