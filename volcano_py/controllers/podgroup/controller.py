"""``pg-controller``: PodGroups for plain Pods, Deployments (ReplicaSets) and StatefulSets.

The promise: annotate an ordinary workload with ``scheduling.volcano.sh/group-min-member``,
give its pods ``schedulerName: volcano``, and they are gang scheduled. This controller makes
the PodGroups the scheduler gangs on (see ``docs/podgroup.md`` for the user's view).

Wiring (``initialize``, no I/O): it reads four shared informers, Pods, PodGroups,
ReplicaSets and StatefulSets, and adds one index to the pod cache (pods by their
controller's uid). Handlers only turn events into ``Request`` keys on one rate-limited
queue:

- a Pod added that we take (our scheduler, no group name yet) -> its key;
- a ReplicaSet or StatefulSet added or updated -> its key;
- a PodGroup added or deleted -> the key of the ReplicaSet/StatefulSet that owns it, so a
  workload seen with a stale replica count is looked at again once its PodGroup exists, and
  a PodGroup deleted by hand under a running workload is made again;
- Pod updates and deletes only clear the bookkeeping in ``sync.py``.

``run`` starts the informers (idempotent), waits for their first lists, then runs
``worker_threads_for_podgroup`` workers until ``stop``. Workers call ``sync(request)``:
``sync.py`` for pods, ``workload.py`` for workloads. Everything is idempotent (names are
derived from uids; an existing PodGroup or an ``AlreadyExists`` is success), so a restart
simply re-lists and finishes whatever was left.

DaemonSet and Job owners' annotations are fetched with a GET instead of being cached: they
are needed only when a PodGroup is created, once per owner, which is far cheaper than
holding every Job and DaemonSet of the cluster in memory.
"""

from __future__ import annotations

import logging
import threading

from volcano_py.api import JSON
from volcano_py.api import resources as R
from volcano_py.api.constants import (
    KUBE_GROUP_NAME_ANNOTATION,
    PODGROUP_CONTROLLER_NAME,
    PODGROUP_NAME_PREFIX,
)
from volcano_py.api.meta import annotations_of, controller_ref, name_of, namespace_of
from volcano_py.controllers.framework import (
    ControllerOptions,
    start_and_wait_for_caches,
)
from volcano_py.controllers.podgroup.interfaces import (
    CONTROLLER_UID_INDEX,
    POD,
    REPLICASET,
    STATEFULSET,
    Caches,
    Request,
    controller_uid_index,
)
from volcano_py.controllers.podgroup.sync import PodGroupSync
from volcano_py.controllers.podgroup.workload import sync_workload
from volcano_py.kube.clock import Clock
from volcano_py.kube.events import DiscardRecorder, Recorder
from volcano_py.kube.informer import EventHandler, HandlerRegistration, Informer
from volcano_py.kube.store import key_of
from volcano_py.kube.workqueue import RateLimitingQueue, run_workers

log = logging.getLogger(__name__)

_WORKLOAD_KINDS = (REPLICASET, STATEFULSET)


class PodGroupController:
    """The ``pg-controller`` (Volcano's ``pgcontroller``); see the module docstring."""

    def __init__(self, *, clock: Clock | None = None) -> None:
        self._clock = clock
        self._options: ControllerOptions | None = None
        self._informers: list[Informer] = []
        self._registrations: list[HandlerRegistration] = []
        self.queue: RateLimitingQueue[Request] = RateLimitingQueue(PODGROUP_CONTROLLER_NAME)
        self.sync_state: PodGroupSync | None = None

    @property
    def name(self) -> str:
        """``pg-controller``."""
        return PODGROUP_CONTROLLER_NAME

    def initialize(self, options: ControllerOptions) -> None:
        """Get the shared informers, index pods by controller, register the handlers."""
        self._options = options
        factory = options.informers
        pods = factory.informer(R.PODS)
        podgroups = factory.informer(R.PODGROUPS)
        replicasets = factory.informer(R.REPLICASETS)
        statefulsets = factory.informer(R.STATEFULSETS)
        self._informers = [pods, podgroups, replicasets, statefulsets]
        try:
            pods.add_indexers({CONTROLLER_UID_INDEX: controller_uid_index})
        except ValueError:
            log.debug("pod index %s already present", CONTROLLER_UID_INDEX)
        recorder: Recorder = options.recorder if options.recorder is not None else DiscardRecorder()
        self.sync_state = PodGroupSync(
            options.client,
            Caches(pods.store, podgroups.store, replicasets.store, statefulsets.store),
            recorder,
            scheduler_names=options.scheduler_names,
            inherit_owner_annotations=options.inherit_owner_annotations,
            enqueue=self.queue.add,
            clock=self._clock,
            implicit=options.implicit_pod,
        )
        self._registrations = [
            pods.add_event_handler(
                EventHandler(
                    on_add=self._pod_added, on_update=self._pod_updated, on_delete=self._pod_gone
                )
            ),
            podgroups.add_event_handler(
                EventHandler(on_add=self._podgroup_added, on_delete=self._podgroup_gone)
            ),
            replicasets.add_event_handler(self._workload_handler(REPLICASET)),
            statefulsets.add_event_handler(self._workload_handler(STATEFULSET)),
        ]

    def run(self, stop: threading.Event) -> None:
        """Start the informers, wait for their caches, run the workers until ``stop``."""
        if self._options is None:
            raise RuntimeError("pg-controller: run() before initialize()")
        if not start_and_wait_for_caches(self._options, self._informers, stop):
            return
        log.info("%s: caches synced", self.name)
        workers = max(1, self._options.worker_threads_for_podgroup)
        run_workers(self.queue, workers, self.sync, stop, self.name)

    def sync(self, request: Request) -> None:
        """Reconcile one queued request (the worker's sync function)."""
        if self.sync_state is None:
            raise RuntimeError("pg-controller: sync() before initialize()")
        if request.kind == POD:
            self.sync_state.sync_pod(request.key)
        else:
            sync_workload(self.sync_state, request.kind, request.key)

    # --- handlers: events in, keys out ------------------------------------------------------

    def _pod_added(self, pod: JSON) -> None:
        state = self.sync_state
        if state is not None and state.takes(pod):
            self.queue.add(Request(POD, key_of(pod)))

    def _pod_updated(self, old: JSON, new: JSON) -> None:
        state = self.sync_state
        if state is not None and annotations_of(new).get(KUBE_GROUP_NAME_ANNOTATION):
            state.observed_pod(new)

    def _pod_gone(self, pod: JSON) -> None:
        if self.sync_state is not None:
            self.sync_state.observed_pod(pod)

    def _podgroup_added(self, podgroup: JSON) -> None:
        if self.sync_state is not None:
            self.sync_state.observed_podgroup(podgroup)
        self._requeue_owner(podgroup)

    def _podgroup_gone(self, podgroup: JSON) -> None:
        if self.sync_state is not None:
            self.sync_state.observed_podgroup(podgroup)
        self._requeue_owner(podgroup)

    def _requeue_owner(self, podgroup: JSON) -> None:
        """Queue the ReplicaSet/StatefulSet whose PodGroup this is (one of ours by its name)."""
        ref = controller_ref(podgroup)
        if ref is None or ref.get("kind") not in _WORKLOAD_KINDS:
            return
        if name_of(podgroup) == f"{PODGROUP_NAME_PREFIX}{ref.get('uid')}":
            key = f"{namespace_of(podgroup)}/{ref.get('name')}"
            self.queue.add(Request(str(ref.get("kind")), key))

    def _workload_handler(self, kind: str) -> EventHandler:
        def added(obj: JSON) -> None:
            self.queue.add(Request(kind, key_of(obj)))

        def updated(old: JSON, new: JSON) -> None:
            self.queue.add(Request(kind, key_of(new)))

        return EventHandler(on_add=added, on_update=updated)
