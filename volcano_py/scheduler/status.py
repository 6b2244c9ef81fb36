"""What a cycle's outcome means for PodGroups and Pods — computed here, written by the writer.

Pure functions on dicts (unit-tested without a cluster):

- ``podgroup_status``: the PodGroup's new phase (``Pending`` → ``Inqueue`` when enqueued,
  ``Running`` once at least minMember tasks are placed — terminating ones on a node still
  count —, ``Completed`` when those are all done, ``Unknown`` while tasks run but the gang
  is not ready (could not be completed this cycle, or lost a member:
  ``cache/lost_members.py``), back to ``Pending`` when too few are left; Volcano's
  ``getPodGroupPhase``), its conditions (``Unschedulable`` with the reason
  and the per-tier message when the gang could not be placed; ``Scheduled`` when it was) and the
  ``volcano.sh/job-allocated-hypernode`` annotation, and the task counts (``running``,
  ``succeeded``, ``failed``). Returns None when none of these changed, so an idle cluster
  causes no writes. A ``note`` (topology asked of a configuration that cannot honour it)
  is the ``Scheduled`` condition's message, or follows the ``Unschedulable`` one.
- ``pod_unschedulable_condition``: the ``PodScheduled=False`` condition for a pending pod of a
  job that could not be placed, or None when the pod already carries that exact condition.

PodGroup has no status subresource in Volcano's CRD: the writer merge-patches the status
(``writer.podgroup_status_patch``).
"""

from __future__ import annotations

from volcano_py.api import JSON
from volcano_py.api.constants import (
    JOB_ALLOCATED_HYPERNODE_ANNOTATION,
    PodGroupConditionType,
    PodGroupPhase,
)
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.task_info import READY, TaskStatus
from volcano_py.scheduler.framework.interface import JobFit

SCHEDULED_REASON = "tasks in gang are ready to be scheduled"
COMPLETED = frozenset({TaskStatus.SUCCEEDED, TaskStatus.FAILED})


def _phase(job: JobInfo, unschedulable: bool) -> str:
    """Volcano's ``getPodGroupPhase``, with placed (allocated, binding) tasks as scheduled.

    ``Unknown``: tasks running while the gang is marked unschedulable (``unschedulable``: it
    could not be completed this cycle, or lost a member, ``cache/lost_members.py``). Scheduled
    (placed, running, done, or terminating on a node): at least minMember → ``Completed``
    when every one of them is done, else ``Running``. Fewer: an ``Inqueue`` job stays so,
    any other goes back to ``Pending`` (enqueue admits it again) — except ``Completed``,
    which is final here.
    """
    if unschedulable and any(t.status == TaskStatus.RUNNING for t in job.tasks.values()):
        return PodGroupPhase.UNKNOWN
    scheduled = completed = 0
    for task in job.tasks.values():
        if task.status in COMPLETED:
            completed += 1
            scheduled += 1
        elif task.status in READY or (task.status == TaskStatus.RELEASING and task.node_name):
            scheduled += 1
    if scheduled >= job.min_member and scheduled > 0:
        return PodGroupPhase.COMPLETED if scheduled == completed else PodGroupPhase.RUNNING
    if job.phase in (PodGroupPhase.INQUEUE, PodGroupPhase.COMPLETED):
        return job.phase
    return PodGroupPhase.PENDING


def _set_condition(conditions: list[JSON], new: JSON) -> bool:
    """Replace the condition of the same type; keep its transition time if status is equal."""
    for i, cond in enumerate(conditions):
        if cond.get("type") != new["type"]:
            continue
        same = all(cond.get(k) == new.get(k) for k in ("status", "reason", "message"))
        if same:
            return False
        if cond.get("status") == new["status"]:
            new["lastTransitionTime"] = cond.get("lastTransitionTime", new["lastTransitionTime"])
        conditions[i] = new
        return True
    conditions.append(new)
    return True


def podgroup_status(
    pg: JSON,
    job: JobInfo,
    fit: JobFit | None,
    *,
    now: str,
    transition_id: str,
    note: str = "",
) -> JSON | None:
    """The updated PodGroup, or None when phase, conditions and annotation are unchanged."""
    status = pg.get("status") or {}
    phase = _phase(job, fit is not None and not job.is_ready())
    conditions = [dict(c) for c in status.get("conditions") or ()]
    changed = phase != status.get("phase")
    if fit is not None and phase not in (PodGroupPhase.RUNNING, PodGroupPhase.COMPLETED):
        changed |= _set_condition(
            conditions,
            {
                "type": PodGroupConditionType.UNSCHEDULABLE.value,
                "status": "True",
                "reason": fit.reason,
                "message": f"{fit.message}; {note}" if note else fit.message,
                "transitionID": transition_id,
                "lastTransitionTime": now,
            },
        )
    elif phase in (PodGroupPhase.RUNNING, PodGroupPhase.COMPLETED):
        changed |= _set_condition(
            conditions,
            {
                "type": PodGroupConditionType.SCHEDULED.value,
                "status": "True",
                "reason": SCHEDULED_REASON,
                "message": note,
                "transitionID": transition_id,
                "lastTransitionTime": now,
            },
        )
        for cond in conditions:
            if (
                cond.get("type") == PodGroupConditionType.UNSCHEDULABLE
                and cond.get("status") == "True"
            ):
                cond.update(status="False", reason="Scheduled", message="", lastTransitionTime=now)
                changed = True
    annotations = dict((pg.get("metadata") or {}).get("annotations") or {})
    hn = job.allocated_hypernode
    if hn and annotations.get(JOB_ALLOCATED_HYPERNODE_ANNOTATION) != hn:
        annotations[JOB_ALLOCATED_HYPERNODE_ANNOTATION] = hn
        changed = True
    counts = _task_counts(job)
    # The counts are part of the status like the phase: pods that bind after the gang is
    # Running change nothing else, and must still be written (else status.running goes stale).
    changed |= any(status.get(field, 0) != value for field, value in counts.items())
    if not changed:
        return None
    new = dict(pg)
    new["metadata"] = dict(pg.get("metadata") or {})
    new["metadata"]["annotations"] = annotations
    new_status = dict(status)
    new_status["phase"] = phase
    new_status["conditions"] = conditions
    for field, value in counts.items():
        if value:
            new_status[field] = value
        else:
            new_status.pop(field, None)
    new["status"] = new_status
    return new


def _task_counts(job: JobInfo) -> dict[str, int]:
    """``status.running`` (placed: binding, bound or running), ``succeeded`` and ``failed``."""
    counts = {"running": 0, "succeeded": 0, "failed": 0}
    for task in job.tasks.values():
        if task.status in (TaskStatus.RUNNING, TaskStatus.BOUND, TaskStatus.BINDING):
            counts["running"] += 1
        elif task.status == TaskStatus.SUCCEEDED:
            counts["succeeded"] += 1
        elif task.status == TaskStatus.FAILED:
            counts["failed"] += 1
    return counts


def pod_unschedulable_condition(pod: JSON, message: str, *, now: str) -> JSON | None:
    """``PodScheduled=False`` with ``message``, unless the pod already has exactly that."""
    for cond in (pod.get("status") or {}).get("conditions") or ():
        if cond.get("type") == "PodScheduled":
            if cond.get("status") == "False" and cond.get("message") == message:
                return None
            break
    return {
        "type": "PodScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": message,
        "lastProbeTime": None,
        "lastTransitionTime": now,
    }
