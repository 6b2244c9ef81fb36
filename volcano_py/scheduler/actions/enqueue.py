"""``enqueue``: admit Pending jobs (Pending → Inqueue) while their queue and the cluster can.

Volcano's semantics: admission is about resources, not pods. A PodGroup is admitted before
any of its pods exist — Volcano's job controller and Kubeflow's training-operator create the
pods only once their PodGroup is ``Inqueue``. The gang check (``minMember`` valid tasks, the
gang plugin's job-valid function) is the allocate action's, as in Volcano.

Jobs are tried in job order. A Pending job is admitted when

1. its queue exists and is Open (else it stays Pending with ``QueueNotFound`` /
   ``QueueNotOpen`` naming the queue; Volcano leaves a job of a missing queue Pending too);
2. it has no ``minResources`` (admitted without a vote, as Volcano), or no plugin rejects
   it: the ``job_enqueueable`` votes (overcommit, proportion, capacity) over its
   ``minResources``. When no configured plugin votes, the session holds the registry's
   fallback voter, the overcommit gate at its default factor 1.2.

A rejected job stays Pending with ``NotEnoughResources`` and the voter's reason. A PodGroup
whose spec cannot be read is not admitted (``InvalidPodGroup`` naming the field).

Each admission is announced (``job_enqueued``) so the voters reserve its need before the next
job is tried.
"""

from __future__ import annotations

import logging

from volcano_py.api.constants import (
    INVALID_PODGROUP_REASON,
    NOT_ENOUGH_RESOURCES_REASON,
    PodGroupPhase,
)
from volcano_py.scheduler.actions.fit_errors import oversized_message
from volcano_py.scheduler.framework.interface import JobFit
from volcano_py.scheduler.framework.session import Session

log = logging.getLogger(__name__)


class EnqueueAction:
    """Pending → Inqueue."""

    name = "enqueue"

    def execute(self, ssn: Session) -> None:
        """Admit the jobs that may enter, in job order."""
        pending = [job for job in ssn.jobs.values() if job.phase == PodGroupPhase.PENDING]
        if not pending:
            return
        pending.sort(key=ssn.job_order_key())
        for job in pending:
            if job.invalid:
                ssn.job_fit[job.key] = JobFit(INVALID_PODGROUP_REASON, job.invalid)
                continue
            closed = ssn.workload_gate(job) or ssn.queue_gate(job)
            if closed is not None:
                ssn.job_fit[job.key] = closed
                continue
            reason = None
            if not job.min_resources.is_empty():
                reason = ssn.job_enqueueable(job)
            if reason is not None:
                # a pod no node can hold even empty is the thing to fix first
                oversized = oversized_message(
                    job.pending_tasks(), ssn.nodes.values(), ssn.largest_allocatable()
                )
                if oversized:
                    reason = f"{oversized}; {reason}"
                ssn.job_fit[job.key] = JobFit(NOT_ENOUGH_RESOURCES_REASON, reason)
                continue
            job.phase = PodGroupPhase.INQUEUE
            ssn.job_enqueued(job)
            log.debug("job %s: Pending -> Inqueue (queue %s)", job.key, job.queue)
