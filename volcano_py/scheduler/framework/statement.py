"""``Statement``: a reversible batch of allocations (Volcano's ``framework.Statement``).

Contract:

- ``allocate(task, node)`` places a pending task on a node in the session only: the node's
  used/idle change, the task becomes ``Allocated``, the allocate event handlers run (the
  topology plugin's resource cache follows).
- ``discard()`` undoes every allocation of the statement in reverse order — exactly: node
  resources, task state and plugin caches are what they were before the first ``allocate``.
  ``discard(keep=n)`` undoes only those after the first ``n`` (a trial inside a trial).
- ``commit()`` hands the allocations to the session's bind list and to the binder the
  session was opened with (``Binder``: the loop's starts their binds at once), and forgets
  them; nothing is written to the API server here.
- A statement is used once: after ``commit`` or ``discard`` it is empty and may be reused.

It needs of its session only a ``StatementTarget`` (``interface.py``): the node copies, the
event handlers, the bind list and the binder, so it sits below ``Session`` in the layers.
"""

from __future__ import annotations

from volcano_py.scheduler.api.task_info import TaskInfo, TaskStatus
from volcano_py.scheduler.framework.interface import StatementTarget


class Statement:
    """Allocations that are committed or discarded together."""

    def __init__(self, ssn: StatementTarget) -> None:
        """An empty statement on ``ssn``."""
        self.ssn = ssn
        self.operations: list[TaskInfo] = []

    def allocate(self, task: TaskInfo, node_name: str) -> None:
        """Place a pending task on ``node_name`` (session only)."""
        if task.status != TaskStatus.PENDING:
            raise ValueError(f"task {task.key} is {task.status.name}, not Pending")
        node = self.ssn.own_node(node_name)
        task.node_name = node_name
        task.status = TaskStatus.ALLOCATED
        node.add_task(task)
        self.ssn.fire_allocate(task)
        self.operations.append(task)

    def discard(self, keep: int = 0) -> None:
        """Undo every allocation after the first ``keep``, last first."""
        while len(self.operations) > keep:
            task = self.operations.pop()
            node = self.ssn.own_node(task.node_name)
            node.remove_task(task)
            self.ssn.fire_deallocate(task)
            task.status = TaskStatus.PENDING
            task.node_name = ""

    def commit(self) -> None:
        """Hand the allocations to the session's bind list (and its binder, to bind now)."""
        self.ssn.binds.extend(self.operations)
        if self.ssn.binder is not None and self.operations:
            self.ssn.binder.bind(list(self.operations))
        self.operations.clear()

    def __len__(self) -> int:
        """Allocations held."""
        return len(self.operations)
