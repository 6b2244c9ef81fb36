"""``LostMembers``: a running gang that lost a member goes ``Unknown``, not on a passing state.

Volcano's gang plugin marks every job that is not ready unschedulable at session close
(``OnSessionClose``), whether or not anything was tried for it; a job with a running task
and that mark is ``Unknown`` (``getPodGroupPhase``). So a PodGroup of two whose one pod is
force-deleted goes ``Running`` -> ``Unknown`` and stays there until a replacement runs
(jobseq's "Transform from running to unknown after a member is gone"). The mark is skipped
while the missing members are still terminating on their nodes with nothing pending
(``shouldSkipUnschedulableForReleasing``: they keep their slots).

Volcano looks once a schedule period (1 s). Our cycles follow events, so they also see the
states a sequence of deletions passes through: ``kubectl delete`` of both pods, one after the
other, removes the first on kwok before the second has its ``deletionTimestamp``, and a cycle
in between sees one member gone and one running. Volcano's session almost never falls into
that window and says ``Pending`` once both are terminating; calling it ``Unknown`` would fire
``PodGroupUnknown`` policies for a job that is merely being deleted. Hence the *grace*: a job
first seen short with a running member is held (its status not written, the job kept in
cycles) and called unschedulable only when it is still short ``grace`` seconds later
(``LOST_MEMBER_GRACE_S``, Volcano's schedule period: a state Volcano's session would certainly
have seen). A change that ends the state (the next member terminating, a replacement placed)
forgets it.

Kept in the cache because it spans cycles; the ``JobUpdater`` asks ``check`` for every job
nothing was tried for, on the scheduler thread only. Time is the cache's clock.
"""

from __future__ import annotations

from volcano_py.api.constants import POD_GROUP_NOT_READY_MESSAGE
from volcano_py.kube.clock import Clock
from volcano_py.scheduler.api.first_seen import FirstSeen
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.task_info import TaskStatus

LOST_MEMBER_GRACE_S = 1.0  # Volcano's default schedule period
# Volcano's ScheduledStatus: placed for good (a Releasing one on a node is counted apart)
_SCHEDULED = frozenset(
    {TaskStatus.BOUND, TaskStatus.RUNNING, TaskStatus.SUCCEEDED, TaskStatus.FAILED}
)


def lost_a_member(job: JobInfo) -> bool:
    """Not ready, a member running, and not Volcano's releasing exception (module doc)."""
    if not job.tasks or job.is_ready():
        return False
    if not any(t.status == TaskStatus.RUNNING for t in job.tasks.values()):
        return False
    if any(t.status == TaskStatus.PENDING for t in job.tasks.values()):
        return True  # work still to place: Volcano keeps the mark
    scheduled = sum(
        1
        for t in job.tasks.values()
        if t.status in _SCHEDULED or (t.status == TaskStatus.RELEASING and t.node_name)
    )
    return scheduled < job.min_member


def lost_member_message(job: JobInfo) -> str:
    """The Unschedulable condition's message, worded as Volcano's gang plugin words it."""
    ready = job.ready_task_num()
    return (
        f"{max(job.min_member - ready, 0)}/{len(job.tasks)} tasks in gang unschedulable: "
        f"{POD_GROUP_NOT_READY_MESSAGE}, {ready} ready, {job.min_member} minAvailable"
    )


class LostMembers(FirstSeen):
    """Since when each job has been short with a running member (module doc)."""

    def __init__(self, clock: Clock | None = None, grace: float = LOST_MEMBER_GRACE_S) -> None:
        super().__init__(clock)
        self.grace = grace

    def check(self, job: JobInfo) -> bool | None:
        """True: unschedulable now; None: hold (short, within the grace); False: not short."""
        if not lost_a_member(job):
            self.forget(job.key)
            return False
        since = self.note(job.key)
        return True if self.clock.now() - since >= self.grace else None
