"""The KILL and KILL_TARGET steps of a Job's reconcile (Volcano's ``killJob`` / ``killTarget``).

- **KILL** (the whole Job: restart, abort, complete, terminate, finished): every cached pod
  of the Job whose phase is not retained is deleted (on the last retry Succeeded and Failed
  pods are kept too), ``status.version`` is bumped, the plugins' objects are deleted
  (``plugin_steps.delete_plugins``), the status is written, then the PodGroup is deleted.
- **KILL_TARGET**: the pods of one task, one pod or one partition (``RestartTask`` /
  ``RestartPod`` / ``RestartPartition``) are deleted and the status is written.

Like the SYNC step it works from the cache: a pod already being deleted counts as
terminating and is not deleted again, and only pods the Job controls are ever deleted. A
whole-job kill also deletes the pods this controller created that the cache does not show
yet (by name and uid), so a restart racing its own creates leaves no pod of the old version.
"""

from __future__ import annotations

import contextlib

from volcano_py.api import JSON
from volcano_py.api import resources as R
from volcano_py.api.meta import annotations_of, is_being_deleted, labels_of, name_of
from volcano_py.api.vcjob import TASK_PARTITION_ID, TASK_SPEC_KEY, Action, JobPhase, JobView
from volcano_py.controllers.job.context import JobContext
from volcano_py.controllers.job.interfaces import Request, job_pods
from volcano_py.controllers.job.plugin_steps import delete_plugins
from volcano_py.controllers.job.state import POD_FAILED, POD_SUCCEEDED, Status, Step, StepKind
from volcano_py.kube.errors import NotFound
from volcano_py.kube.events import WARNING

REASON_FAILED_DELETE_POD = "FailedDelete"


def kill_job(
    ctx: JobContext, job: JSON, view: JobView, step: Step, request: Request, action: str
) -> None:
    """Carry out a KILL or KILL_TARGET step for ``job`` (see the module docstring)."""
    new = Status(
        phase=view.phase or JobPhase.PENDING,
        min_available=int((job.get("status") or {}).get("minAvailable") or 0),
        version=view.version,
        retry_count=view.retry_count,
    )
    pods = job_pods(ctx.caches.pods, view.uid)
    whole_job = step.kind is StepKind.KILL
    if whole_job:
        new.version += 1
        last_retry = view.retry_count >= view.max_retry - 1
        retain = step.retain | (frozenset({POD_SUCCEEDED, POD_FAILED}) if last_retry else set())
        victims = []
        for pod in pods:
            if is_being_deleted(pod):
                new.terminating += 1
            elif (pod.get("status") or {}).get("phase", "") not in retain:
                victims.append(pod)
    else:
        victims = _targets(pods, request, action)
    errors: list[str] = []
    if whole_job:  # ours, created but not shown by the cache yet: they go too
        cached = {name_of(p) for p in pods}
        key = f"{view.namespace}/{view.name}"
        for name, uid in ctx.pods.created_not_cached(key, dict.fromkeys(cached)).items():
            if ctx.pods.delete_created(view, name, uid, errors):
                new.terminating += 1
    for pod in victims:
        if is_being_deleted(pod) or ctx.pods.delete(view, pod, errors):
            new.terminating += 1
        else:
            new.count_existing(pod)
    if errors:
        message = "; ".join(errors)
        ctx.recorder.event(job, WARNING, REASON_FAILED_DELETE_POD, message, resource=R.VCJOBS)
        raise RuntimeError(f"Job {view.namespace}/{view.name}: {message}")
    if whole_job:  # Volcano's pluginOnJobDelete: a restarted job adds them afresh
        job = delete_plugins(ctx, job, view)
    changed = step.update(new) if step.update else False
    ctx.writer.write(job, view, new, changed=changed)
    if whole_job:
        with contextlib.suppress(NotFound):
            ctx.client.delete(R.PODGROUPS, view.podgroup_name, view.namespace)


def _targets(pods: list[JSON], request: Request, action: str) -> list[JSON]:
    """The pods a RestartTask / RestartPod / RestartPartition names."""
    of_task = [p for p in pods if annotations_of(p).get(TASK_SPEC_KEY) == request.task]
    if action == Action.RESTART_POD:
        return [p for p in of_task if name_of(p) == request.pod]
    if action == Action.RESTART_PARTITION:
        return [p for p in of_task if labels_of(p).get(TASK_PARTITION_ID) == request.partition]
    return of_task
