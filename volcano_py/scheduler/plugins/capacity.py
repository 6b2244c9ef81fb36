"""``capacity``: queues get what their spec says they deserve (Volcano's capacity plugin).

Each queue's ``deserved`` is ``spec.deserved`` (raised to its guarantee, capped by its real
capability); its real capability is ``capability`` capped by what the cluster has left after
the other queues' guarantees. Then:

- queue order: lower share (max allocated/deserved) first;
- allocatable (inside every allocate trial, per task): allocated + request within the real
  capability of the queue **and of every ancestor** (``spec.parent``, up to ``root``) — the
  hierarchical check; a parent's allocated includes its children's;
- job enqueueable: minResources + allocated + inqueue within the real capability of the
  queue and its ancestors ("queue resource quota insufficient").

With ``enableHierarchy: true`` on the plugin's entry (Volcano's switch), deserved, guarantee
and real capability are computed down the tree instead (``support/queue_hierarchy.py``):
root sums its children's guarantee and deserved, and each child shares what its parent
really has after its siblings' guarantees.

A queue whose parent does not exist hangs under ``root``; a parent cycle is cut where it
closes (logged). Not carried over: the reclaim/preempt hooks and the DRA accounting.
"""

from __future__ import annotations

import logging

from volcano_py.api.queue import ROOT_QUEUE
from volcano_py.kube.changelog import ChangeLog
from volcano_py.scheduler.framework.arguments import Arguments
from volcano_py.scheduler.framework.session import Session
from volcano_py.scheduler.plugins.support.queue_attr import (
    QueueAttr,
    amounts,
    cluster_total,
    set_real_capability,
    total_guarantee,
)
from volcano_py.scheduler.plugins.support.queue_hierarchy import apply_hierarchy
from volcano_py.scheduler.plugins.support.queue_metrics import export_queue_attrs
from volcano_py.scheduler.plugins.support.quota_hooks import register_quota_hooks

log = logging.getLogger(__name__)


class CapacityPlugin:
    """Deserved and capability from the Queue spec, hierarchical."""

    name = "capacity"

    def __init__(self, args: Arguments) -> None:
        """No arguments are read."""
        self.args = args
        self.attrs: dict[str, QueueAttr] = {}

    def on_session_open(self, ssn: Session) -> None:
        """Build every queue's attributes and the parent chains; register the hooks."""
        total = cluster_total(ssn.nodes.values())
        guarantees = total_guarantee(ssn.queues.values())
        attrs = {name: QueueAttr(info) for name, info in ssn.queues.items()}
        for attr in attrs.values():
            set_real_capability(attr, total, guarantees)
            real = attr.real_capability or {}
            deserved = amounts(attr.info.deserved)
            for n, g in attr.guarantee.items():
                deserved[n] = max(deserved.get(n, 0.0), g)
            attr.deserved = {n: min(v, real.get(n, v)) for n, v in deserved.items()}
        chains = {name: self._chain(name, attrs, ssn.notes) for name in attrs}
        if ssn.hierarchy_enabled(self.name):
            parents = {n: c[1].name for n, c in chains.items() if len(c) > 1}
            apply_hierarchy(attrs, parents, total)
        # a parent holds what its children hold
        for name, attr in attrs.items():
            for ancestor in chains[name][1:]:
                for n, v in attr.info.allocated.items():
                    ancestor.allocated[n] = ancestor.allocated.get(n, 0.0) + v
                for n, v in attr.info.inqueue.items():
                    ancestor.inqueue[n] = ancestor.inqueue.get(n, 0.0) + v
        for attr in attrs.values():
            attr.update_share()
        self.attrs = attrs
        register_quota_hooks(
            ssn,
            self.name,
            attrs,
            limit=lambda a: a.real_capability,
            chain=lambda a: chains[a.name],
            with_overused=False,
        )

    @staticmethod
    def _chain(name: str, attrs: dict[str, QueueAttr], notes: ChangeLog) -> list[QueueAttr]:
        """The queue and its ancestors, nearest first."""
        chain = [attrs[name]]
        seen = {name}
        current = name
        while current != ROOT_QUEUE:
            parent = attrs[current].info.parent or ROOT_QUEUE
            if parent not in attrs:
                parent = ROOT_QUEUE
            if parent in seen:
                notes.warning(
                    log, f"queue/{name}", "queue %s: parent cycle at %s, cut there", name, parent
                )
                break
            seen.add(parent)
            chain.append(attrs[parent])
            current = parent
        return chain

    def on_session_close(self, ssn: Session) -> None:
        """Export the queues' deserved, real capacity and share, then drop the attributes."""
        export_queue_attrs(self.attrs.values())
        self.attrs = {}
