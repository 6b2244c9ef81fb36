"""``proportion``: queues share the cluster by weight (Volcano's proportion plugin).

At session open every queue with PodGroups gets a ``QueueAttr``; the cluster's total
allocatable is dealt out by weight in rounds (water-filling): each unmet queue's deserved
grows by ``remaining x weight / total weight``, is capped by its real capability (capability,
and what the others' guarantees leave), by its request, and raised to its guarantee; a
queue whose request is met, or whose deserved stopped growing, drops out; the rounds stop
when nothing remains or nothing changed. Then:

- queue order: lower share (max allocated/deserved) first;
- overused: deserved <= allocated in every dimension — the queue gets nothing this cycle;
- allocatable (inside every allocate trial, per task): allocated + request <= deserved in
  the dimensions the task requests;
- job enqueueable: with a capability set, minResources + allocated + inqueue must stay within
  the real capability ("queue resource quota insufficient").

Not carried over: reclaim/preempt hooks (those actions are accepted, not implemented) and
the ``elastic`` deduction.
"""

from __future__ import annotations

from collections.abc import Callable

from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.queue_info import QueueInfo
from volcano_py.scheduler.api.resource import format_amount
from volcano_py.scheduler.api.task_info import TaskInfo
from volcano_py.scheduler.framework.arguments import Arguments
from volcano_py.scheduler.framework.session import EventHandler, Session
from volcano_py.scheduler.plugins.queue_attr import (
    Amounts,
    QueueAttr,
    amounts,
    cluster_total,
    fits,
    set_real_capability,
    total_guarantee,
)
from volcano_py.scheduler.plugins.queue_metrics import export_queue_attrs

MAX_ROUNDS = 64


class ProportionPlugin:
    """Weight-based deserved shares."""

    name = "proportion"

    def __init__(self, args: Arguments) -> None:
        """No arguments."""
        self.args = args
        self.attrs: dict[str, QueueAttr] = {}

    def on_session_open(self, ssn: Session) -> None:
        """Build the queue attributes, deal the cluster out, register the hooks."""
        total = cluster_total(ssn.nodes.values())
        attrs = build_attrs(ssn.queues, {job.queue for job in ssn.jobs.values()}, total)
        deal_by_weight(list(attrs.values()), total)
        self.attrs = attrs
        register_quota_hooks(ssn, self.name, attrs, limit=lambda a: a.deserved)

    def on_session_close(self, ssn: Session) -> None:
        """Export the queues' deserved, real capacity and share, then drop the attributes."""
        export_queue_attrs(self.attrs.values())
        self.attrs = {}


def build_attrs(
    queues: dict[str, QueueInfo], used: set[str], total: Amounts
) -> dict[str, QueueAttr]:
    """Attributes of the queues named by jobs, with their real capability."""
    guarantees = total_guarantee(queues.values())
    attrs: dict[str, QueueAttr] = {}
    for name in sorted(used):
        queue = queues.get(name)
        if queue is None:
            continue
        attr = QueueAttr(queue)
        set_real_capability(attr, total, guarantees)
        attrs[name] = attr
    return attrs


def deal_by_weight(attrs: list[QueueAttr], total: Amounts) -> None:
    """Volcano's water-filling of ``total`` over the queues' weights."""
    remaining = dict(total)
    meet: set[str] = set()
    for _ in range(MAX_ROUNDS):
        weight = sum(a.weight for a in attrs if a.name not in meet)
        if weight == 0:
            break
        before = dict(remaining)
        delta: Amounts = {}
        for attr in attrs:
            if attr.name in meet:
                continue
            old = dict(attr.deserved)
            grown = {
                n: attr.deserved.get(n, 0.0) + remaining.get(n, 0.0) * attr.weight / weight
                for n in set(attr.deserved) | set(remaining)
            }
            if attr.real_capability is not None:
                grown = {n: min(v, attr.real_capability.get(n, v)) for n, v in grown.items()}
            grown = {n: min(v, attr.request.get(n, 0.0)) for n, v in grown.items()}
            for n, g in attr.guarantee.items():
                grown[n] = max(grown.get(n, 0.0), g)
            attr.deserved = {n: v for n, v in grown.items() if v > 0}
            if not fits(attr.request, attr.deserved, attr.request) or _same(attr.deserved, old):
                meet.add(attr.name)
            for n in set(attr.deserved) | set(old):
                delta[n] = delta.get(n, 0.0) + attr.deserved.get(n, 0.0) - old.get(n, 0.0)
        remaining = {n: max(0.0, v - delta.get(n, 0.0)) for n, v in remaining.items()}
        if all(v <= 1e-6 for v in remaining.values()) or _same(remaining, before):
            break
    for attr in attrs:
        attr.update_share()


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


def _same(left: Amounts, right: Amounts) -> bool:
    names = set(left) | set(right)
    return all(abs(left.get(n, 0.0) - right.get(n, 0.0)) <= 1e-6 for n in names)
