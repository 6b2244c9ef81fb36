"""``job-controller``: runs Volcano Jobs (``batch.volcano.sh/v1alpha1``, "vcjobs") unchanged.

Wiring (``initialize``, no I/O): it reads four shared informers, vcjobs, Pods, PodGroups
and Commands, and adds one index to the pod cache (pods by their controlling vcjob's uid).
Handlers only turn events into ``Request`` items on one rate-limited queue, as Volcano's
``job_controller_handler.go`` does:

- a Job added -> its key; updated -> its key when its spec or phase changed (our own status
  writes do not requeue it); deleted -> forgotten (its pods and PodGroup carry owner
  references, the garbage collector removes them);
- every pod event first tells the reconcile the informer has seen that pod (its create
  expectation is met, ``podwork.py``), so a pod created and deleted between two syncs is
  created again instead of counting as Pending forever;
- a pod of a vcjob updated -> a request with the event its new phase means (``PodFailed``
  with the first container's exit code, ``TaskCompleted`` when every pod of its task
  succeeded, ``PodRunning``, ``PodPending``, ``TaskFailed`` when the task's Running and
  Pending pods have restarted its ``maxRetry`` times) so policies can react; deleted ->
  ``PodEvicted`` unless this controller deleted it. A Job without policies, or an event no
  policy can act on, gets the plain key instead, queued ``RECOUNT_DELAY_S`` later, so a
  burst of pod updates is one sync and one status write;
- a PodGroup whose phase changed -> its Job's key (an ``Inqueue`` PodGroup is what lets the
  pods be created; an ``Unknown`` one carries the ``Unknown`` event for policies); one whose
  conditions changed -> its Job's key a moment later (the sync reports the scheduler's
  reason on the Job as ``PodGroupPending``);
- a ``bus.volcano.sh`` Command added whose target is a vcjob (``vcctl job suspend/resume``
  write them) -> a request carrying its action; the sync deletes the Command, then acts.

``run`` starts the informers (idempotent), waits for their first lists, then runs
``worker_threads`` workers calling ``JobSync.sync``.
"""

from __future__ import annotations

from volcano_py.api import JSON
from volcano_py.api import resources as R
from volcano_py.api.meta import annotations_of, controller_ref, is_being_deleted, labels_of
from volcano_py.api.vcjob import (
    API_VERSION,
    DEFAULT_TASK_SPEC,
    JOB_NAME_KEY,
    JOB_VERSION,
    KIND,
    TASK_PARTITION_ID,
    TASK_SPEC_KEY,
    Event,
)
from volcano_py.api.vcjob import JOB_CONTROLLER_NAME as NAME
from volcano_py.controllers.framework import ControllerOptions
from volcano_py.controllers.job.interfaces import (
    JOB_UID_INDEX,
    Caches,
    Request,
    job_pods,
    job_uid_index,
)
from volcano_py.controllers.job.sync import JobSync
from volcano_py.controllers.skeleton import QueueController, recorder_of
from volcano_py.kube.informer import EventHandler, HandlerRegistration, Informer
from volcano_py.kube.store import key_of

# Pod updates that only change the Job's counts wait this long, so the updates of a gang's
# pods (bound, Running, ...) coalesce into one status write instead of one each.
RECOUNT_DELAY_S = 0.5
DEFAULT_TASK_MAX_RETRY = 3  # Volcano's job cache: a task's maxRetry of 0 means 3
# Events no policy can act on (Volcano's internal events): they only sync.
_SYNC_ONLY = frozenset({Event.OUT_OF_SYNC, Event.POD_RUNNING, Event.COMMAND_ISSUED})


def task_failed(task_pods: list[JSON], max_retry: int | None) -> bool:
    """Volcano's ``TaskFailed``: the task's Pending/Running pods restarted ``maxRetry`` times.

    Container and init container restarts count; ``maxRetry`` 0 (unset) means 3 and -1 no
    limit, as in Volcano's job cache.
    """
    if max_retry is None or max_retry == -1 or not task_pods:
        return False
    limit = max_retry or DEFAULT_TASK_MAX_RETRY
    restarts = 0
    for pod in task_pods:
        status = pod.get("status") or {}
        if status.get("phase") not in ("Running", "Pending"):
            continue
        for key in ("initContainerStatuses", "containerStatuses"):
            for entry in status.get(key) or []:
                count = entry.get("restartCount")
                restarts += count if isinstance(count, int) else 0
    return restarts >= limit


def pod_event(
    old: JSON | None, new: JSON, task_pods: list[JSON], max_retry: int | None = None
) -> tuple[str, int | None]:
    """The event a pod's update means (Volcano's ``updatePod``) and the exit code, if any.

    A Running or Pending pod whose task has restarted ``maxRetry`` times means ``TaskFailed``
    unless its phase just changed (then ``PodRunning`` / ``PodPending``, as in Volcano).
    """
    old_phase = ((old or {}).get("status") or {}).get("phase")
    status = new.get("status") or {}
    phase = status.get("phase")
    if phase == "Failed" and old_phase != "Failed":
        statuses = status.get("containerStatuses") or []
        terminated = ((statuses[0] if statuses else {}).get("state") or {}).get("terminated")
        code = terminated.get("exitCode") if isinstance(terminated, dict) else None
        return Event.POD_FAILED, code if isinstance(code, int) else None
    if phase == "Succeeded" and old_phase != "Succeeded":
        done = all((p.get("status") or {}).get("phase") == "Succeeded" for p in task_pods)
        return (Event.TASK_COMPLETED if done else Event.OUT_OF_SYNC), None
    if phase == "Running" and old_phase != "Running":
        return Event.POD_RUNNING, None
    if phase == "Pending" and old_phase != "Pending":
        return Event.POD_PENDING, None
    if phase in ("Running", "Pending") and task_failed(task_pods, max_retry):
        return Event.TASK_FAILED, None
    return Event.OUT_OF_SYNC, None


class JobController(QueueController[Request]):
    """The ``job-controller`` (Volcano's ``jobcontroller``); see the module docstring."""

    controller_name = NAME
    resources = (R.VCJOBS, R.PODS, R.PODGROUPS, R.COMMANDS)
    cache_index = (R.PODS, JOB_UID_INDEX, job_uid_index)  # pods by their vcjob

    def __init__(self) -> None:
        super().__init__()
        self.sync_state: JobSync | None = None

    def connect(
        self, options: ControllerOptions, informers: list[Informer]
    ) -> list[HandlerRegistration]:
        """Build the sync state over the shared caches, register the handlers."""
        jobs, pods, podgroups, commands = informers
        self.sync_state = JobSync(
            options.client,
            Caches(jobs.store, pods.store, podgroups.store),
            recorder_of(options),
            enqueue_after=self.queue.add_after,
        )
        return [
            jobs.add_event_handler(
                EventHandler(
                    on_add=self._job_added, on_update=self._job_updated, on_delete=self._job_gone
                )
            ),
            pods.add_event_handler(
                EventHandler(
                    on_add=self._pod_added, on_update=self._pod_updated, on_delete=self._pod_gone
                )
            ),
            podgroups.add_event_handler(EventHandler(on_update=self._podgroup_updated)),
            commands.add_event_handler(EventHandler(on_add=self._command_added)),
        ]

    def close(self) -> None:
        """Stop the pod-creating threads."""
        if self.sync_state is not None:
            self.sync_state.close()

    def sync(self, request: Request) -> None:
        """Reconcile one queued request (the worker's sync function)."""
        if self.sync_state is None:
            raise RuntimeError("job-controller: sync() before initialize()")
        self.sync_state.sync(request)

    # --- handlers: events in, requests out -------------------------------------------------

    def _job_added(self, job: JSON) -> None:
        self.queue.add(Request(key_of(job)))

    def _job_updated(self, old: JSON, new: JSON) -> None:
        phase = ((old.get("status") or {}).get("state") or {}).get("phase")
        new_phase = ((new.get("status") or {}).get("state") or {}).get("phase")
        if old.get("spec") != new.get("spec") or phase != new_phase or is_being_deleted(new):
            self.queue.add(Request(key_of(new), event=Event.OUT_OF_SYNC))

    def _job_gone(self, job: JSON) -> None:
        if self.sync_state is not None:
            self.sync_state.forget(key_of(job))

    def _pod_request(self, pod: JSON, event: str, exit_code: int | None = None) -> Request | None:
        ref = controller_ref(pod)
        if ref is None or ref.get("kind") != KIND or ref.get("apiVersion") != API_VERSION:
            return None
        annotations = annotations_of(pod)
        job_name = annotations.get(JOB_NAME_KEY)
        task = annotations.get(TASK_SPEC_KEY)
        try:
            version = int(annotations.get(JOB_VERSION, ""))
        except ValueError:
            return None
        if not job_name or task is None:
            return None
        namespace = (pod.get("metadata") or {}).get("namespace", "")
        key = f"{namespace}/{job_name}"
        if event in _SYNC_ONLY or not self._has_policies(key):
            return Request(key)  # only a sync: one queue item per job, deduplicated
        return Request(
            key,
            event=event,
            task=task,
            pod=(pod.get("metadata") or {}).get("name", ""),
            partition=labels_of(pod).get(TASK_PARTITION_ID, ""),
            exit_code=exit_code,
            version=version,
            job_uid=str(ref.get("uid", "")),
        )

    def _has_policies(self, key: str) -> bool:
        job = self.sync_state.caches.jobs.get(key) if self.sync_state is not None else None
        if job is None:
            return True  # not cached yet: keep the event, the sync decides
        spec = job.get("spec") or {}
        return bool(spec.get("policies")) or any(
            isinstance(t, dict) and t.get("policies") for t in spec.get("tasks") or []
        )

    def _pod_added(self, pod: JSON) -> None:
        if self.sync_state is not None:
            self.sync_state.observed(pod)

    def _pod_updated(self, old: JSON, new: JSON) -> None:
        if self.sync_state is not None:
            self.sync_state.observed(new)
        if old.get("metadata", {}).get("resourceVersion") == new.get("metadata", {}).get(
            "resourceVersion"
        ):
            return
        task = annotations_of(new).get(TASK_SPEC_KEY)
        uid = str((controller_ref(new) or {}).get("uid", ""))
        pods = job_pods(self.sync_state.caches.pods, uid) if self.sync_state is not None else []
        siblings = [p for p in pods if annotations_of(p).get(TASK_SPEC_KEY) == task]
        event, code = pod_event(old, new, siblings, self._task_max_retry(new, task))
        self._queue_pod_request(self._pod_request(new, event, code))

    def _task_max_retry(self, pod: JSON, task: str | None) -> int | None:
        """The pod's task's ``maxRetry`` from the cached Job (None when unknown)."""
        name = annotations_of(pod).get(JOB_NAME_KEY)
        if self.sync_state is None or not name or task is None:
            return None
        job = self.sync_state.caches.jobs.get(
            f"{(pod.get('metadata') or {}).get('namespace')}/{name}"
        )
        tasks = ((job or {}).get("spec") or {}).get("tasks")
        for spec in tasks if isinstance(tasks, list) else []:
            if isinstance(spec, dict) and (spec.get("name") or DEFAULT_TASK_SPEC) == task:
                value = spec.get("maxRetry")
                return value if isinstance(value, int) and not isinstance(value, bool) else 0
        return None

    def _pod_gone(self, pod: JSON) -> None:
        if self.sync_state is not None:
            self.sync_state.observed(pod)
        ours = self.sync_state is not None and self.sync_state.deleted_by_us(pod)
        event = Event.OUT_OF_SYNC if ours else Event.POD_EVICTED
        self._queue_pod_request(self._pod_request(pod, event))

    def _queue_pod_request(self, request: Request | None) -> None:
        """Events for policies at once; a plain recount a moment later, so a burst is one."""
        if request is None:
            return
        if request.event:
            self.queue.add(request)
        else:
            self.queue.add_after(request, RECOUNT_DELAY_S)

    def _command_added(self, command: JSON) -> None:
        target = command.get("target") or {}
        if target.get("apiVersion") != API_VERSION or target.get("kind") != KIND:
            return
        meta = command.get("metadata") or {}
        self.queue.add(
            Request(
                f"{meta.get('namespace', '')}/{target.get('name')}",
                event=Event.COMMAND_ISSUED,
                action=str(command.get("action") or ""),
                command=str(meta.get("name", "")),
            )
        )

    def _podgroup_updated(self, old: JSON, new: JSON) -> None:
        ref = controller_ref(new)
        if ref is None or ref.get("kind") != KIND or ref.get("apiVersion") != API_VERSION:
            return
        namespace = (new.get("metadata") or {}).get("namespace", "")
        old_status, new_status = old.get("status") or {}, new.get("status") or {}
        if old_status.get("phase") == new_status.get("phase"):
            if old_status.get("conditions") != new_status.get("conditions"):
                # the scheduler's reason changed: the sync reports it on the Job
                self.queue.add_after(Request(f"{namespace}/{ref.get('name')}"), RECOUNT_DELAY_S)
            return
        unknown = (new.get("status") or {}).get("phase") == "Unknown"  # Volcano's JobUnknownEvent
        event = Event.UNKNOWN if unknown else ""
        self.queue.add(Request(f"{namespace}/{ref.get('name')}", event=event))
