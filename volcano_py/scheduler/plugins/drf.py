"""``drf``: jobs with the lower dominant resource share go first (Volcano's drf job order).

A job's share is, over the resources of the cluster, the largest ratio of what its placed
tasks hold to the cluster's total allocatable. Shares follow allocations in the session
(event handlers), so the next job picked sees the last placement. At session close the
shares are exported as Volcano's ``volcano_job_share`` (``support/job_metrics.py``).

With ``enableHierarchy: true`` on its entry (Volcano's hdrf), the queues' annotations
``volcano.sh/hierarchy`` / ``volcano.sh/hierarchy-weights`` make a tree
(``support/hdrf.py``): queues are ordered by their weighted shares level by level, reclaim
takes only from queues still ahead after the move, and allocate gives one task per turn
past the gangs' minimums (``Session.one_task_per_turn``) so that what is left is split by
the tree. Volcano's drf preempt hook (job shares within a queue) is not carried over.
"""

from __future__ import annotations

from collections.abc import Callable

from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.resource import Resource
from volcano_py.scheduler.api.task_info import OCCUPYING, TaskInfo
from volcano_py.scheduler.framework.arguments import Arguments
from volcano_py.scheduler.framework.interface import EventHandler
from volcano_py.scheduler.framework.session import Session
from volcano_py.scheduler.plugins.support.hdrf import HierarchicalDrf
from volcano_py.scheduler.plugins.support.job_metrics import export_job_shares


class DrfPlugin:
    """Dominant-resource-fairness job order."""

    name = "drf"

    def __init__(self, args: Arguments) -> None:
        """No arguments are read."""
        self.args = args
        self.total = Resource()
        self.allocated: dict[str, Resource] = {}
        self.shares: dict[str, float] = {}
        self.hdrf: HierarchicalDrf | None = None

    def on_session_open(self, ssn: Session) -> None:
        """Sum the cluster, the jobs' placed tasks; register the order and the followers."""
        self.total = Resource()
        for node in ssn.nodes.values():
            self.total.add(node.allocatable)
        for job in ssn.jobs.values():
            held = Resource()
            for task in job.tasks.values():
                if task.status in OCCUPYING:
                    held.add(task.resreq)
            self.allocated[job.key] = held
            self.shares[job.key] = self.share(held)
        ssn.add_job_order_fn(self.name, self.job_order)
        ssn.add_event_handler(EventHandler(self._follow(1), self._follow(-1)))
        if ssn.hierarchy_enabled(self.name):
            self.hdrf = HierarchicalDrf(ssn, self.total, self.allocated)
            ssn.add_queue_order_fn(self.name, self.hdrf.queue_order)
            ssn.add_reclaimable_fn(self.name, self.hdrf.reclaimable)
            ssn.one_task_per_turn = True

    def share(self, held: Resource) -> float:
        """The dominant share of ``held``."""
        best = 0.0
        for name, amount in held.items():
            total = self.total.get(name)
            if total > 0:
                best = max(best, amount / total)
        return best

    def job_order(self, left: JobInfo, right: JobInfo) -> int:
        """Lower share first; equal shares leave the order to the next plugin."""
        ls, rs = self.shares.get(left.key, 0.0), self.shares.get(right.key, 0.0)
        if ls == rs:
            return 0
        return -1 if ls < rs else 1

    def _follow(self, sign: int) -> Callable[[TaskInfo], None]:
        def on_event(task: TaskInfo) -> None:
            held = self.allocated.setdefault(task.job, Resource())
            if sign > 0:
                held.add(task.resreq)
            else:
                held.sub(task.resreq)
            self.shares[task.job] = self.share(held)
            if self.hdrf is not None:
                self.hdrf.follow(task, sign)

        return on_event

    def on_session_close(self, ssn: Session) -> None:
        """Export the shares as the session left them; drop the per-session state."""
        export_job_shares(ssn.jobs, self.shares)
        self.allocated = {}
        self.shares = {}
        self.hdrf = None
