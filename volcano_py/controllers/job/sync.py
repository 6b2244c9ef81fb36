"""The job controller's reconcile of one request: plan a step from the phase, do it, write status.

``JobSync.sync(request)`` reads the Job from the cache (or our own newer write of it: the
informer lags behind our status updates, as Volcano's job cache covers), turns the request's
event into an action through the job's and task's ``policies`` (``policies.py``), asks
``state.plan`` for the step and carries it out:

- **SYNC**: make sure the PodGroup ``<job>-<uid>`` exists and follows the spec; once the
  scheduler has moved it past ``Pending`` (``Inqueue``), create each missing
  ``<job>-<task>-<index>`` pod (a task with ``dependsOn`` waits for its dependencies'
  pods to be ready) and delete pods past a task's ``replicas``; recount; write status when
  it changed.
- **KILL** / **KILL_TARGET**: delete the job's pods (all, or one task's, pod's or
  partition's) whose phase is not retained, bump ``status.version`` on a whole-job kill,
  write status, and delete the PodGroup after a whole-job kill.

Only pods whose controller owner reference is this Job (same uid) are ever deleted. A Job
whose spec cannot be read (it got past admission with the webhook off) gets one Warning
Event and ``status.state`` ``Pending`` with reason ``InvalidSpec`` and the field in the
message; it is not retried until it changes. Every status write appends or refreshes the
phase's condition and records a ``Normal`` Event when the phase changes.
"""

from __future__ import annotations

import contextlib
import copy
import logging
import threading
import zlib
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from volcano_py.api import resources as R
from volcano_py.api.errors import FieldError
from volcano_py.api.meta import (
    annotations_of,
    is_being_deleted,
    labels_of,
    name_of,
    resource_version_of,
)
from volcano_py.api.vcjob import (
    FINISHED_PHASES,
    TASK_PARTITION_ID,
    TASK_SPEC_KEY,
    Action,
    JobPhase,
    JobView,
    TaskSpec,
)
from volcano_py.controllers.job.builder import (
    build_pod,
    build_podgroup,
    pod_name,
    updated_podgroup,
)
from volcano_py.controllers.job.interfaces import Caches, JobClient, Request, job_pods
from volcano_py.controllers.job.lifecycle import (
    REASON_PLUGIN_ERROR,
    add_plugins,
    delete_plugins,
    expire,
    take_command,
)
from volcano_py.controllers.job.plugin_registry import plugins_of
from volcano_py.controllers.job.plugins import JobPlugin
from volcano_py.controllers.job.policies import resolve_action
from volcano_py.controllers.job.state import (
    POD_RUNNING,
    POD_SUCCEEDED,
    Status,
    Step,
    StepKind,
    plan,
)
from volcano_py.controllers.job.status import now, status_body, status_of
from volcano_py.kube.clock import Clock, RealClock
from volcano_py.kube.errors import AlreadyExists, Invalid, NotFound
from volcano_py.kube.events import NORMAL, WARNING, Recorder

log = logging.getLogger(__name__)

JSON = dict[str, Any]

REASON_INVALID_SPEC = "InvalidSpec"
REASON_EXECUTE_ACTION = "ExecuteAction"
REASON_POD_GROUP_ERROR = "PodGroupError"
REASON_FAILED_CREATE_POD = "FailedCreatePodReason"
REASON_FAILED_DELETE_POD = "FailedDeletePodReason"
REASON_PHASE_CHANGED = "JobPhaseChanged"
_POD_GROUP_WAITING = ("", "Pending")
CREATE_THREADS = 16
JOB_LOCKS = 64


class JobSync:
    """Reconciles vcjobs; see the module docstring."""

    def __init__(
        self,
        client: JobClient,
        caches: Caches,
        recorder: Recorder,
        *,
        enqueue_after: Callable[[Request, float], None] = lambda request, delay: None,
        clock: Clock | None = None,
        create_threads: int = CREATE_THREADS,
    ) -> None:
        self.create_threads = create_threads
        self.clock: Clock = clock or RealClock()
        self.enqueue_after = enqueue_after
        self.client = client
        self.caches = caches
        self.recorder = recorder
        self._lock = threading.Lock()
        self._written: dict[str, JSON] = {}  # key -> our last write of the Job, until cached
        self._deleted: set[str] = set()  # uids of pods we deleted, until their delete is seen
        self._created: dict[str, set[str]] = {}  # job key -> pods we created, until cached
        self._executor: ThreadPoolExecutor | None = None
        # One reconcile of a Job at a time (Volcano shards jobs over its workers by key).
        self._job_locks = [threading.Lock() for _ in range(JOB_LOCKS)]

    # --- reading ------------------------------------------------------------------------------

    def job(self, key: str) -> JSON | None:
        """The Job at ``key``: the cached one, or our own write when it is newer."""
        cached = self.caches.jobs.get(key)
        with self._lock:
            mine = self._written.get(key)
            if cached is None:
                self._written.pop(key, None)
                return None
            if mine is not None and _newer(mine, cached):
                return mine
            self._written.pop(key, None)
        return cached

    def deleted_by_us(self, pod: Mapping[str, Any]) -> bool:
        """Whether we deleted ``pod`` (its disappearance is then no eviction); forgets it."""
        uid = (pod.get("metadata") or {}).get("uid", "")
        with self._lock:
            if uid in self._deleted:
                self._deleted.discard(uid)
                return True
        return False

    def forget(self, key: str) -> None:
        """The Job is gone: drop what we remember of it."""
        with self._lock:
            self._written.pop(key, None)
            self._created.pop(key, None)

    # --- the reconcile ------------------------------------------------------------------------

    def sync(self, request: Request) -> None:
        """Reconcile the Job ``request.key`` for ``request``'s event or action."""
        with self._job_locks[zlib.crc32(request.key.encode()) % JOB_LOCKS]:
            self._sync(request)

    def _sync(self, request: Request) -> None:
        job = self.job(request.key)
        if job is None or is_being_deleted(job):
            return
        if request.command and not take_command(self.client, self.recorder, job, request):
            return
        try:
            view = JobView.from_dict(job)
        except FieldError as e:
            self._invalid(job, str(e))
            return
        expires = view.phase in FINISHED_PHASES and view.ttl_seconds_after_finished is not None
        if expires and expire(self.client, self.clock, self.enqueue_after, job, view):
            return
        decision = resolve_action(view, request)
        action = decision.action
        if decision.delay > 0:
            self.recorder.event(
                job, NORMAL, REASON_EXECUTE_ACTION,
                f"Execute action {action} after {decision.delay:g}s", resource=R.VCJOBS,
            )  # fmt: skip
            delayed = Request(request.key, action=action, task=request.task, pod=request.pod,
                              partition=request.partition, job_uid=view.uid)  # fmt: skip
            self.enqueue_after(delayed, decision.delay)
            return
        if action != Action.SYNC_JOB:
            self.recorder.event(
                job, NORMAL, REASON_EXECUTE_ACTION, f"Start to execute action {action} ",
                resource=R.VCJOBS,
            )  # fmt: skip
        step = plan(view, action)
        if step.kind is StepKind.SYNC:
            self._sync_pods(job, view, step)
        else:
            self._kill(job, view, step, request, action)

    def _invalid(self, job: JSON, message: str) -> None:
        state = (job.get("status") or {}).get("state") or {}
        if state.get("reason") == REASON_INVALID_SPEC and state.get("message") == message:
            return
        log.warning("Job %s/%s: invalid spec: %s", job["metadata"].get("namespace"),
                    name_of(job), message)  # fmt: skip
        self.recorder.event(job, WARNING, REASON_INVALID_SPEC, message, resource=R.VCJOBS)
        body = copy.deepcopy(job)
        status = body.setdefault("status", {})
        status["state"] = {
            "phase": state.get("phase") or JobPhase.PENDING,
            "reason": REASON_INVALID_SPEC,
            "message": message,
            "lastTransitionTime": now(),
        }
        self._write_status(body)

    # --- SYNC -------------------------------------------------------------------------------

    def _sync_pods(self, job: JSON, view: JobView, step: Step) -> None:
        plugins, unknown = plugins_of(view)
        initiating = not view.phase
        if initiating:  # Volcano's initJobStatus: Pending, minAvailable, a condition
            # The PodGroup first: the scheduler can admit it while the rest is written.
            podgroup = self._ensure_podgroup(job, view)
            if unknown:
                self.recorder.event(
                    job, WARNING, REASON_PLUGIN_ERROR,
                    "job plugins are not supported yet, the job runs without them: "
                    + ", ".join(unknown),
                    resource=R.VCJOBS,
                )  # fmt: skip
            job = self._write(job, view, Status(min_available=view.min_available), changed=True)
            view = JobView.from_dict(job)
        if view.phase in ("", JobPhase.PENDING):  # Volcano's pluginOnJobAdd, while initiating
            body = add_plugins(job, view, plugins, self.client, self.recorder)
            if body is not None:
                job = self._write_status(body)
        old = status_of(job, view)
        if not initiating:
            podgroup = self._ensure_podgroup(job, view)
        phase = "" if podgroup is None else (podgroup.get("status") or {}).get("phase", "")
        if phase in _POD_GROUP_WAITING:  # no pods until the scheduler admits the gang
            new = copy.deepcopy(old)
            changed = step.update(new) if step.update else False
            if new != old:
                self._write(job, view, new, changed=changed)
            return
        new = Status(
            phase=old.phase,
            min_available=view.min_available,
            version=old.version,
            retry_count=old.retry_count,
        )
        pods = {name_of(p): p for p in job_pods(self.caches.pods, view.uid)}
        errors: list[str] = []
        missing: list[tuple[TaskSpec, int]] = []
        created = self._created_not_cached(view, pods)
        for task in view.tasks:
            ready_to_create = self._depends_on_ready(view, task)
            for ix in range(task.replicas):
                name = pod_name(view.name, task.name, ix)
                pod = pods.pop(name, None)
                if pod is not None:
                    self._count(new, pod)
                elif name in created:  # ours, the cache has not shown it yet
                    new.count_pod(task.key, "Pending")
                elif ready_to_create:
                    missing.append((task, ix))
        for task, body in self._create_pods(job, view, missing, errors, plugins):
            new.count_pod(task.key, (body.get("status") or {}).get("phase", "Pending"))
        for pod in pods.values():  # past a task's replicas, or a task that is gone
            if self._delete_pod(view, pod, errors):
                new.terminating += 1
        if errors:
            self.recorder.event(job, WARNING, REASON_FAILED_CREATE_POD,
                                "; ".join(errors), resource=R.VCJOBS)  # fmt: skip
            raise RuntimeError(f"Job {view.namespace}/{view.name}: {'; '.join(errors)}")
        changed = step.update(new) if step.update else False
        if new != old:
            self._write(job, view, new, changed=changed)

    def _count(self, status: Status, pod: Mapping[str, Any]) -> None:
        if is_being_deleted(pod):
            status.terminating += 1
            return
        status.count_pod(
            annotations_of(pod).get(TASK_SPEC_KEY, ""), (pod.get("status") or {}).get("phase", "")
        )

    def _depends_on_ready(self, view: JobView, task: TaskSpec) -> bool:
        """Volcano's ``waitDependsOnTaskMeetCondition``."""
        depends = task.depends_on
        if not depends:
            return True
        names = [str(n) for n in depends.get("name") or []]
        if len(names) > 1 and depends.get("iteration") == "any":
            return any(self._task_ready(view, n) for n in names)
        return all(self._task_ready(view, n) for n in names)

    def _task_ready(self, view: JobView, name: str) -> bool:
        task = view.task(name)
        if task is None:
            return True
        ready = 0
        for ix in range(task.replicas):
            pod = self.caches.pods.get(f"{view.namespace}/{pod_name(view.name, task.name, ix)}")
            if pod is None:
                continue
            status = pod.get("status") or {}
            running_ready = status.get("phase") == POD_RUNNING and all(
                c.get("ready") for c in status.get("containerStatuses") or []
            )
            if status.get("phase") == POD_SUCCEEDED or running_ready:
                ready += 1
        return task.min_available is None or ready >= task.min_available

    def _created_not_cached(self, view: JobView, cached: Mapping[str, Any]) -> set[str]:
        """Names of pods we created for the job that the cache does not show yet."""
        key = f"{view.namespace}/{view.name}"
        with self._lock:
            names = self._created.get(key)
            if not names:
                return set()
            names.difference_update(cached)
            if not names:
                del self._created[key]
            return set(names)

    def _create_pods(
        self,
        job: JSON,
        view: JobView,
        missing: list[tuple[TaskSpec, int]],
        errors: list[str],
        plugins: list[JobPlugin],
    ) -> list[tuple[TaskSpec, JSON]]:
        """Create the missing pods, several at once (as Volcano does); the ones created."""

        def create(item: tuple[TaskSpec, int]) -> tuple[TaskSpec, JSON | None]:
            task, ix = item
            body = build_pod(job, view, task, ix)
            for plugin in plugins:
                plugin.on_pod_create(body, view)
            try:
                return task, self.client.create(R.PODS, body, view.namespace)
            except AlreadyExists:
                return task, None  # counted once the cache shows it
            except Invalid as e:
                with self._lock:
                    errors.append(f"failed to create pod {body['metadata']['name']}: {e}")
                return task, None

        if len(missing) > 1 and self.create_threads > 1:
            results = list(self._pool().map(create, missing))
        else:
            results = [create(item) for item in missing]
        made = [(task, body) for task, body in results if body is not None]
        if made:
            with self._lock:
                names = self._created.setdefault(f"{view.namespace}/{view.name}", set())
                names.update(name_of(body) for _, body in made)
        return made

    def _pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(
                    self.create_threads, thread_name_prefix="controller:job-controller:create"
                )
            return self._executor

    def close(self) -> None:
        """Stop the pod-creating threads."""
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True)

    # --- KILL -------------------------------------------------------------------------------

    def _kill(self, job: JSON, view: JobView, step: Step, request: Request, action: str) -> None:
        new = Status(
            phase=view.phase or JobPhase.PENDING,
            min_available=int((job.get("status") or {}).get("minAvailable") or 0),
            version=view.version,
            retry_count=view.retry_count,
        )
        pods = job_pods(self.caches.pods, view.uid)
        whole_job = step.kind is StepKind.KILL
        errors: list[str] = []
        if whole_job:
            new.version += 1
            last_retry = view.retry_count >= view.max_retry - 1
            retain = step.retain | (frozenset({"Succeeded", "Failed"}) if last_retry else set())
            victims = []
            for pod in pods:
                if is_being_deleted(pod):
                    new.terminating += 1
                elif (pod.get("status") or {}).get("phase", "") not in retain:
                    victims.append(pod)
        else:
            victims = _targets(pods, request, action)
        for pod in victims:
            if is_being_deleted(pod) or self._delete_pod(view, pod, errors):
                new.terminating += 1
            else:
                self._count(new, pod)
        if errors:
            self.recorder.event(job, WARNING, REASON_FAILED_DELETE_POD,
                                "; ".join(errors), resource=R.VCJOBS)  # fmt: skip
            raise RuntimeError(f"Job {view.namespace}/{view.name}: {'; '.join(errors)}")
        if whole_job:  # Volcano's pluginOnJobDelete: a restarted job adds them afresh
            job = delete_plugins(job, view, self.client)
        changed = step.update(new) if step.update else False
        self._write(job, view, new, changed=changed)
        if whole_job:
            with contextlib.suppress(NotFound):
                self.client.delete(R.PODGROUPS, view.podgroup_name, view.namespace)

    def _delete_pod(self, view: JobView, pod: Mapping[str, Any], errors: list[str]) -> bool:
        owner = next(
            (r for r in (pod.get("metadata") or {}).get("ownerReferences") or []
             if r.get("controller")), None,
        )  # fmt: skip
        if owner is None or owner.get("uid") != view.uid:
            return False  # never delete a pod this Job does not own
        with self._lock:
            self._deleted.add((pod.get("metadata") or {}).get("uid", ""))
        try:
            self.client.delete(R.PODS, name_of(pod), view.namespace)
        except NotFound:
            return True
        except Invalid as e:
            errors.append(f"failed to delete pod {name_of(pod)}: {e}")
            return False
        return True

    # --- PodGroup ----------------------------------------------------------------------------

    def _ensure_podgroup(self, job: JSON, view: JobView) -> Mapping[str, Any] | None:
        key = f"{view.namespace}/{view.podgroup_name}"
        existing = self.caches.podgroups.get(key)
        try:
            if existing is None:
                self.client.create(R.PODGROUPS, build_podgroup(job, view), view.namespace)
                log.info("Job %s/%s: created PodGroup %s", view.namespace, view.name,
                         view.podgroup_name)  # fmt: skip
                return None
            body = updated_podgroup(existing, view)
            if body is not None:
                self.client.update(R.PODGROUPS, body)
        except AlreadyExists:
            return existing
        except Invalid as e:
            message = f"Failed to create PodGroup, err: {e}"
            self.recorder.event(job, WARNING, REASON_POD_GROUP_ERROR, message, resource=R.VCJOBS)
            raise
        return existing

    # --- writing status ----------------------------------------------------------------------

    def _write(self, job: JSON, view: JobView, status: Status, *, changed: bool) -> JSON:
        old_phase = view.phase
        body = copy.deepcopy(job)
        body["status"] = status_body(job, status, changed_phase=changed or not old_phase)
        written = self._write_status(body)
        if status.phase != old_phase:
            self.recorder.event(
                job, NORMAL, REASON_PHASE_CHANGED,
                f"Job phase changed from {old_phase or '(none)'} to {status.phase}",
                resource=R.VCJOBS,
            )  # fmt: skip
        return written

    def _write_status(self, body: JSON) -> JSON:
        written = self.client.update(R.VCJOBS, body, subresource="status")
        key = f"{body['metadata'].get('namespace')}/{name_of(body)}"
        if resource_version_of(written):
            with self._lock:
                self._written[key] = written
        return written


def _targets(pods: list[JSON], request: Request, action: str) -> list[JSON]:
    """The pods a RestartTask / RestartPod / RestartPartition names."""
    of_task = [p for p in pods if annotations_of(p).get(TASK_SPEC_KEY) == request.task]
    if action == Action.RESTART_POD:
        return [p for p in of_task if name_of(p) == request.pod]
    if action == Action.RESTART_PARTITION:
        return [p for p in of_task if labels_of(p).get(TASK_PARTITION_ID) == request.partition]
    return of_task


def _newer(mine: Mapping[str, Any], cached: Mapping[str, Any]) -> bool:
    try:
        return int(resource_version_of(mine)) > int(resource_version_of(cached))
    except ValueError:
        return False
