"""The vcjob lifecycle as Volcano's ``pkg/controllers/job/state``: phase + action -> a step.

Pure: ``plan(job, action)`` returns a ``Step`` saying what ``sync.py`` must do to the job's
pods and how the job's status changes afterwards. The three kinds of step are Volcano's:

- ``SYNC``: create the missing pods (once the PodGroup is admitted), delete surplus ones,
  recount, then ``update`` the status;
- ``KILL``: delete every pod whose phase is not in ``retain`` (``SOFT`` keeps Succeeded and
  Failed pods; on the last retry everything is soft), bump ``status.version``, recount,
  ``update``, and delete the PodGroup;
- ``KILL_TARGET``: delete the pods of one task, one pod or one partition, then ``update``.

``update`` mutates a ``Status`` and returns whether the phase changed (Volcano's
``UpdateStatusFn``). Transitions, by current phase:

- Pending: Restart* -> Restarting (retryCount+1); AbortJob -> Aborting; CompleteJob ->
  Completing; TerminateJob -> Terminating; otherwise sync, Running once
  ``minAvailable <= running + succeeded + failed``.
- Running: the same actions; sync: ``minSuccess`` succeeded -> Completed; all pods finished
  -> Completed or Failed (task ``minAvailable`` and ``minSuccess`` decide); more pending pods
  than ``replicas - minAvailable`` -> back to Pending.
- Restarting: ``retryCount >= maxRetry`` -> Failed; else Pending once
  ``replicas - terminating >= minAvailable``.
- Completing / Aborting / Terminating: kill softly; Completed / Aborted / Terminated once no
  pod is pending, running or terminating. Aborting/Aborted + ResumeJob -> Restarting.
- Completed / Failed / Terminated (and Aborted without ResumeJob): kill softly, phase kept.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from volcano_py.api.meta import annotations_of, is_being_deleted
from volcano_py.api.vcjob import TASK_SPEC_KEY, Action, JobPhase, JobView

POD_PENDING = "Pending"
POD_RUNNING = "Running"
POD_SUCCEEDED = "Succeeded"
POD_FAILED = "Failed"
POD_UNKNOWN = "Unknown"

NONE: frozenset[str] = frozenset()
SOFT: frozenset[str] = frozenset({POD_SUCCEEDED, POD_FAILED})


@dataclass
class Status:
    """The parts of ``JobStatus`` the transitions read and write."""

    phase: str = JobPhase.PENDING
    min_available: int = 0
    pending: int = 0
    running: int = 0
    succeeded: int = 0
    failed: int = 0
    terminating: int = 0
    unknown: int = 0
    version: int = 0
    retry_count: int = 0
    task_status_count: dict[str, dict[str, int]] = field(default_factory=dict)

    def count_pod(self, task: str, phase: str) -> None:
        """Add one pod of ``task`` in ``phase`` to the counts."""
        known = phase in (POD_PENDING, POD_RUNNING, POD_SUCCEEDED, POD_FAILED)
        bucket = phase if known else POD_UNKNOWN
        attr = bucket.lower()
        setattr(self, attr, getattr(self, attr) + 1)
        if task:
            phases = self.task_status_count.setdefault(task, {})
            phases[bucket] = phases.get(bucket, 0) + 1

    def count_existing(self, pod: Mapping[str, Any]) -> None:
        """Add a cached pod: terminating when being deleted, else by its task and phase."""
        if is_being_deleted(pod):
            self.terminating += 1
            return
        task = annotations_of(pod).get(TASK_SPEC_KEY, "")
        self.count_pod(task, (pod.get("status") or {}).get("phase", ""))


UpdateFn = Callable[[Status], bool]


class StepKind(Enum):
    """What to do to the pods."""

    SYNC = "sync"
    KILL = "kill"
    KILL_TARGET = "kill-target"


@dataclass(frozen=True, slots=True)
class Step:
    """One planned reconcile: the pod work, what pods to keep, the status update."""

    kind: StepKind
    update: UpdateFn | None = None
    retain: frozenset[str] = SOFT


def _to(phase: JobPhase, *, retry: bool = False) -> UpdateFn:
    def update(status: Status) -> bool:
        status.phase = phase
        if retry:
            status.retry_count += 1
        return True

    return update


def _when_idle(phase: JobPhase) -> UpdateFn:
    def update(status: Status) -> bool:
        if status.terminating or status.pending or status.running:
            return False
        status.phase = phase
        return True

    return update


_PHASES = frozenset(p.value for p in JobPhase)
_RESTARTS = (Action.RESTART_TASK, Action.RESTART_POD, Action.RESTART_PARTITION)


def _common(action: str) -> Step | None:
    """The actions Pending and Running treat alike."""
    if action == Action.RESTART_JOB:
        return Step(StepKind.KILL, _to(JobPhase.RESTARTING, retry=True), NONE)
    if action in _RESTARTS:
        return Step(StepKind.KILL_TARGET, _to(JobPhase.RESTARTING, retry=True))
    if action == Action.ABORT_JOB:
        return Step(StepKind.KILL, _to(JobPhase.ABORTING))
    if action == Action.COMPLETE_JOB:
        return Step(StepKind.KILL, _to(JobPhase.COMPLETING))
    if action == Action.TERMINATE_JOB:
        return Step(StepKind.KILL, _to(JobPhase.TERMINATING))
    return None


def pending_update(job: JobView) -> UpdateFn:
    """Pending's sync: Running once enough pods have started (or ended)."""

    def update(status: Status) -> bool:
        if job.min_available <= status.running + status.succeeded + status.failed:
            status.phase = JobPhase.RUNNING
            return True
        return False

    return update


def running_update(job: JobView) -> UpdateFn:
    """Running's sync: Completed, Failed, or back to Pending (see the module docstring)."""

    def update(status: Status) -> bool:
        replicas = job.total_replicas
        if replicas == 0:
            return False
        if job.min_success is not None and status.succeeded >= job.min_success:
            status.phase = JobPhase.COMPLETED
            return True
        if status.succeeded + status.failed == replicas:
            status.phase = _finished_phase(job, status)
            return True
        if status.pending > replicas - job.min_available:
            status.phase = JobPhase.PENDING
            return True
        return False

    return update


def _finished_phase(job: JobView, status: Status) -> JobPhase:
    if job.min_available >= job.total_task_min_available:
        for task in job.tasks:
            counts = status.task_status_count.get(task.key)
            if task.min_available is None or counts is None:
                continue
            if counts.get(POD_SUCCEEDED, 0) < task.min_available:
                return JobPhase.FAILED
    if job.min_success is not None and status.succeeded < job.min_success:
        return JobPhase.FAILED
    if status.succeeded >= job.min_available:
        return JobPhase.COMPLETED
    return JobPhase.FAILED


def restarting_update(job: JobView) -> UpdateFn:
    """Restarting: Failed after ``maxRetry`` restarts, else Pending once pods are gone."""

    def update(status: Status) -> bool:
        if status.retry_count >= job.max_retry:
            status.phase = JobPhase.FAILED
            return True
        if job.total_replicas - status.terminating >= status.min_available:
            status.phase = JobPhase.PENDING
            return True
        return False

    return update


def plan(job: JobView, action: str) -> Step:
    """The step for ``action`` in the job's current phase (Volcano's ``NewState().Execute``)."""
    phase = job.phase or JobPhase.PENDING
    if phase in (JobPhase.PENDING, JobPhase.RUNNING):
        common = _common(action)
        if common is not None:
            return common
        update = pending_update(job) if phase == JobPhase.PENDING else running_update(job)
        return Step(StepKind.SYNC, update)
    if phase == JobPhase.RESTARTING:
        if action == Action.SYNC_JOB:
            return Step(StepKind.SYNC, restarting_update(job))
        if action in _RESTARTS:
            return Step(StepKind.KILL_TARGET, restarting_update(job))
        return Step(StepKind.KILL, restarting_update(job), NONE)
    if phase in (JobPhase.ABORTING, JobPhase.ABORTED) and action == Action.RESUME_JOB:
        return Step(StepKind.KILL, _to(JobPhase.RESTARTING, retry=True))
    idle_target = {
        JobPhase.COMPLETING: JobPhase.COMPLETED,
        JobPhase.ABORTING: JobPhase.ABORTED,
        JobPhase.TERMINATING: JobPhase.TERMINATED,
    }.get(JobPhase.PENDING if phase not in _PHASES else JobPhase(phase))
    if idle_target is not None:
        return Step(StepKind.KILL, _when_idle(idle_target))
    if phase in (JobPhase.ABORTED, JobPhase.COMPLETED, JobPhase.FAILED, JobPhase.TERMINATED):
        return Step(StepKind.KILL, None)
    # An unknown phase is Pending, as in Volcano.
    common = _common(action)
    return common if common is not None else Step(StepKind.SYNC, pending_update(job))
