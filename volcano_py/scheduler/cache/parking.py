"""``ParkedJobs``: jobs that could not be placed wait out of cycles until room may be free.

Volcano re-tries every pending job in every cycle; with 5,000 gangs that cannot fit, one cycle
took 16 s and a new gang that fits waited behind them. Here a job the last cycle could not
place (and whose status is already written) is *parked* by the cache (``SchedulerCache.park``)
and left out of cycles until one of these happens:

- **it changes itself**: its PodGroup or one of its pods (the cache's change counter, as for
  settled jobs);
- **an event it waits for happens**: the cache reports cluster events (``ClusterEvent``: a
  placed pod leaves its node, a pod is placed or a placed pod relabelled (opt-in: only jobs
  refused by inter-pod affinity or topology spread wait for it), a bind is rolled back, a
  Node is added or changes what can decide a fit, a HyperNode changes, another PodGroup's
  spec changes or one is deleted), and each job is parked with the events that can change
  why it failed, declared beside the check that failed (``api/wake_hints.py``; every event
  but the opt-in ones when none were declared);
- **its queue or the configuration changes**: a Queue's spec or state changes, or the
  scheduler configuration is reloaded, unparks every job;
- **``PARK_MAX_S`` passed** (30 s): a safety net for a change no event marks.

A job arriving, or a pod being bound, makes no room, so they unpark nothing: while the cluster
fills, the waiting gangs cost nothing, and a new gang that fits is decided in a cycle of its
own. kube-scheduler's queueing hints are the same idea per pod; this is per job and per
``JobFit`` reason, and coarse on purpose (an event brings back every job parked for a reason
that declared it, without asking whether this one would now fit), so a hint cannot be wrong
about a single job.

An event bumps an epoch and records it as that event's latest; the next snapshot unparks
every job parked before the latest of one of its events. A job
is parked as of the epoch its cycle's snapshot saw (``looking``), not the one at the cycle's
end: room freed while the cycle ran was not seen by it, so it brings the job back. Only
cycles that take active-only snapshots park (preempt and reclaim look at every job anyway).
"""

from __future__ import annotations

from volcano_py.api import JSON
from volcano_py.kube.clock import Clock, RealClock
from volcano_py.scheduler.api.node_info import node_ready
from volcano_py.scheduler.api.task_info import OCCUPYING, TaskInfo, TaskStatus
from volcano_py.scheduler.api.wake_hints import ALL_EVENTS, ClusterEvent

PARK_MAX_S = 30.0
# States a placed pod gives its node's resources back in (or starts to).
_FREEING = frozenset({TaskStatus.RELEASING, TaskStatus.SUCCEEDED, TaskStatus.FAILED})


def frees(before: TaskInfo | None, after: TaskInfo | None) -> bool:
    """Whether a pod's change gives resources back (deleted, unbound, finishing)."""
    if before is None or not before.node_name or before.status not in OCCUPYING:
        return False
    if after is None or after.node_name != before.node_name:
        return True
    return after.status in _FREEING and before.status not in _FREEING


def places(before: TaskInfo | None, after: TaskInfo | None) -> bool:
    """Whether a pod's change puts it on a node, or changes a placed pod's labels."""
    if after is None or not after.node_name or after.status not in OCCUPYING:
        return False
    if before is None or before.node_name != after.node_name or before.status not in OCCUPYING:
        return True
    return _labels(before) != _labels(after)


def told_only(before: JSON | None, after: JSON) -> bool:
    """Whether an unplaced pod changed in nothing but its ``PodScheduled`` condition.

    That is our own ``PodScheduled=False`` write coming back through the watch: a gang of
    5,000 pods told why it waits would otherwise bring itself back 5,000 times (a change of
    the job's own pods un-parks it) and be rebuilt in the cache for each.
    """
    if before is None or (after.get("spec") or {}).get("nodeName"):
        return False
    if before.get("spec") != after.get("spec"):
        return False
    if _without(before.get("metadata"), _VERSIONS) != _without(after.get("metadata"), _VERSIONS):
        return False
    old, new = dict(before.get("status") or {}), dict(after.get("status") or {})
    return _others(old.pop("conditions", None)) == _others(new.pop("conditions", None)) and (
        old == new
    )


_VERSIONS = ("resourceVersion", "managedFields")


def _without(meta: object, keys: tuple[str, ...]) -> dict[str, object]:
    out = dict(meta) if isinstance(meta, dict) else {}
    for key in keys:
        out.pop(key, None)
    return out


def _others(conditions: object) -> list[object]:
    """The conditions but ``PodScheduled``."""
    if not isinstance(conditions, list):
        return []
    return [c for c in conditions if not (isinstance(c, dict) and c.get("type") == "PodScheduled")]


def _labels(task: TaskInfo) -> object:
    return (task.pod.get("metadata") or {}).get("labels")


def node_fit(obj: JSON) -> tuple[object, ...]:
    """What of a Node can decide whether a waiting job fits (not its heartbeats)."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return (
        status.get("allocatable") or status.get("capacity"),
        (obj.get("metadata") or {}).get("labels"),
        spec.get("taints"),
        spec.get("unschedulable"),
        node_ready(obj),
    )


class ParkedJobs:
    """The parked jobs and the event epochs (the cache calls it under its lock).

    Jobs are kept per set of awaited events, each set in parking order. A job's parking epoch
    and time only grow along that order, so the jobs an event or the time limit brings back
    are a prefix of each set's order: a release reads those and one more per set, not every
    parked job (5,000 parked gangs were a scan of 5,000 in every cycle that followed an event).
    """

    def __init__(self, max_s: float = PARK_MAX_S, clock: Clock | None = None) -> None:
        """Nothing parked; a job comes back after ``max_s`` on ``clock`` at the latest."""
        self.max_s = max_s
        self._clock: Clock = clock or RealClock()
        self._parked: dict[str, frozenset[ClusterEvent]] = {}  # job -> the events it awaits
        # the awaited events -> {job: (epoch, the clock's time)} in parking order
        self._by_events: dict[frozenset[ClusterEvent], dict[str, tuple[int, float]]] = {}
        self._epoch = 0
        self._latest: dict[ClusterEvent, int] = {}  # event -> the epoch it last happened at
        self._seen_epoch = 0  # the epoch the last snapshot saw: jobs are parked as of it

    def __contains__(self, job: object) -> bool:
        return job in self._parked

    def __len__(self) -> int:
        return len(self._parked)

    def looking(self) -> None:
        """A snapshot is taken: what a cycle parks from it is parked as of this epoch."""
        self._seen_epoch = self._epoch

    def park(self, job: str, events: frozenset[ClusterEvent] = ALL_EVENTS) -> None:
        """Park ``job`` as of the last snapshot until one of ``events`` (or ``max_s``).

        At the end of its set's order. One of ``events`` since that snapshot, which the job's
        cycle did not see, brings it back at the next release.
        """
        self.discard(job)
        self._parked[job] = events
        self._by_events.setdefault(events, {})[job] = (self._seen_epoch, self._clock.now())

    def discard(self, job: str) -> None:
        """``job`` changed or went: it is not parked any more."""
        events = self._parked.pop(job, None)
        if events is not None:
            group = self._by_events[events]
            del group[job]
            if not group:
                del self._by_events[events]

    def clear(self) -> list[str]:
        """Unpark every job; the jobs that were parked."""
        jobs = list(self._parked)
        self._parked.clear()
        self._by_events.clear()
        return jobs

    def event(self, event: ClusterEvent) -> None:
        """``event`` happened: jobs parked until now that wait for it come back at release."""
        self._epoch += 1
        self._latest[event] = self._epoch

    def release(self) -> list[str]:
        """Unpark the jobs an awaited event or the time limit brings back; them.

        A job comes back when one of its events happened after it was parked, or when it
        has been parked for ``max_s``.
        """
        if not self._parked:
            return []
        oldest = self._clock.now() - self.max_s
        back: list[str] = []
        for events, group in list(self._by_events.items()):
            last = max((self._latest.get(e, 0) for e in events), default=0)
            due = []
            for job, (parked_at, at) in group.items():
                if parked_at >= last and at >= oldest:
                    break
                due.append(job)
            for job in due:
                del group[job]
                del self._parked[job]
            if not group:
                del self._by_events[events]
            back.extend(due)
        return back

    def pod_changed(self, before: TaskInfo | None, after: TaskInfo | None) -> None:
        """A pod's task went from ``before`` to ``after`` (None: none)."""
        if frees(before, after):
            self.event(ClusterEvent.POD_FREED)
        if places(before, after):
            self.event(ClusterEvent.POD_PLACED)
