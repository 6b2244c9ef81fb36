"""``enqueue``: admit Pending jobs (Pending → Inqueue) while the cluster can take them.

A Pending job is admitted when it is valid (enough tasks for minMember, see the gang plugin)
and its ``minResources`` fit the free capacity with Volcano's overcommit factor 1.2: the
total allocatable x 1.2, minus what is in use, minus what already-admitted jobs still need
(their minResources not yet covered by placed tasks). Jobs are tried in job order; each
admitted job's need is reserved before the next is tried.
"""

from __future__ import annotations

import logging

from volcano_py.api.constants import PodGroupPhase
from volcano_py.scheduler.api.resource import Resource, format_amount
from volcano_py.scheduler.api.task_info import OCCUPYING
from volcano_py.scheduler.framework.session import JobFit, Session

log = logging.getLogger(__name__)

OVERCOMMIT_FACTOR = 1.2


class EnqueueAction:
    """Pending → Inqueue."""

    name = "enqueue"

    def execute(self, ssn: Session) -> None:
        """Admit the jobs that fit, in job order."""
        total = Resource()
        used = Resource()
        for node in ssn.nodes.values():
            total.add(node.allocatable)
            used.add(node.used)
        free = total.scaled(OVERCOMMIT_FACTOR).sub(used)
        pending = []
        for job in ssn.jobs.values():
            if job.phase == PodGroupPhase.PENDING:
                pending.append(job)
            elif job.phase == PodGroupPhase.INQUEUE:
                need = job.min_resources.clone()
                for task in job.tasks.values():
                    if task.status in OCCUPYING:
                        need.sub(task.resreq)
                free.sub(_clamped(need))
        pending.sort(key=ssn.job_order_key())
        for job in pending:
            invalid = ssn.job_valid(job)
            if invalid is not None:
                ssn.job_fit[job.uid] = JobFit(invalid.reason, invalid.message)
                continue
            if not job.min_resources.less_equal(free):
                short = job.min_resources.shortfall(free)
                listed = ", ".join(
                    f"{name} short by {format_amount(name, amount)}"
                    for name, amount in short.items()
                )
                ssn.job_fit[job.uid] = JobFit(
                    "NotEnoughResources", f"queue resource quota insufficient: {listed}"
                )
                continue
            free.sub(job.min_resources)
            job.phase = PodGroupPhase.INQUEUE
            log.debug("job %s: Pending -> Inqueue", job.uid)


def _clamped(res: Resource) -> Resource:
    return Resource(
        max(0, res.milli_cpu),
        max(0, res.memory),
        {n: max(0, a) for n, a in res.scalars.items()},
    )
