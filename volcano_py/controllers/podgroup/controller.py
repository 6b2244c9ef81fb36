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

from volcano_py.api import JSON
from volcano_py.api import resources as R
from volcano_py.api.constants import (
    KUBE_GROUP_NAME_ANNOTATION,
    PODGROUP_CONTROLLER_NAME,
    PODGROUP_NAME_PREFIX,
)
from volcano_py.api.meta import annotations_of, controller_ref, name_of, namespace_of
from volcano_py.controllers.framework import ControllerOptions
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
from volcano_py.controllers.skeleton import QueueController, recorder_of
from volcano_py.kube.clock import Clock
from volcano_py.kube.informer import EventHandler, HandlerRegistration, Informer
from volcano_py.kube.store import key_of

_WORKLOAD_KINDS = (REPLICASET, STATEFULSET)


class PodGroupController(QueueController[Request]):
    """The ``pg-controller`` (Volcano's ``pgcontroller``); see the module docstring."""

    controller_name = PODGROUP_CONTROLLER_NAME
    resources = (R.PODS, R.PODGROUPS, R.REPLICASETS, R.STATEFULSETS)
    cache_index = (R.PODS, CONTROLLER_UID_INDEX, controller_uid_index)  # pods by controller

    def __init__(self, *, clock: Clock | None = None) -> None:
        super().__init__()
        self._clock = clock
        self.sync_state: PodGroupSync | None = None

    def connect(
        self, options: ControllerOptions, informers: list[Informer]
    ) -> list[HandlerRegistration]:
        """Build the sync state over the shared caches, register the handlers."""
        pods, podgroups, replicasets, statefulsets = informers
        self.sync_state = PodGroupSync(
            options.client,
            Caches(pods.store, podgroups.store, replicasets.store, statefulsets.store),
            recorder_of(options),
            scheduler_names=options.scheduler_names,
            inherit_owner_annotations=options.inherit_owner_annotations,
            enqueue=self.queue.add,
            clock=self._clock,
            implicit=options.implicit_pod,
        )
        return [
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

    def worker_count(self, options: ControllerOptions) -> int:
        """``worker_threads_for_podgroup`` (Volcano's ``--worker-threads-for-podgroup``)."""
        return options.worker_threads_for_podgroup

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
            # A StatefulSet's new-revision pod can reach this cache after the StatefulSet's
            # last event (its status, written right after it made the pod), whose reconcile
            # then found no pod of the update revision; with no later event the PodGroup
            # would never follow the template. The pod's arrival runs that reconcile again.
            ref = controller_ref(pod)
            if ref is not None and ref.get("kind") == STATEFULSET:
                self.queue.add(Request(STATEFULSET, f"{namespace_of(pod)}/{ref.get('name')}"))

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
