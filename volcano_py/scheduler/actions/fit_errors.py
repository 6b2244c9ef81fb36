"""Messages a person can act on when a job cannot be placed.

- First, when a pod is bigger than any node even empty (so no amount of waiting or
  preempting helps): ``no single node can hold pod ns/big-0 (memory 100Gi > 64Gi)``, the
  request against the largest allocatable of that resource on any node.
- Per node, Kubernetes style: ``0/12 nodes are available: 4 Insufficient nvidia.com/gpu,
  8 node(s) didn't match Pod's node affinity/selector.``
- When no node took a pod for a reason other than room (not ready, a taint, a selector), that
  node message comes before the tier counts, which then do not call the tier "fragmented".
- Per tier, for topology jobs: ``tier 1: 0/96 fit (nvidia.com/gpu short by 4); tier 2: 0/12
  fit (nvidia.com/gpu short by 4)`` — how many HyperNodes of each allowed tier were tried,
  how many could hold the gang, and what the roomiest of them lacked.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field

from volcano_py.scheduler.api.node_info import NodeInfo
from volcano_py.scheduler.api.resource import Resource, format_amount, format_short
from volcano_py.scheduler.api.task_info import TaskInfo


def is_resource_reason(reason: str) -> bool:
    """A predicate reason about room (``Insufficient <resource>``, ``Too many pods``)."""
    return reason.startswith("Insufficient ") or reason == "Too many pods"


def nodes_message(total: int, reasons: Counter[str], available: int = 0) -> str:
    """``<available>/N nodes are available: <count> <reason>, ...`` (kube-scheduler's words)."""
    if not reasons:
        return f"{available}/{total} nodes are available."
    parts = ", ".join(f"{n} {r}" for r, n in sorted(reasons.items(), key=lambda x: (-x[1], x[0])))
    return f"{available}/{total} nodes are available: {parts}."


@dataclass(slots=True)
class TierReport:
    """What happened in one tier."""

    tier: int
    total: int = 0
    fit: int = 0
    short: dict[str, int] = field(default_factory=dict)
    fragmented: bool = False

    def text(self) -> str:
        """``tier T: fit/total fit (...)``."""
        detail = ""
        if self.short:
            detail = (
                " ("
                + ", ".join(
                    f"{name} short by {format_short(name, amount)}"
                    for name, amount in sorted(self.short.items())
                )
                + ")"
            )
        elif self.fragmented and self.fit == 0 and self.total:
            detail = " (enough in total, but no node set fits every task)"
        return f"tier {self.tier}: {self.fit}/{self.total} fit{detail}"


def tier_shortfall(need: Resource, idles: list[Resource]) -> dict[str, int]:
    """Per resource, what the HyperNode with the most of it still lacks (positive only)."""
    short: dict[str, int] = {}
    for name, amount in need.items():
        best = max((idle.get(name) for idle in idles), default=0)
        if amount > best:
            short[name] = amount - best
    return short


def tiers_message(reports: list[TierReport]) -> str:
    """All tier reports joined with ``; ``."""
    return "; ".join(r.text() for r in reports)


def oversized_message(tasks: list[TaskInfo], nodes: Collection[NodeInfo], largest: Resource) -> str:
    """``no single node can hold pod ...`` when a task exceeds every node's allocatable, or ``""``.

    ``largest``: per resource, the most any node has (``Session.largest_allocatable``). Names
    the first such task and what it asks against that for each resource it exceeds; when every
    resource exists somewhere but never together on one node, says so. Cheap on the failure
    path it runs on: one verdict per distinct request, a request above ``largest`` needs no
    scan, and a scan stops at the first node that could hold the pod.
    """
    verdicts: dict[tuple[tuple[str, int], ...], bool] = {}  # a gang's pods mostly ask alike
    oversized = []
    for t in tasks:
        ask = tuple(t.resreq.items())
        if ask not in verdicts:
            verdicts[ask] = not t.resreq.less_equal(largest) or not any(
                t.resreq.less_equal(n.allocatable) for n in nodes
            )
        if verdicts[ask]:
            oversized.append(t)
    if not oversized or not nodes:
        return ""
    task = oversized[0]
    over = [
        f"{name} {format_amount(name, amount)} > {format_amount(name, largest.get(name))}"
        for name, amount in task.resreq.items()
        if amount > largest.get(name)
    ]
    if over:
        detail = ", ".join(over)
    else:
        asked = " and ".join(f"{n} {format_amount(n, a)}" for n, a in task.resreq.items())
        detail = f"no node has {asked} together"
    more = len(oversized) - 1
    others = f", nor {more} more pod{'s' if more > 1 else ''} of the job" if more else ""
    return f"no single node can hold pod {task.key} ({detail}){others}"
