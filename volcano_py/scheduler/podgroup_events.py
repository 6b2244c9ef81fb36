"""Events on PodGroups about their scheduling, as Volcano's ``RecordJobStatusEvent`` records.

After a cycle, per job (``job_event``):

- a PodGroup left ``Pending``, ``Inqueue`` or ``Unknown`` with a reason from this cycle (the
  job's ``JobFit``) gets a Warning ``Unschedulable`` Event: ``"<pending>/<tasks> tasks in
  gang unschedulable: <why>"`` (the allocate action's messages already start so and are
  used as they are);
- any other PodGroup whose status the cycle wrote gets a Normal ``Scheduled`` Event,
  ``"pod group is ready"``.

Volcano records these every cycle and leaves the repeats to client-go's aggregation. Here
``PodGroupEvents.record`` tells each PodGroup an Event only when it differs from the last one
told to that PodGroup (type, reason and message), so a job that waits for an hour on an idle
cluster has one Event, not one write per cycle; our recorder (``kube/events.py``) still
counts the repeats that do come (the same Event after a different one). A job with no reason
this cycle (an ``Inqueue`` PodGroup whose pods do not exist yet, a parked job the cycle did
not look at) gets none: Volcano's would say ``0/0 tasks in gang unschedulable:`` and nothing
else.

The memory is keyed by the PodGroup's ``metadata.uid`` (a PodGroup deleted and created again
is told again) and bounded. Runs in the scheduler thread after a cycle; the recorder never
raises into the loop.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from volcano_py.api.constants import PodGroupConditionType, PodGroupPhase
from volcano_py.api.resources import PODGROUPS
from volcano_py.kube.events import NORMAL, WARNING, Recorder
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.task_info import TaskStatus
from volcano_py.scheduler.framework.interface import JobFit

MAX_REMEMBERED = 100_000
UNSCHEDULABLE_PHASES = frozenset(
    {PodGroupPhase.PENDING, PodGroupPhase.INQUEUE, PodGroupPhase.UNKNOWN}
)
GANG_HEADS = ("tasks in gang unschedulable", "tasks unschedulable")
READY_MESSAGE = "pod group is ready"

Event = tuple[str, str, str]  # (type, reason, message)


def job_event(job: JobInfo, phase: str, fit: JobFit | None, written: bool) -> Event | None:
    """The Event the cycle's outcome for ``job`` calls for (see the module docstring)."""
    if phase in UNSCHEDULABLE_PHASES:
        if fit is None:
            return None
        message = fit.message
        if not any(head in message.split(":", 1)[0] for head in GANG_HEADS):
            pending = sum(1 for t in job.tasks.values() if t.status == TaskStatus.PENDING)
            message = f"{pending}/{len(job.tasks)} tasks in gang unschedulable: {message}"
        return (WARNING, PodGroupConditionType.UNSCHEDULABLE.value, message)
    if written:
        return (NORMAL, PodGroupConditionType.SCHEDULED.value, READY_MESSAGE)
    return None


def note_job_event(
    events: dict[str, Event], job: JobInfo, written: Mapping[str, Any] | None, fit: JobFit | None
) -> None:
    """Add ``job``'s Event to ``events``; ``written``: the PodGroup the cycle writes, if any."""
    status = (written if written is not None else job.podgroup).get("status") or {}
    event = job_event(job, status.get("phase", PodGroupPhase.PENDING), fit, written is not None)
    if event is not None:
        events[job.key] = event


class PodGroupEvents:
    """Records each PodGroup's scheduling Event when it differs from the last one told."""

    def __init__(self, recorder: Recorder | None) -> None:
        """Record through ``recorder`` (None: nothing is recorded)."""
        self.recorder = recorder
        self._told: dict[str, Event] = {}

    def record(
        self,
        events: Mapping[str, Event],
        podgroup: Callable[[str], Mapping[str, Any] | None],
    ) -> int:
        """``events``: job uid -> Event; ``podgroup(uid)``: the cached PodGroup.

        Returns how many Events were recorded.
        """
        if self.recorder is None:
            return 0
        recorded = 0
        for uid, event in events.items():
            pg = podgroup(uid)
            if pg is None:
                continue
            key = str((pg.get("metadata") or {}).get("uid") or uid)
            if self._told.get(key) == event:
                continue
            if len(self._told) >= MAX_REMEMBERED:
                self._told.clear()
            self._told[key] = event
            self.recorder.event(pg, event[0], event[1], event[2], resource=PODGROUPS)
            recorded += 1
        return recorded
