"""``QueueAttr``: a quota plugin's per-session view of one queue (Volcano's ``queueAttr``).

Shared by ``proportion`` and ``capacity``: amounts are ``dict[name, float]`` over resource
names (cpu in milli-cores, memory in bytes, scalars in milli-units, as ``Resource.get``).
``allocated`` starts from the snapshot's ``QueueInfo`` (every PodGroup of the queue, settled
ones included) and follows the session's allocations through event handlers, so the share
and the quota checks see what the current trial has placed and a discarded trial gives it
back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from volcano_py.scheduler.api.node_info import NodeInfo
from volcano_py.scheduler.api.queue_info import QueueInfo
from volcano_py.scheduler.api.resource import Resource
from volcano_py.scheduler.api.task_info import TaskInfo

Amounts = dict[str, float]


def amounts(res: Resource) -> Amounts:
    """The non-zero dimensions of ``res`` as floats."""
    return {name: float(amount) for name, amount in res.items()}


def fits(need: Mapping[str, float], limit: Mapping[str, float], dims: Iterable[str]) -> list[str]:
    """The names among ``dims`` where ``need`` exceeds ``limit`` (a missing limit is 0)."""
    return [n for n in dims if need.get(n, 0.0) > limit.get(n, 0.0) + 1e-6]


class QueueAttr:
    """Deserved, allocated, request, inqueue, capability and share of one queue."""

    __slots__ = (
        "allocated",
        "capability",
        "deserved",
        "guarantee",
        "info",
        "inqueue",
        "name",
        "real_capability",
        "request",
        "share",
        "weight",
    )

    def __init__(self, info: QueueInfo) -> None:
        """Start from the snapshot's numbers."""
        self.info = info
        self.name = info.name
        self.weight = info.weight
        self.allocated = amounts(info.allocated)
        self.request = amounts(info.request)
        self.inqueue = amounts(info.inqueue)
        self.guarantee = amounts(info.guarantee)
        self.capability: Amounts | None = None
        if info.capability_names:
            self.capability = {n: float(info.capability.get(n)) for n in info.capability_names}
        self.real_capability: Amounts | None = None
        self.deserved: Amounts = {}
        self.share = 0.0

    def update_share(self) -> None:
        """The largest allocated/deserved ratio over the deserved dimensions."""
        share = 0.0
        for name, deserved in self.deserved.items():
            used = self.allocated.get(name, 0.0)
            ratio = (1.0 if used > 0 else 0.0) if deserved <= 0 else used / deserved
            share = max(share, ratio)
        self.share = share

    def add(self, task: TaskInfo, sign: float) -> None:
        """Follow one allocation (+1) or deallocation (-1)."""
        for name, amount in task.resreq.items():
            self.allocated[name] = self.allocated.get(name, 0.0) + sign * amount
        self.update_share()

    def overused(self) -> bool:
        """Volcano: deserved <= allocated in every dimension deserved names."""
        return all(self.allocated.get(n, 0.0) >= v for n, v in self.deserved.items())

    def within(self, limit: Mapping[str, float], task: TaskInfo) -> list[str]:
        """Dimensions of the task's request where allocated + request would pass ``limit``."""
        future = {n: self.allocated.get(n, 0.0) + a for n, a in task.resreq.items()}
        return fits(future, limit, (n for n, _ in task.resreq.items()))


def cluster_total(nodes: Iterable[NodeInfo]) -> Amounts:
    """The nodes' allocatable, summed."""
    return _summed(node.allocatable.items() for node in nodes)


def total_guarantee(queues: Iterable[QueueInfo]) -> Amounts:
    """Every queue's guarantee, summed."""
    return _summed(queue.guarantee.items() for queue in queues)


def _summed(parts: Iterable[Iterable[tuple[str, float]]]) -> Amounts:
    total: Amounts = {}
    for items in parts:
        for name, amount in items:
            total[name] = total.get(name, 0.0) + amount
    return total


def set_real_capability(attr: QueueAttr, total: Amounts, guarantees: Amounts) -> None:
    """Volcano's realCapability: the others' guarantees' leftover plus its own, capped."""
    real = {
        n: max(0.0, total.get(n, 0.0) - guarantees.get(n, 0.0)) + attr.guarantee.get(n, 0.0)
        for n in set(total) | set(attr.guarantee)
    }
    if attr.capability is not None:
        for n, cap in attr.capability.items():
            real[n] = min(real.get(n, cap), cap)
    attr.real_capability = real
