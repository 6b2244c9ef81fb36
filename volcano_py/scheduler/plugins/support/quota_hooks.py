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
from volcano_py.scheduler.api.resource import format_amount
from volcano_py.scheduler.api.task_info import TaskInfo
from volcano_py.scheduler.framework.interface import EventHandler
from volcano_py.scheduler.framework.session import Session
from volcano_py.scheduler.plugins.support.queue_attr import Amounts, QueueAttr, amounts, fits


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

    def queue_order(left: QueueInfo, right: QueueInfo) -> int:
        lattr, rattr = attrs.get(left.name), attrs.get(right.name)
        if lattr is None or rattr is None or lattr.share == rattr.share:
            return 0
        return -1 if lattr.share < rattr.share else 1

    def overused(queue: QueueInfo) -> bool:
        attr = attrs.get(queue.name)
        return attr is not None and bool(attr.deserved) and attr.overused()

    def allocatable(queue: QueueInfo, task: TaskInfo) -> bool:
        attr = attrs.get(queue.name)
        if attr is None:
            return True
        for each in chain(attr):
            bound = limit(each)
            if bound is not None and each.within(bound, task):
                return False
        return True

    def enqueueable(job: JobInfo) -> str | None:
        attr = attrs.get(job.queue)
        need = amounts(job.min_resources)
        if attr is None or not need:
            return None
        for each in chain(attr):
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
                    f"{format_amount(n, int(total[n] - each.real_capability.get(n, 0.0)))}"
                    for n in short
                )
                return f"queue resource quota insufficient: queue {each.name}: {listed}"
        return None

    def enqueued(job: JobInfo) -> None:
        attr = attrs.get(job.queue)
        if attr is not None:
            for each in chain(attr):
                for n, v in amounts(job.min_resources).items():
                    each.inqueue[n] = each.inqueue.get(n, 0.0) + v

    def follow(sign: float) -> Callable[[TaskInfo], None]:
        def on_event(task: TaskInfo) -> None:
            job = ssn.jobs.get(task.job)
            attr = attrs.get(job.queue) if job is not None else None
            if attr is not None:
                for each in chain(attr):
                    each.add(task, sign)

        return on_event

    def reclaimable(reclaimer: TaskInfo, candidates: list[TaskInfo]) -> list[TaskInfo]:
        """Pods of other queues, taken while their queue stays above its deserved share."""
        mine = ssn.jobs.get(reclaimer.job)
        left: dict[str, dict[str, float]] = {}
        victims = []
        for task in candidates:
            job = ssn.jobs.get(task.job)
            attr = attrs.get(job.queue) if job is not None else None
            if attr is None or not attr.deserved or (mine is not None and attr.name == mine.queue):
                continue
            allocated = left.setdefault(attr.name, dict(attr.allocated))
            if any(allocated.get(n, 0.0) > v + 1e-9 for n, v in attr.deserved.items()):
                victims.append(task)
                for n, v in task.resreq.items():
                    allocated[n] = allocated.get(n, 0.0) - v
        return victims

    ssn.add_reclaimable_fn(plugin, reclaimable)
    ssn.add_queue_order_fn(plugin, queue_order)
    if with_overused:
        ssn.add_overused_fn(plugin, overused)
    ssn.add_allocatable_fn(plugin, allocatable)
    ssn.add_job_enqueueable_fn(plugin, enqueueable)
    ssn.add_job_enqueued_fn(plugin, enqueued)
    ssn.add_event_handler(EventHandler(follow(1.0), follow(-1.0)))
