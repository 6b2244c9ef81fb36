"""The SYNC step of a Job's reconcile: its PodGroup, then its pods, then its status.

In order (Volcano's ``syncJob``):

1. A Job without a phase is being initiated: its PodGroup ``<job>-<uid>`` is created first
   (the scheduler can admit it while the rest is written), unknown plugins are named in one
   Warning, and the status gets ``Pending`` and ``minAvailable``. While Pending, each plugin's
   ``on_job_add`` runs once (``plugin_steps.py``).
2. The PodGroup follows the spec. When its latest true condition is not ``Scheduled`` (the
   scheduler's ``Unschedulable`` with its reason), the Job gets Volcano's Warning
   ``PodGroupPending`` Event ``PodGroup <ns>:<job> unschedulable, reason: <message>``, once
   per condition. Until the scheduler moves it past ``Pending`` no pod is created; only the
   status update of the step is written.
3. The pods, level-based on the cache: each cached pod of the Job whose name is one of a
   task's ``<job>-<task>-<index>`` (index below ``replicas``) is counted, every other one is
   deleted; pods we created that the cache does not show yet count as Pending. The missing
   pods are handed to ``PodWriter`` as a lazy iterator in task and index order (a task with
   ``dependsOn`` waits until its dependencies have enough Running-and-ready or Succeeded
   pods), so the cost of a sync is the pods that exist plus one bounded batch. When more are
   missing than one sync creates, the Job's key comes back at once.
   A pod the API server refuses because its PriorityClass does not exist makes the Job
   wait instead of retrying with backoff: one Warning ``PriorityClassNotFound`` Event,
   ``status.state.reason`` ``PriorityClassNotFound`` with the API server's message, and a
   look again every ``PRIORITY_CLASS_RECHECK_S``.
4. The step's status update, written when the status changed.
"""

from __future__ import annotations

import copy
import logging
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from volcano_py.api import JSON
from volcano_py.api import resources as R
from volcano_py.api.meta import name_of
from volcano_py.api.vcjob import JobPhase, JobView, TaskSpec
from volcano_py.controllers.job.builder import build_podgroup, pod_name, updated_podgroup
from volcano_py.controllers.job.context import JobContext
from volcano_py.controllers.job.interfaces import Request, job_pods
from volcano_py.controllers.job.plugin_registry import plugins_of
from volcano_py.controllers.job.plugin_steps import (
    REASON_PLUGIN_ERROR,
    add_plugins,
    update_plugins,
)
from volcano_py.controllers.job.plugins import JobPlugin
from volcano_py.controllers.job.state import POD_RUNNING, POD_SUCCEEDED, Status, Step
from volcano_py.controllers.job.status import status_of
from volcano_py.kube.errors import AlreadyExists, Invalid
from volcano_py.kube.events import WARNING

log = logging.getLogger(__name__)


REASON_POD_GROUP_ERROR = "PodGroupError"
REASON_POD_GROUP_PENDING = "PodGroupPending"
REASON_PRIORITY_CLASS_NOT_FOUND = "PriorityClassNotFound"
# The API server's admission message for a pod naming a PriorityClass that does not exist.
_NO_PRIORITY_CLASS = "no PriorityClass with name"
# How often a Job waiting for its PriorityClass looks again (no PriorityClass cache here).
PRIORITY_CLASS_RECHECK_S = 30.0
REASON_FAILED_CREATE_POD = "FailedCreate"
_POD_GROUP_WAITING = ("", "Pending")


def sync_job(ctx: JobContext, job: JSON, view: JobView, step: Step) -> None:
    """Carry out a SYNC step for ``job`` (see the module docstring)."""
    plugins, unknown = plugins_of(view)
    initiating = not view.phase
    podgroup: Mapping[str, Any] | None = None
    if initiating:  # Volcano's initJobStatus: Pending, minAvailable, a condition
        podgroup = ensure_podgroup(ctx, job, view)
        if unknown:
            ctx.recorder.event(
                job,
                WARNING,
                REASON_PLUGIN_ERROR,
                "job plugins are not supported yet, the job runs without them: "
                + ", ".join(unknown),
                resource=R.VCJOBS,
            )
        status = Status(min_available=view.min_available)
        job = ctx.writer.write(job, view, status, changed=True)
        view = JobView.from_dict(job)
    if view.phase in ("", JobPhase.PENDING):  # Volcano's pluginOnJobAdd, while initiating
        body = add_plugins(ctx, job, view, plugins)
        if body is not None:
            job = ctx.writer.write_status(body)
    body = update_plugins(ctx, job, view, plugins)  # Volcano's OnJobUpdate (scaling)
    if body is not None:
        job = ctx.writer.write_status(body)
    old = status_of(job, view)
    if not initiating:
        podgroup = ensure_podgroup(ctx, job, view)
    if podgroup is not None:
        report_podgroup_condition(ctx, job, view, podgroup)
    phase = "" if podgroup is None else (podgroup.get("status") or {}).get("phase", "")
    if phase in _POD_GROUP_WAITING:  # no pods until the scheduler admits the gang
        new = copy.deepcopy(old)
        changed = step.update(new) if step.update else False
        if new != old:
            ctx.writer.write(job, view, new, changed=changed)
        return
    new = Status(
        phase=old.phase,
        min_available=view.min_available,
        version=old.version,
        retry_count=old.retry_count,
    )
    blocked = _sync_pods(ctx, job, view, new, plugins)
    changed = step.update(new) if step.update else False
    if blocked is not None:
        _wait_for_priority_class(ctx, job, view, new, changed, blocked)
    elif new != old:
        ctx.writer.write(job, view, new, changed=changed)


def _wait_for_priority_class(
    ctx: JobContext, job: JSON, view: JobView, new: Status, changed: bool, message: str
) -> None:
    """The Job's pods name a missing PriorityClass: say so on the Job, look again later.

    One Warning Event and ``status.state`` reason ``PriorityClassNotFound`` with the API
    server's message, written once (not on each look); no error, so no backoff retry loop.
    """
    state = (job.get("status") or {}).get("state") or {}
    said = (
        state.get("reason") == REASON_PRIORITY_CLASS_NOT_FOUND and state.get("message") == message
    )
    if not said or new != status_of(job, view):
        if not said:
            ctx.recorder.event(
                job, WARNING, REASON_PRIORITY_CLASS_NOT_FOUND, message, resource=R.VCJOBS
            )
        ctx.writer.write(
            job, view, new, changed=changed, reason=REASON_PRIORITY_CLASS_NOT_FOUND, message=message
        )
    ctx.enqueue_after(Request(f"{view.namespace}/{view.name}"), PRIORITY_CLASS_RECHECK_S)


def _sync_pods(
    ctx: JobContext, job: JSON, view: JobView, new: Status, plugins: list[JobPlugin]
) -> str | None:
    """Count the pods that exist, create missing ones (bounded), delete the rest.

    Returns the API server's message when pods could not be created only because their
    PriorityClass does not exist (the Job then waits, see ``_wait_for_priority_class``).
    """
    key = f"{view.namespace}/{view.name}"
    slots = TaskSlots(view)
    pods = {name_of(p): p for p in job_pods(ctx.caches.pods, view.uid)}
    surplus: list[JSON] = []
    for name, pod in pods.items():
        if slots.task_of(name) is None:
            surplus.append(pod)  # past a task's replicas, or a task that is gone
        else:
            new.count_existing(pod)
    created = ctx.pods.created_not_cached(key, pods)
    for name in created:  # ours, the cache has not shown them yet
        task = slots.task_of(name)
        if task is not None:
            new.count_pod(task.key, "Pending")
    ready = _ready_counts(pods, slots)
    missing = _missing(view, lambda name: name in pods or name in created, ready)
    errors: list[str] = []
    made, more = ctx.pods.create(job, view, missing, plugins, errors)
    for task, body in made:
        new.count_pod(task.key, (body.get("status") or {}).get("phase", "Pending"))
    for pod in surplus:
        if ctx.pods.delete(view, pod, errors):
            new.terminating += 1
    if errors and all(_NO_PRIORITY_CLASS in e for e in errors):
        return errors[0]
    if errors:
        message = "; ".join(errors)
        ctx.recorder.event(job, WARNING, REASON_FAILED_CREATE_POD, message, resource=R.VCJOBS)
        raise RuntimeError(f"Job {key}: {message}")
    if more:
        ctx.enqueue_after(Request(key), 0.0)
    return None


class TaskSlots:
    """Which task a pod name is a slot of: ``<job>-<task>-<index>`` with index < replicas."""

    def __init__(self, view: JobView) -> None:
        self._by_prefix = {f"{view.name}-{task.name}": task for task in view.tasks}

    def task_of(self, name: str) -> TaskSpec | None:
        """The task whose slot ``name`` is, or None."""
        head, _, index = name.rpartition("-")
        task = self._by_prefix.get(head)
        if task is None or not (index.isascii() and index.isdigit()):
            return None
        if index != "0" and index.startswith("0"):
            return None
        return task if int(index) < task.replicas else None


def _ready_counts(pods: Mapping[str, Mapping[str, Any]], slots: TaskSlots) -> Counter[str]:
    """Per task name, its pods that are Succeeded, or Running with every container ready."""
    ready: Counter[str] = Counter()
    for name, pod in pods.items():
        task = slots.task_of(name)
        if task is None:
            continue
        status = pod.get("status") or {}
        running_ready = status.get("phase") == POD_RUNNING and all(
            c.get("ready") for c in status.get("containerStatuses") or []
        )
        if status.get("phase") == POD_SUCCEEDED or running_ready:
            ready[task.name] += 1
    return ready


def _depends_on_ready(view: JobView, task: TaskSpec, ready: Counter[str]) -> bool:
    """Volcano's ``waitDependsOnTaskMeetCondition``."""
    depends = task.depends_on
    if not depends:
        return True
    names = [str(n) for n in depends.get("name") or []]

    def met(name: str) -> bool:
        dependency = view.task(name)
        if dependency is None or dependency.min_available is None:
            return True
        return ready[dependency.name] >= dependency.min_available

    if len(names) > 1 and depends.get("iteration") == "any":
        return any(met(n) for n in names)
    return all(met(n) for n in names)


def _missing(
    view: JobView, present: Callable[[str], bool], ready: Counter[str]
) -> Iterator[tuple[TaskSpec, int]]:
    """The missing pods, lazily, in task and index order (only as far as they are taken)."""
    for task in view.tasks:
        if not _depends_on_ready(view, task, ready):
            continue
        for ix in range(task.replicas):
            if not present(pod_name(view.name, task.name, ix)):
                yield task, ix


def report_podgroup_condition(
    ctx: JobContext, job: JSON, view: JobView, podgroup: Mapping[str, Any]
) -> None:
    """Volcano's ``recordPodGroupEvent``, once per condition (see the module docstring)."""
    latest: Mapping[str, Any] | None = None
    for condition in (podgroup.get("status") or {}).get("conditions") or []:
        if not isinstance(condition, Mapping) or condition.get("status") != "True":
            continue
        at = str(condition.get("lastTransitionTime") or "")
        if latest is None or at > str(latest.get("lastTransitionTime") or ""):
            latest = condition
    key = f"{view.namespace}/{view.name}"
    if latest is None or latest.get("type") == "Scheduled":
        ctx.reported.pop(key, None)
        return
    kind, message = str(latest.get("type") or ""), str(latest.get("message") or "")
    seen = (kind, message, str(latest.get("lastTransitionTime") or ""))
    if ctx.reported.get(key) == seen:
        return
    ctx.reported[key] = seen
    text = f"PodGroup {view.namespace}:{view.name} {kind.lower()}, reason: {message}"
    ctx.recorder.event(job, WARNING, REASON_POD_GROUP_PENDING, text, resource=R.VCJOBS)


def ensure_podgroup(ctx: JobContext, job: JSON, view: JobView) -> Mapping[str, Any] | None:
    """Create the Job's PodGroup or bring it in line with the spec; the cached one, if any."""
    key = f"{view.namespace}/{view.podgroup_name}"
    existing = ctx.caches.podgroups.get(key)
    try:
        if existing is None:
            ctx.client.create(R.PODGROUPS, build_podgroup(job, view), view.namespace)
            log.info(
                "Job %s/%s: created PodGroup %s", view.namespace, view.name, view.podgroup_name
            )
            return None
        body = updated_podgroup(existing, view)
        if body is not None:
            ctx.client.update(R.PODGROUPS, body)
    except AlreadyExists:
        return existing
    except Invalid as e:
        message = f"Failed to create PodGroup, err: {e}"
        ctx.recorder.event(job, WARNING, REASON_POD_GROUP_ERROR, message, resource=R.VCJOBS)
        raise
    return existing
