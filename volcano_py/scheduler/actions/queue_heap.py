"""``QueueHeap``: Volcano's ``util.PriorityQueue`` of queues (Go's ``container/heap``).

Volcano's allocate keeps the queues in such a heap and pushes a queue back after each turn.
The heap asks the comparator only while it sifts, so when a turn moves the shares of queues
that are waiting (hierarchical DRF: one queue's task changes its parent's share, and so the
order of its siblings' cousins), their places are not revised until they are sifted again.
The order queues get their turns, and so what each gets, follows that; ``allocate``'s
one-task-per-turn round (``Session.one_task_per_turn``) uses this heap so that the shares
come out as Volcano's. Push and pop sift exactly as ``container/heap`` does.
"""

from __future__ import annotations

from collections.abc import Callable


class QueueHeap:
    """Queue names in a binary heap ordered by ``less`` (asked at each sift)."""

    def __init__(self, less: Callable[[str, str], bool]) -> None:
        """An empty heap; ``less(a, b)``: queue ``a`` goes before ``b`` now."""
        self._less = less
        self._items: list[str] = []

    def __len__(self) -> int:
        """How many queues wait."""
        return len(self._items)

    def push(self, name: str) -> None:
        """Add ``name`` at the end and sift it up (``heap.Push``)."""
        self._items.append(name)
        self._up(len(self._items) - 1)

    def pop(self) -> str:
        """Take the top: swap it with the last, sift the new top down (``heap.Pop``)."""
        items = self._items
        last = len(items) - 1
        items[0], items[last] = items[last], items[0]
        self._down(0, last)
        return items.pop()

    def _up(self, j: int) -> None:
        items = self._items
        while j > 0:
            i = (j - 1) // 2
            if not self._less(items[j], items[i]):
                break
            items[i], items[j] = items[j], items[i]
            j = i

    def _down(self, i: int, n: int) -> None:
        items = self._items
        while True:
            j = 2 * i + 1
            if j >= n:
                break
            if j + 1 < n and self._less(items[j + 1], items[j]):
                j += 1
            if not self._less(items[j], items[i]):
                break
            items[i], items[j] = items[j], items[i]
            i = j
