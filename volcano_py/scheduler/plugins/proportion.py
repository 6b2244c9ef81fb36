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

from volcano_py.scheduler.api.queue_info import QueueInfo
from volcano_py.scheduler.framework.arguments import Arguments
from volcano_py.scheduler.framework.session import Session
from volcano_py.scheduler.plugins.support.queue_attr import (
    Amounts,
    QueueAttr,
    cluster_total,
    fits,
    set_real_capability,
    total_guarantee,
)
from volcano_py.scheduler.plugins.support.queue_metrics import export_queue_attrs
from volcano_py.scheduler.plugins.support.quota_hooks import register_quota_hooks

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


def _same(left: Amounts, right: Amounts) -> bool:
    names = set(left) | set(right)
    return all(abs(left.get(n, 0.0) - right.get(n, 0.0)) <= 1e-6 for n in names)
