"""pg-controller's reconcile of one pod: make sure its PodGroup exists, then annotate the pod.

``PodGroupSync`` holds what every sync needs (the caches, the client, the options) and the
two pieces of bookkeeping that bridge the informers' lag behind our own writes:

- PodGroups we created (or found already existing) that the PodGroup cache has not shown
  yet, so the pods of one workload do not each attempt a create;
- pods we annotated that the pod cache still shows unannotated, so a workload sync running
  in between does not patch them again.

Both are cleared by the informer handlers (``observed_*``) once the cache catches up. An
entry is only added, under the same lock the handlers take, after checking that the cache
does not already show the write (the informer stores an object before it notifies), so
none is left behind.

A pod is taken when its ``spec.schedulerName`` is one of ours and its
``scheduling.k8s.io/group-name`` is missing or empty, and it names no Kubernetes PodGroup in
``spec.schedulingGroup`` (that one is its gang: one gang object per pod,
``api/native_groups.py``) — unless that group is the one a Job controller made by default
for a Job that asked for nothing (``job_default``: basic, no constraints; ``WorkloadWithJob``
makes one for every Job): then the pod gets a Volcano PodGroup *of that group's name*, as
Volcano would give it one (the Job's annotations honoured), and the scheduler waits for it
(the native one is never a job there). Whether it is such a group is read with a GET when
the pod is synced. ``sync_pod`` creates the PodGroup if
it does not exist (an ``AlreadyExists`` from a concurrent create is success), then patches
the annotation with the pod's resourceVersion as precondition: a value someone else set in
the meantime is never overwritten; it is logged and reported as an Event instead.
``ensure_podgroup(..., update=True)`` (the workload path, ``workload.py``) also rewrites an
existing PodGroup whose spec, labels or annotations no longer match the pod and its owners.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from volcano_py.api import JSON
from volcano_py.api import constants as C
from volcano_py.api import resources as R
from volcano_py.api.errors import FieldError
from volcano_py.api.meta import (
    annotations_of,
    controller_ref,
    is_being_deleted,
    name_of,
    namespace_of,
    owner_references_of,
    resource_version_of,
    uid_of,
)
from volcano_py.api.native_groups import job_default, pod_group_name
from volcano_py.controllers.podgroup.builder import (
    BuiltPodGroup,
    build_podgroup,
    podgroup_name,
    updated_podgroup,
)
from volcano_py.controllers.podgroup.interfaces import (
    CACHED_OWNERS,
    FETCHED_OWNERS,
    REPLICASET,
    STATEFULSET,
    Caches,
    PodGroupClient,
    Request,
)
from volcano_py.controllers.podgroup.partitions import partition_labels
from volcano_py.kube.clock import Clock, RealClock
from volcano_py.kube.errors import AlreadyExists, Conflict, Invalid, NotFound, PermanentError
from volcano_py.kube.events import WARNING, Recorder

log = logging.getLogger(__name__)


REASON_GROUP_NAME_CONFLICT = "PodGroupNameConflict"
REASON_CREATE_FAILED = "FailedCreatePodGroup"


@dataclass(slots=True)
class _CreateLock:
    lock: threading.Lock = field(default_factory=threading.Lock)
    users: int = 0


class PodGroupSync:
    """The pod reconcile and the helpers the workload reconcile shares; see the module doc."""

    def __init__(
        self,
        client: PodGroupClient,
        caches: Caches,
        recorder: Recorder,
        *,
        scheduler_names: Collection[str] = (C.DEFAULT_SCHEDULER_NAME,),
        inherit_owner_annotations: bool = True,
        enqueue: Callable[[Request], None] = lambda request: None,
        clock: Clock | None = None,
        implicit: Callable[[Mapping[str, Any]], bool] = lambda pod: False,
    ) -> None:
        self.client = client
        self.caches = caches
        self.recorder = recorder
        self.scheduler_names = frozenset(scheduler_names)
        self.inherit_owner_annotations = inherit_owner_annotations
        self.enqueue = enqueue
        # pods the embedded scheduler runs as implicit jobs: no PodGroup object (implicit.py)
        self.implicit = implicit
        self.clock = clock or RealClock()
        self._lock = threading.Lock()
        self._created: dict[str, JSON] = {}  # "ns/name" -> PodGroups created, not yet cached
        self._annotated: dict[str, str] = {}  # pod uid -> group name, not yet in the cache
        self._create_locks: dict[str, _CreateLock] = {}  # "ns/name" of creates in flight

    # --- what we take ----------------------------------------------------------------------

    def takes(self, pod: Mapping[str, Any]) -> bool:
        """Whether ``pod`` is for one of our schedulers and still needs a group name."""
        scheduler = (pod.get("spec") or {}).get("schedulerName")
        return (
            scheduler in self.scheduler_names
            and not annotations_of(pod).get(C.KUBE_GROUP_NAME_ANNOTATION)
            and (not pod_group_name(pod) or (controller_ref(pod) or {}).get("kind") == "Job")
            and not is_being_deleted(pod)
            and not self.implicit(pod)
        )

    def awaiting_cache(self, pod: Mapping[str, Any]) -> bool:
        """True when we annotated ``pod`` and the cache has not shown it yet."""
        return uid_of(pod) in self._annotated

    # --- informer bookkeeping --------------------------------------------------------------

    def observed_pod(self, pod: Mapping[str, Any]) -> None:
        """The cache shows ``pod`` annotated, or deleted: stop remembering our patch."""
        with self._lock:
            self._annotated.pop(uid_of(pod), None)

    def observed_podgroup(self, podgroup: Mapping[str, Any]) -> None:
        """The cache shows ``podgroup`` (added or deleted): stop remembering our create."""
        with self._lock:
            self._created.pop(f"{namespace_of(podgroup)}/{name_of(podgroup)}", None)

    def podgroup_known(self, namespace: str, name: str) -> bool:
        """The PodGroup is in the cache, or we created it and the cache lags."""
        key = f"{namespace}/{name}"
        return key in self.caches.podgroups or key in self._created

    # --- the pod reconcile -----------------------------------------------------------------

    def sync_pod(self, key: str) -> None:
        """Give the pod at ``key`` its PodGroup and group-name annotation, if we take it."""
        pod = self.caches.pods.get(key)
        if pod is None or not self.takes(pod) or self.awaiting_cache(pod):
            return
        name = pod_group_name(pod)
        if name and not self._job_default(namespace_of(pod), name):
            return  # the native group is the pod's gang
        name = name or podgroup_name(pod)
        podgroup = self.ensure_podgroup(pod, name, update=False)
        self.annotate_pod(pod, name, partition_labels(pod, podgroup))

    def _job_default(self, namespace: str, name: str) -> bool:
        """Whether the native PodGroup ``name`` is a Job controller's default (module doc)."""
        try:
            return job_default(self.client.get(R.NATIVE_PODGROUPS, name, namespace))
        except NotFound:
            return False  # nothing to schedule the pod by: it waits, as kube-scheduler's would

    def build(self, pod: Mapping[str, Any]) -> BuiltPodGroup:
        """The desired PodGroup for ``pod`` (owner annotations read when inheritance is on)."""
        owners: dict[str, str] = {}
        replicas = None
        if self.inherit_owner_annotations:
            owners, replicas = self._read_owners(pod)
        try:
            return build_podgroup(
                pod,
                owners,
                inherit_owner_annotations=self.inherit_owner_annotations,
                now=self.clock.wall(),
                replicas=replicas,
            )
        except FieldError as e:
            self._warn(pod, REASON_CREATE_FAILED, f"cannot build PodGroup: {e}")
            raise PermanentError(f"cannot build PodGroup: {e}") from e

    def ensure_podgroup(
        self, pod: Mapping[str, Any], name: str, *, update: bool
    ) -> Mapping[str, Any] | None:
        """Create the PodGroup ``name`` for ``pod`` if missing; with ``update``, refresh it.

        Returns the PodGroup as known: the cached one, or the body created (by this call or
        an earlier one the cache has not shown yet); None when another process created it.
        """
        namespace = namespace_of(pod)
        key = f"{namespace}/{name}"
        existing = self.caches.podgroups.get(key)
        if existing is None:
            with self._creating(key):  # a second worker waits, then finds it created
                if key not in self._created and key not in self.caches.podgroups:
                    built = self.build(pod)
                    built.body["metadata"]["name"] = name  # a native group's name, or the same
                    self._create(pod, key, built)
            with self._lock:
                return self.caches.podgroups.get(key) or self._created.get(key)
        if not update:
            return existing
        built = self.build(pod)
        body = updated_podgroup(existing, built.body)
        if body is None:
            return existing
        try:
            self.client.update(R.PODGROUPS, body)
        except Invalid as e:
            self._warn(pod, REASON_CREATE_FAILED, f"PodGroup {key} update rejected: {e}")
            raise PermanentError(f"PodGroup {key} update rejected: {e}") from e
        log.info("PodGroup %s updated from pod %s/%s", key, namespace, name_of(pod))
        self._record_warnings(pod, built)
        return body

    @contextlib.contextmanager
    def _creating(self, key: str) -> Iterator[None]:
        """Serialize the creates of one PodGroup (the pods of a workload race for it)."""
        with self._lock:
            entry = self._create_locks.setdefault(key, _CreateLock())
            entry.users += 1
        try:
            with entry.lock:
                yield
        finally:
            with self._lock:
                entry.users -= 1
                if entry.users == 0:
                    del self._create_locks[key]

    def _create(self, pod: Mapping[str, Any], key: str, built: BuiltPodGroup) -> None:
        namespace = namespace_of(pod)
        try:
            self.client.create(R.PODGROUPS, built.body, namespace)
        except AlreadyExists:
            log.debug("PodGroup %s already exists for pod %s/%s", key, namespace, name_of(pod))
        except Invalid as e:
            self._warn(pod, REASON_CREATE_FAILED, f"PodGroup {key} rejected: {e}")
            raise PermanentError(f"PodGroup {key} rejected: {e}") from e
        else:
            log.info("PodGroup %s created for pod %s/%s", key, namespace, name_of(pod))
            self._record_warnings(pod, built)
        with self._lock:
            if key not in self.caches.podgroups:
                self._created[key] = built.body

    def delete_podgroup(self, namespace: str, name: str) -> None:
        """Delete the PodGroup if we know of it (NotFound is success)."""
        if not self.podgroup_known(namespace, name):
            return
        try:
            self.client.delete(R.PODGROUPS, name, namespace)
            log.info("PodGroup %s/%s deleted: its workload has 0 replicas", namespace, name)
        except NotFound:
            pass
        with self._lock:
            self._created.pop(f"{namespace}/{name}", None)

    def annotate_pod(
        self, pod: Mapping[str, Any], group: str, labels: Mapping[str, str] | None = None
    ) -> None:
        """Set the pod's group-name to ``group`` unless someone set another one meanwhile.

        ``labels`` (a partition id) go in the same patch: the pod joins its gang with them.
        """
        namespace, name = namespace_of(pod), name_of(pod)
        current: Mapping[str, Any] = pod
        for _ in range(3):
            metadata: JSON = {
                "resourceVersion": resource_version_of(current),
                "annotations": {C.KUBE_GROUP_NAME_ANNOTATION: group},
            }
            if labels:
                metadata["labels"] = dict(labels)
            patch = {"metadata": metadata}
            try:
                self.client.patch(R.PODS, name, patch, namespace, patch_type="strategic")
            except NotFound:
                return
            except Conflict:
                try:
                    current = self.client.get(R.PODS, name, namespace)
                except NotFound:
                    return
                if uid_of(current) != uid_of(pod):
                    return
                value = annotations_of(current).get(C.KUBE_GROUP_NAME_ANNOTATION)
                if value == group:
                    break
                if value:
                    self._report_conflict(current, group, value)
                    return
                continue
            break
        else:
            raise Conflict(409, "Conflict", f"pod {namespace}/{name} kept changing while annotated")
        log.debug("pod %s/%s annotated with PodGroup %s", namespace, name, group)
        with self._lock:
            if (
                annotations_of(self.caches.pods.get(f"{namespace}/{name}") or {}).get(
                    C.KUBE_GROUP_NAME_ANNOTATION
                )
                != group
            ):
                self._annotated[uid_of(pod)] = group

    def _report_conflict(self, pod: Mapping[str, Any], group: str, value: str) -> None:
        message = (
            f"normal pod {namespace_of(pod)}/{name_of(pod)} annotations "
            f"{C.KUBE_GROUP_NAME_ANNOTATION} value is not {group}, but {value}"
        )
        log.error("%s", message)
        self._warn(pod, REASON_GROUP_NAME_CONFLICT, message)

    # --- owners ----------------------------------------------------------------------------

    def owner_annotations(self, pod: Mapping[str, Any]) -> dict[str, str]:
        """The annotations of the pod's owners merged (see ``_read_owners``)."""
        return self._read_owners(pod)[0]

    def _read_owners(self, pod: Mapping[str, Any]) -> tuple[dict[str, str], int | None]:
        """The owners' annotations merged, and a controlling ReplicaSet's ``spec.replicas``.

        The first owner listed wins a key; the replicas are None without such a ReplicaSet.
        ReplicaSets and StatefulSets come from the caches (a GET when the cache has not seen
        the owner yet); DaemonSets and Jobs are fetched. A missing owner adds nothing;
        other API errors propagate, so the sync is retried rather than building a PodGroup
        without its owner's settings.
        """
        merged: dict[str, str] = {}
        replicas: int | None = None
        namespace = namespace_of(pod)
        for ref in owner_references_of(pod):
            kind, name = ref.get("kind") or "", ref.get("name") or ""
            if not kind or not name:
                continue
            owner = self._owner(kind, namespace, name, ref.get("uid") or "")
            if owner is None:
                continue
            for key, value in annotations_of(owner).items():
                merged.setdefault(key, value)
            if kind == REPLICASET and ref.get("controller"):
                wanted = (owner.get("spec") or {}).get("replicas")
                replicas = wanted if isinstance(wanted, int) else 1
        return merged, replicas

    def _owner(self, kind: str, namespace: str, name: str, uid: str) -> JSON | None:
        store = {REPLICASET: self.caches.replicasets, STATEFULSET: self.caches.statefulsets}
        if kind in store:
            cached = store[kind].get(f"{namespace}/{name}")
            if cached is not None and (not uid or uid_of(cached) == uid):
                return cached
            resource = CACHED_OWNERS[kind]
        elif kind in FETCHED_OWNERS:
            resource = FETCHED_OWNERS[kind]
        else:
            return None
        try:
            return self.client.get(resource, name, namespace)
        except NotFound:
            log.info("owner %s %s/%s of a pod not found", kind, namespace, name)
            return None

    # --- events ----------------------------------------------------------------------------

    def _record_warnings(self, pod: Mapping[str, Any], built: BuiltPodGroup) -> None:
        for warning in built.warnings:
            log.warning("pod %s/%s: %s", namespace_of(pod), name_of(pod), warning.message)
            self._warn(pod, warning.reason, warning.message)

    def _warn(self, pod: Mapping[str, Any], reason: str, message: str) -> None:
        self.recorder.event(pod, WARNING, reason, message, resource=R.PODS)

    def warn_owner(self, owner: Mapping[str, Any], kind: str, reason: str, message: str) -> None:
        """A Warning Event on a ReplicaSet or StatefulSet (``kind``)."""
        log.warning("%s %s/%s: %s", kind, namespace_of(owner), name_of(owner), message)
        resource = R.STATEFULSETS if kind == "StatefulSet" else R.REPLICASETS
        self.recorder.event(owner, WARNING, reason, message, resource=resource)
