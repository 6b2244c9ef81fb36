"""``conformance``: never evict what Kubernetes treats as critical (Volcano's conformance).

Registers an evictable filter, and the same as preemptable and reclaimable victim functions,
that drops every candidate in ``kube-system`` and every pod with priority class
``system-cluster-critical`` or ``system-node-critical``. volcano-py's allocate and backfill
never evict; preempt and reclaim ask ``Session.preemptable`` / ``reclaimable`` and so never
touch those pods.
"""

from __future__ import annotations

from volcano_py.scheduler.api.task_info import TaskInfo
from volcano_py.scheduler.framework.arguments import Arguments
from volcano_py.scheduler.framework.session import Session

CRITICAL_CLASSES = frozenset({"system-cluster-critical", "system-node-critical"})
SYSTEM_NAMESPACE = "kube-system"


def is_critical(task: TaskInfo) -> bool:
    """Whether ``task`` must never be evicted."""
    if task.namespace == SYSTEM_NAMESPACE:
        return True
    return (task.pod.get("spec") or {}).get("priorityClassName") in CRITICAL_CLASSES


class ConformancePlugin:
    """Keeps critical pods out of every eviction."""

    name = "conformance"

    def __init__(self, args: Arguments) -> None:
        """No arguments are read."""
        self.args = args

    def on_session_open(self, ssn: Session) -> None:
        """Register the filter."""
        ssn.add_evictable_fn(self.name, victims)
        ssn.add_preemptable_fn(self.name, lambda _p, c: victims(c))
        ssn.add_reclaimable_fn(self.name, lambda _p, c: victims(c))

    def on_session_close(self, ssn: Session) -> None:
        """Nothing to release."""


def victims(candidates: list[TaskInfo]) -> list[TaskInfo]:
    """The candidates that are not critical."""
    return [t for t in candidates if not is_critical(t)]
