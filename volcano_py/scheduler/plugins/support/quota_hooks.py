"""The quota hooks ``proportion`` and ``capacity`` share (Volcano's queue share/quota checks).

``register_quota_hooks`` registers, for a plugin holding one ``QueueAttr`` per queue, the queue
order by share, the overused and allocatable checks, the enqueue vote and its follower, the
reclaim vote and the event handlers that keep ``allocated`` in step with the session's
statements. The plugin says what a task is checked against (``limit``) and which queues a
placement counts against (``chain``).
"""

from __future__ import annotations

from collections.abc import Callable

from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.queue_info import QueueInfo
from volcano_py.scheduler.api.resource import format_short
from volcano_py.scheduler.api.task_info import TaskInfo
from volcano_py.scheduler.framework.interface import EventHandler
from volcano_py.scheduler.framework.session import Session
from volcano_py.scheduler.plugins.support.queue_attr import Amounts, QueueAttr, amounts, fits


class QuotaHooks:
    """A quota plugin's extension point functions over its ``QueueAttr`` map."""

    def __init__(
        self,
        ssn: Session,
        attrs: dict[str, QueueAttr],
        limit: Callable[[QueueAttr], Amounts | None],
        chain: Callable[[QueueAttr], list[QueueAttr]],
    ) -> None:
        """Hooks on ``ssn`` over ``attrs`` (see ``register_quota_hooks``)."""
        self.ssn = ssn
        self.attrs = attrs
        self.limit = limit
        self.chain = chain

    def queue_order(self, left: QueueInfo, right: QueueInfo) -> int:
        """Lower share first (equal or unknown: no opinion)."""
        lattr, rattr = self.attrs.get(left.name), self.attrs.get(right.name)
        if lattr is None or rattr is None or lattr.share == rattr.share:
            return 0
        return -1 if lattr.share < rattr.share else 1

    def overused(self, queue: QueueInfo) -> bool:
        """The queue has a deserved share and is above it."""
        attr = self.attrs.get(queue.name)
        return attr is not None and bool(attr.deserved) and attr.overused()

    def allocatable(self, queue: QueueInfo, task: TaskInfo) -> bool:
        """``task`` fits the limit of its queue and of every queue it counts against."""
        attr = self.attrs.get(queue.name)
        if attr is None:
            return True
        for each in self.chain(attr):
            bound = self.limit(each)
            if bound is not None and each.within(bound, task):
                return False
        return True

    def enqueueable(self, job: JobInfo) -> str | None:
        """None, or why ``job``'s minResources exceed a real capability on its chain."""
        attr = self.attrs.get(job.queue)
        need = amounts(job.min_resources)
        if attr is None or not need:
            return None
        for each in self.chain(attr):
            if each.capability is None or each.real_capability is None:
                continue
            total = {
                n: v + each.allocated.get(n, 0.0) + each.inqueue.get(n, 0.0)
                for n, v in need.items()
            }
            short = fits(total, each.real_capability, need)
            if short:
                listed = ", ".join(
                    f"{n} short by "
                    f"{format_short(n, int(total[n] - each.real_capability.get(n, 0.0)))}"
                    for n in short
                )
                return f"queue resource quota insufficient: queue {each.name}: {listed}"
        return None

    def enqueued(self, job: JobInfo) -> None:
        """Count ``job``'s minResources as inqueue along its chain."""
        attr = self.attrs.get(job.queue)
        if attr is not None:
            for each in self.chain(attr):
                for n, v in amounts(job.inqueue_need(job.min_resources)).items():
                    each.inqueue[n] = each.inqueue.get(n, 0.0) + v

    def follow(self, sign: float) -> Callable[[TaskInfo], None]:
        """An event handler adding (``sign`` 1) or removing (-1) a task along its chain."""

        def on_event(task: TaskInfo) -> None:
            job = self.ssn.jobs.get(task.job)
            attr = self.attrs.get(job.queue) if job is not None else None
            if attr is not None:
                for each in self.chain(attr):
                    each.add(task, sign)

        return on_event

    def reclaimable(self, reclaimer: TaskInfo, candidates: list[TaskInfo]) -> list[TaskInfo]:
        """Pods of other queues, taken while their queue stays above its deserved share."""
        mine = self.ssn.jobs.get(reclaimer.job)
        left: dict[str, dict[str, float]] = {}
        victims = []
        for task in candidates:
            job = self.ssn.jobs.get(task.job)
            attr = self.attrs.get(job.queue) if job is not None else None
            if attr is None or not attr.deserved or (mine is not None and attr.name == mine.queue):
                continue
            allocated = left.setdefault(attr.name, dict(attr.allocated))
            if any(allocated.get(n, 0.0) > v + 1e-9 for n, v in attr.deserved.items()):
                victims.append(task)
                for n, v in task.resreq.items():
                    allocated[n] = allocated.get(n, 0.0) - v
        return victims


def register_quota_hooks(
    ssn: Session,
    plugin: str,
    attrs: dict[str, QueueAttr],
    *,
    limit: Callable[[QueueAttr], Amounts | None],
    chain: Callable[[QueueAttr], list[QueueAttr]] = lambda a: [a],
    with_overused: bool = True,
) -> None:
    """Queue order by share, overused, allocatable, enqueueable and the allocation followers.

    ``limit(attr)``: what allocate checks a task against (proportion: deserved; capacity: real
    capability). ``chain(attr)``: the queues a placement counts against (capacity: the queue and
    its ancestors).
    """
    hooks = QuotaHooks(ssn, attrs, limit, chain)
    ssn.add_reclaimable_fn(plugin, hooks.reclaimable)
    ssn.add_queue_order_fn(plugin, hooks.queue_order)
    if with_overused:
        ssn.add_overused_fn(plugin, hooks.overused)
    ssn.add_allocatable_fn(plugin, hooks.allocatable)
    ssn.add_job_enqueueable_fn(plugin, hooks.enqueueable)
    ssn.add_job_enqueued_fn(plugin, hooks.enqueued)
    ssn.add_event_handler(EventHandler(hooks.follow(1.0), hooks.follow(-1.0)))
