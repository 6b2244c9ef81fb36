"""``NodeStore``: the cache's nodes with the tasks placed on them, shared copy-on-write.

Every bound (or assumed) task counts on its node, whoever scheduled it. A task placed on a
node the cache has not seen yet is remembered by node name and added when the Node arrives.
``share`` hands a snapshot the current ``NodeInfo`` objects; the store clones a node before
changing one a snapshot still holds (``_own``), so a cycle never copies the nodes it only
reads. The cache calls it under its lock.
"""

from __future__ import annotations

from volcano_py.api import JSON
from volcano_py.scheduler.api.node_info import NodeInfo
from volcano_py.scheduler.api.task_info import TaskInfo
from volcano_py.scheduler.cache.parking import node_fit


class NodeStore:
    """Node name -> ``NodeInfo``, and node name -> the tasks placed there."""

    __slots__ = ("_nodes", "_shared", "_tasks_by_node")

    def __init__(self) -> None:
        self._nodes: dict[str, NodeInfo] = {}
        self._shared: set[str] = set()
        self._tasks_by_node: dict[str, dict[str, TaskInfo]] = {}

    def _own(self, name: str) -> NodeInfo | None:
        """The store's node, cloned first if a snapshot still holds it."""
        node = self._nodes.get(name)
        if node is not None and name in self._shared:
            node = node.clone()
            self._nodes[name] = node
            self._shared.discard(name)
        return node

    def update(self, name: str, obj: JSON) -> tuple[NodeInfo, bool]:
        """A Node was added or changed: its ``NodeInfo``, and whether it is new."""
        node = self._own(name)
        if node is None:
            node = NodeInfo(obj)
            self._nodes[name] = node
            for task in self._tasks_by_node.get(name, {}).values():
                node.add_task(task)
            return node, True
        return node, False

    @staticmethod
    def fit_changed(node: NodeInfo, obj: JSON) -> bool:
        """Whether ``obj`` changes what of ``node`` decides a fit (not a heartbeat)."""
        return node_fit(node.node) != node_fit(obj)

    def delete(self, name: str) -> None:
        """A Node went away (its tasks stay remembered until they are deleted)."""
        self._nodes.pop(name, None)
        self._shared.discard(name)

    def add_task(self, key: str, task: TaskInfo) -> None:
        """``task`` (placed) now counts on its node."""
        self._tasks_by_node.setdefault(task.node_name, {})[key] = task
        node = self._own(task.node_name)
        if node is not None:
            node.add_task(task)

    def remove_task(self, key: str, task: TaskInfo) -> None:
        """``task`` (placed) no longer counts on its node."""
        self._tasks_by_node.get(task.node_name, {}).pop(key, None)
        node = self._own(task.node_name)
        if node is not None:
            node.remove_task(task)

    def share(self) -> dict[str, NodeInfo]:
        """The nodes for a snapshot: held by it until the store changes one (cloned then)."""
        self._shared = set(self._nodes)
        return dict(self._nodes)
