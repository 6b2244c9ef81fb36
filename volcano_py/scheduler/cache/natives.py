"""``NativeGroups``: the native PodGroups the cache holds, and which Workload each names.

A Workload's change re-reviews the PodGroups that name it (``SchedulerCache._review_workload``:
one that waited for it may place now). Found by a scan of every native PodGroup, N Workloads
arriving after their N PodGroups (an informer's first lists, a controller creating both)
cost N x N under the cache's lock: 4,000 of each took 15 s of CPU. The index keeps the answer
per Workload, so each change costs what names it.
"""

from __future__ import annotations

from collections.abc import Iterator

from volcano_py.api import JSON
from volcano_py.api.native_composite import parent_name
from volcano_py.api.native_groups import is_native, workload_ref
from volcano_py.scheduler.cache.key_index import KeyIndex


def named_workload(pg: JSON) -> str:
    """``namespace/name`` of the Workload a top-level native PodGroup names ("" for none)."""
    if not is_native(pg) or parent_name(pg):
        return ""
    name = workload_ref(pg)[0]
    if not name:
        return ""
    return f"{(pg.get('metadata') or {}).get('namespace', '')}/{name}"


class NativeGroups:
    """Key -> a native PodGroup (or CompositePodGroup) as it came, indexed by its Workload.

    Not thread-safe: the cache's lock guards it.
    """

    def __init__(self) -> None:
        """Empty."""
        self._groups: dict[str, JSON] = {}
        self._naming = KeyIndex()  # Workload key -> the keys of the groups naming it

    def __contains__(self, key: object) -> bool:
        return key in self._groups

    def get(self, key: str) -> JSON | None:
        """The group held under ``key``."""
        return self._groups.get(key)

    def put(self, key: str, pg: JSON) -> None:
        """Hold ``pg`` under ``key`` (replacing what was, and the Workload it named)."""
        old = self._groups.get(key)
        self._groups[key] = pg
        self._naming.move(key, named_workload(old) if old is not None else "", named_workload(pg))

    def pop(self, key: str) -> JSON | None:
        """Drop the group under ``key`` and return it (None when none was held)."""
        pg = self._groups.pop(key, None)
        if pg is not None:
            self._naming.move(key, named_workload(pg), "")
        return pg

    def naming(self, workload: str | None) -> Iterator[tuple[str, JSON]]:
        """The top-level native PodGroups naming Workload ``workload`` (None: every one).

        A snapshot: the caller may put and pop while it iterates.
        """
        if workload is None:
            keys = [k for k, pg in self._groups.items() if is_native(pg) and not parent_name(pg)]
        else:
            keys = self._naming.keys(workload)
        for key in keys:
            yield key, self._groups[key]
