"""``CompositeGroups``: the cache's native CompositePodGroups and their child PodGroups.

A root CompositePodGroup is one job (``api/native_composite.py``): the pods of its child
PodGroups are its tasks. This part keeps the composites and the children as they came and
says which job a child's pods belong to (``job_of``): the parent's ``namespace/name`` while
the child PodGroup names one, the child's own otherwise. A child whose parent does not exist
(yet) leaves its pods in a job with no PodGroup: they wait, as the pods of a missing PodGroup
do. The cache calls it under its lock.
"""

from __future__ import annotations

from volcano_py.api import JSON
from volcano_py.api.meta import object_key
from volcano_py.api.native_composite import composite_view, parent_name
from volcano_py.scheduler.cache.key_index import KeyIndex


class CompositeGroups:
    """CompositePodGroups and the native PodGroups naming one as their parent, by key."""

    __slots__ = ("_by_parent", "_children", "_composites")

    def __init__(self) -> None:
        self._composites: dict[str, JSON] = {}
        self._children: dict[str, JSON] = {}  # child PodGroup key -> the PodGroup
        # parent key -> its children's keys: a view or a status write reads its own children
        self._by_parent = KeyIndex()

    def has_child(self, key: str) -> bool:
        """Whether ``key`` is a cached child PodGroup."""
        return key in self._children

    def job_of(self, job: str) -> str:
        """The job the pods naming ``job`` (``namespace/name`` of a PodGroup) belong to."""
        child = self._children.get(job)
        if child is None:
            return job
        return f"{job.split('/', 1)[0]}/{parent_name(child)}"

    def put_child(self, pg: JSON) -> str:
        """A child PodGroup was added or changed; its parent's key."""
        key = object_key(pg)
        before = self.job_of(key) if key in self._children else ""
        self._children[key] = pg
        parent = self.job_of(key)
        self._by_parent.move(key, before, parent)
        return parent

    def remove_child(self, pg: JSON) -> str:
        """A child PodGroup was deleted; its parent's key."""
        key = object_key(pg)
        parent = self.job_of(key)
        if self._children.pop(key, None) is not None:
            self._by_parent.move(key, parent, "")
        return parent

    def put(self, composite: JSON) -> None:
        """A CompositePodGroup was added or changed."""
        self._composites[object_key(composite)] = composite

    def remove(self, composite: JSON) -> None:
        """A CompositePodGroup was deleted."""
        self._composites.pop(object_key(composite), None)

    def children_of(self, key: str) -> list[JSON]:
        """The child PodGroups naming the composite ``key`` as their parent, by name."""
        return [self._children[child] for child in sorted(self._by_parent.keys(key))]

    def view(self, key: str, status: JSON | None) -> JSON | None:
        """The job's Volcano-shaped view of the composite ``key`` (None when not cached)."""
        composite = self._composites.get(key)
        if composite is None:
            return None
        return composite_view(composite, self.children_of(key), status)
