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
        # Workload key -> the keys of the groups naming it (a dict keeps their arrival order)
        self._naming: dict[str, dict[str, None]] = {}

    def __contains__(self, key: object) -> bool:
        return key in self._groups

    def get(self, key: str) -> JSON | None:
        """The group held under ``key``."""
        return self._groups.get(key)

    def put(self, key: str, pg: JSON) -> None:
        """Hold ``pg`` under ``key`` (replacing what was, and the Workload it named)."""
        self.pop(key)
        self._groups[key] = pg
        workload = named_workload(pg)
        if workload:
            self._naming.setdefault(workload, {})[key] = None

    def pop(self, key: str) -> JSON | None:
        """Drop the group under ``key`` and return it (None when none was held)."""
        pg = self._groups.pop(key, None)
        workload = named_workload(pg) if pg is not None else ""
        keys = self._naming.get(workload)
        if keys is not None:
            keys.pop(key, None)
            if not keys:
                del self._naming[workload]
        return pg

    def naming(self, workload: str | None) -> Iterator[tuple[str, JSON]]:
        """The top-level native PodGroups naming Workload ``workload`` (None: every one).

        A snapshot: the caller may put and pop while it iterates.
        """
        if workload is None:
            keys = [k for k, pg in self._groups.items() if is_native(pg) and not parent_name(pg)]
        else:
            keys = list(self._naming.get(workload, ()))
        for key in keys:
            yield key, self._groups[key]
