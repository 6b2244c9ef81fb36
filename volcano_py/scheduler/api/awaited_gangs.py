"""``AwaitedGangs``: an admitted gang whose pods are not there yet keeps its minimum free.

A vcjob's pods are created by the job controller only once its PodGroup is admitted
(``Inqueue``). Volcano's session runs once a schedule period and usually sees the pods of
jobs created together all at once, so its allocate gives each its minimum before any gets
more. Our cycles follow events: a cycle that sees two jobs' pods but not yet the third's
would give the first the whole cluster past the minimums, and the third gang, admitted
because its minimum fitted, would find no room when its pods arrive (schedulingbase
"Schedule Multiple Jobs").

So while an admitted gang (``Inqueue``) has fewer pods than its ``minMember``, allocate
defers what it places *beyond* other gangs' minimums (their minimums still go at once). The
hold is bounded: ``AWAITED_HOLD_S`` on the cache's clock from the first cycle that saw the
gang short, after which the surplus is placed whether or not the pods came (a gang whose pods
never come cannot block elastic growth). The deferred jobs stay in cycles (they are neither
parked nor settled), so the cycle timer's next period places their surplus once the hold ends,
and the awaited gang's pods un-park it and run a cycle when they arrive.

The job updater notes each short gang it sees (``note``) and forgets the others; allocate
asks ``waiting`` only when it has surplus to place, so the check costs nothing otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping

from volcano_py.api.constants import PodGroupPhase
from volcano_py.kube.clock import Clock
from volcano_py.scheduler.api.first_seen import FirstSeen
from volcano_py.scheduler.api.job_info import JobInfo

# three of Volcano's schedule periods (1 s): the job controller creates a vcjob's pods within
# a few hundred milliseconds of its admission even on a loaded control plane, while an elastic
# job waits at most this long for room a missing gang never claims
AWAITED_HOLD_S = 3.0


def short_of_pods(job: JobInfo) -> bool:
    """Admitted, and fewer pods in the cache than its ``minMember``."""
    return job.phase == PodGroupPhase.INQUEUE and len(job.tasks) < job.min_member


class AwaitedGangs(FirstSeen):
    """Since when each admitted gang has been short of pods (module doc)."""

    def __init__(self, clock: Clock | None = None, hold: float = AWAITED_HOLD_S) -> None:
        super().__init__(clock)
        self.hold = hold

    def waiting(self, jobs: Mapping[str, JobInfo]) -> bool:
        """Whether a gang short of pods is within its hold (``jobs``: the session's).

        A noted gang missing from ``jobs`` is parked, so unchanged: still short. A gang of
        ``jobs`` short and not noted yet was admitted in this cycle: its hold starts now.
        """
        now = self.clock.now()
        for key, since in self.items():
            if now - since < self.hold:
                job = jobs.get(key)
                if job is None or short_of_pods(job):
                    return True
        return any(short_of_pods(job) and job.key not in self for job in jobs.values())
