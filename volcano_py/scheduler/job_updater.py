"""``JobUpdater``: each job's outcome written back at session close (Volcano's ``jobUpdater``).

Volcano's ``closeSession`` runs a ``JobUpdater`` over the session's jobs: each PodGroup's
status is computed from what the cycle decided and written when it changed. Ours runs once
the cycle's binds are done (a failed bind is part of the status: ``BindFailed``) and does,
per job of the session:

- the PodGroup's new status, conditions and HyperNode annotations (``status.py``,
  ``eviction_writes.served_nomination``), handed to the writer (written off the cycle), or
  kept in the cache for an implicit job (``implicit_jobs.py``), which has no object; for a
  native ``scheduling.k8s.io`` PodGroup the status is kept in the cache and the object gets
  kube-scheduler's ``PodGroupInitiallyScheduled`` condition instead (``native_condition``);
- the Warning a job should see once (an invalid topology annotation, or topology asked for
  while the scheduler does not enforce it), and the ``Unschedulable`` / ``Scheduled`` Event
  its outcome calls for (``podgroup_events.py``, Volcano's ``RecordJobStatusEvent``);
- the pending pods of a job that was not placed: their ``PodScheduled=False`` condition and
  Event, with the reason; so too the pods naming a native PodGroup (or a child whose parent
  CompositePodGroup) that does not exist, which have no job to say it;
- setting the job aside: *settled* when it is done and its status is as written, *parked*
  when it could not be placed, with the cluster events its ``JobFit`` reason waits for
  (``ssn.wake_hints``, ``api/wake_hints.py``).

A job nothing was tried for that runs short of a member (``cache/lost_members.py``) is held
for a schedule period (nothing written, not set aside, looked at again next cycle), then
marked unschedulable as Volcano's gang plugin marks it at session close: ``Unknown``.
An admitted gang with too few pods is noted in ``cache.awaited_gangs`` (allocate defers the
surplus of others for it, ``api/awaited_gangs.py``) and forgotten once it is not.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from volcano_py.api import JSON
from volcano_py.api.constants import NOT_ENOUGH_RESOURCES_REASON, PodGroupPhase
from volcano_py.api.native_composite import CHILD_POLICY
from volcano_py.api.native_groups import (
    REASON_SCHEDULED,
    REASON_SCHEDULER_ERROR,
    REASON_UNSCHEDULABLE,
    initially_scheduled,
    pod_group_name,
)
from volcano_py.api.topology_annotations import INVALID_TOPOLOGY_ANNOTATION_REASON
from volcano_py.scheduler.api.awaited_gangs import short_of_pods
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.sub_job_info import sub_job_id
from volcano_py.scheduler.api.task_info import TaskInfo, TaskStatus
from volcano_py.scheduler.api.wake_hints import ClusterEvent
from volcano_py.scheduler.cache import SchedulerCache
from volcano_py.scheduler.cache.lost_members import lost_member_message
from volcano_py.scheduler.eviction_writes import served_nomination
from volcano_py.scheduler.framework.interface import JobFit
from volcano_py.scheduler.framework.session import Session
from volcano_py.scheduler.podgroup_events import Event, note_job_event
from volcano_py.scheduler.status import pod_unschedulable_condition, podgroup_status
from volcano_py.scheduler.topology_config import (
    NOT_CONFIGURED_REASON,
    TIER_MISSING_REASON,
    job_message,
    missing_tier_message,
)
from volcano_py.scheduler.writer import Writer, podgroup_status_changes

BIND_FAILED_REASON = "BindFailed"


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _settles(job: JobInfo) -> bool:
    """Nothing left for later cycles: Running or later, every task placed.

    Pending and Inqueue jobs stay in: enqueue admits the former against free capacity and
    reserves what the latter still need.
    """
    if job.phase in (PodGroupPhase.PENDING, PodGroupPhase.INQUEUE):
        return False
    # a gated pod waits for its pod update (the gate's removal), which unsettles the job
    return not any(
        task.status == TaskStatus.PENDING and not task.gated for task in job.tasks.values()
    )


class JobUpdater:
    """Writes one closed session's job outcomes and sets jobs aside (module doc)."""

    def __init__(
        self,
        cache: SchedulerCache,
        writer: Writer,
        versions: dict[str, int],
        *,
        topology_on: bool,
    ) -> None:
        """``versions``: each job's change counter in the cycle's snapshot.

        ``topology_on``: whether the scheduler enforces network topology (else a job asking
        for it is warned once).
        """
        self.cache = cache
        self.writer = writer
        self.versions = versions
        self.topology_on = topology_on
        self.now = _now()
        self.transition_id = str(uuid.uuid4())
        self.written = 0
        # job -> (reason, message): told once as a Warning Event (``podgroup_warnings``)
        self.warnings: dict[str, tuple[str, str]] = {}
        # job -> the Unschedulable / Scheduled Event its outcome calls for (``podgroup_events``)
        self.events: dict[str, Event] = {}
        self._settled: dict[str, int] = {}
        self._parked: dict[str, int] = {}
        self._waits: dict[str, frozenset[ClusterEvent]] = {}

    def update_all(self, ssn: Session, bind_errors: dict[str, str]) -> None:
        """Update every job of ``ssn``; then settle and park in the cache (one lock each)."""
        for job in ssn.jobs.values():
            self._update(ssn, job, bind_errors)
        for task in self.cache.waiting_for_native_group():
            self._tell_missing_group(task)
        for timers in (self.cache.lost_members, self.cache.awaited_gangs):
            if timers:  # gangs deleted while timed
                timers.prune(lambda key: self.cache.podgroup(key) is not None)
        self.cache.settle(self._settled)
        self.cache.park(self._parked, self._waits)

    def _update(self, ssn: Session, job: JobInfo, bind_errors: dict[str, str]) -> None:
        if short_of_pods(job):
            self.cache.awaited_gangs.note(job.key)
        elif self.cache.awaited_gangs:
            self.cache.awaited_gangs.forget(job.key)
        note = self._warn(job, ssn)
        fit = ssn.job_fit.get(job.key)
        failed = [uid for uid in bind_errors if uid in job.tasks]
        if failed and fit is None:
            message = f"binding {len(failed)} task(s) failed: {bind_errors[failed[0]]}"
            fit = JobFit(BIND_FAILED_REASON, message)
        if fit is None:
            lost = self.cache.lost_members.check(job)
            if lost is None:
                return  # held: neither written nor set aside, looked at again next cycle
            if lost:
                fit = JobFit(NOT_ENOUGH_RESOURCES_REASON, lost_member_message(job))
        written = self._write_status(ssn, job, fit, note)
        version = self.versions.get(job.key, 0)
        if fit is not None:
            # parked even while its new status is being written: the write's echo brings it
            # back once, to be parked again (a failed write: the next event or the limit)
            self._parked[job.key] = version
            hints = ssn.wake_hints
            waits = hints.events_for(fit.reason) | hints.events_for_nodes(fit.node_reasons)
            self._waits[job.key] = waits
            self._tell_pods(job, fit)
        elif not written and _settles(job):
            self._settled[job.key] = version

    def _warn(self, job: JobInfo, ssn: Session) -> str:
        """Note the job's topology Warning, if any; the note for its condition ("" if none)."""
        if job.topology_warning:
            self.warnings[job.key] = (INVALID_TOPOLOGY_ANNOTATION_REASON, job.topology_warning)
        elif job.mode is not None and not self.topology_on:
            note = job_message(job)
            self.warnings[job.key] = (NOT_CONFIGURED_REASON, note)
            return note
        elif note := missing_tier_message(job, ssn.tree.by_tier):
            self.warnings[job.key] = (TIER_MISSING_REASON, note)
            return note
        return ""

    def _write_status(self, ssn: Session, job: JobInfo, fit: JobFit | None, note: str) -> bool:
        """Hand the job's changed PodGroup to the writer; whether there was one to write."""
        new: JSON | None = podgroup_status(
            job.podgroup, job, fit, now=self.now, transition_id=self.transition_id, note=note
        )
        if new is None and job.key in ssn.nominations:
            new = job.podgroup  # the nominated HyperNode annotation alone
        new = served_nomination(ssn, job, new or job.podgroup) or new
        implicit = self.cache.is_implicit(job.key)
        if not implicit:
            note_job_event(self.events, job, new, fit)
        native = self.cache.native_podgroup(job.key)
        if native is not None:
            if new is not None:
                self.cache.keep_native_status(new)  # the native object has no such fields
            return self._write_native(job, native, fit)
        if new is None:
            return False
        if implicit:
            self.cache.keep_implicit_status(new)  # no object to write (implicit_jobs.py)
            return False
        cached = self.cache.podgroup_object(job.key)
        if cached is not None and not podgroup_status_changes(cached, new):
            return False  # the object already says so: an idle cluster writes nothing
        self.cache.assume_nomination(new)  # seen by the next cycle, before the echo
        self.writer.update_podgroup(new)
        self.written += 1
        return True

    def _write_native(self, job: JobInfo, native: JSON, fit: JobFit | None) -> bool:
        """The native group's ``PodGroupInitiallyScheduled`` condition, when it changed.

        A CompositePodGroup's is written on it and on each of its child PodGroups (where
        kube-scheduler writes it).
        """
        wrote = False
        placed = (job.ready_task_num(), max(job.min_member, 1))
        targets = [(native, placed)]
        for child in self.cache.native_children(job.key):
            name = (child.get("metadata") or {}).get("name", "")
            sub_job = job.sub_jobs.get(sub_job_id(CHILD_POLICY, (name,)))
            if sub_job is not None:  # the child's own pods decide its Scheduled
                targets.append((child, (sub_job.ready_task_num(), sub_job.min_available)))
        for obj, (ready, need) in targets:
            written = native_condition(obj, job, fit, self.now, ready, need)
            if written is not None:
                self.writer.update_podgroup(written)
                self.written += 1
                wrote = True
        return wrote

    def _tell_missing_group(self, task: TaskInfo) -> None:
        """A pod naming a native PodGroup that does not exist: why it waits (no gang to say)."""
        pod = self.cache.pod(task.key)
        if pod is None:
            return
        named = f"{task.namespace}/{pod_group_name(pod)}"
        if task.job == named:
            message = f"PodGroup {named} (spec.schedulingGroup.podGroupName) does not exist"
        else:  # a child PodGroup whose parent is missing
            message = (
                f"CompositePodGroup {task.job}, the parent of PodGroup {named}, does not exist"
            )
        condition = pod_unschedulable_condition(pod, message, now=self.now)
        self.writer.pod_unschedulable(pod, condition, message)

    def _tell_pods(self, job: JobInfo, fit: JobFit) -> None:
        """Each pending pod's ``PodScheduled=False`` condition and Event, with the reason."""
        for task in job.pending_tasks():
            pod = self.cache.pod(task.key)
            if pod is not None:
                condition = pod_unschedulable_condition(pod, fit.message, now=self.now)
                self.writer.pod_unschedulable(pod, condition, fit.message)


def native_condition(
    native: JSON,
    job: JobInfo,
    fit: JobFit | None,
    now: str,
    ready: int | None = None,
    need: int | None = None,
) -> JSON | None:
    """``native`` with the condition kube-scheduler would write; None when unchanged or early.

    ``Scheduled`` once the gang's minimum is placed (``ready`` of ``need`` pods: the job's by
    default, a CompositePodGroup child's own); ``Unschedulable`` with our reason (the
    per-tier shortfall) when it could not place; ``SchedulerError`` for an invalid group or a
    failed bind. A job still waiting for its pods to arrive gets nothing yet.
    """
    if fit is None:
        ready = job.ready_task_num() if ready is None else ready
        if ready < (max(job.min_member, 1) if need is None else need):
            return None
        message = f"{ready} pod(s) placed"
        return initially_scheduled(native, True, REASON_SCHEDULED, message, now)
    error = job.invalid or fit.reason == BIND_FAILED_REASON
    reason = REASON_SCHEDULER_ERROR if error else REASON_UNSCHEDULABLE
    return initially_scheduled(native, False, reason, fit.message, now)
