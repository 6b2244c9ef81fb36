"""pg-controller's reconcile of a ReplicaSet or StatefulSet and its PodGroup.

Volcano calls this the WorkLoadSupport path. A workload's pods share one PodGroup,
``podgroup-<workload uid>``; the pod reconcile (``sync.py``) creates it when a pod appears,
but only this path notices that the workload itself changed:

- ``spec.replicas == 0``: the PodGroup is deleted (its pods are going away; a later scale up
  creates a fresh one).
- ``spec.replicas > 0``: its *current* pods are those whose controller is the workload, and,
  for a StatefulSet, whose ``controller-revision-hash`` label equals
  ``status.updateRevision`` (during a rolling update the PodGroup follows the new
  template). The first of them by name that we take stands for the template: the PodGroup
  is created from it, or updated when the template or the owner's annotations changed
  (spec, labels and annotations compared; written only when different). Its pods still
  without a group name are queued for the pod reconcile, which annotates them.
- A pod already carrying another group name (a LeaderWorkerSet makes its own PodGroups)
  means the workload is not ours: nothing is done.

The reconcile reads the workload from the cache, so events arriving out of order end right:
a ReplicaSet's add with 0 replicas seen after its update to 1 is just a stale look, and the
next notification (or the PodGroup's own add, which re-queues its owner) settles it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from volcano_py.api import JSON
from volcano_py.api import constants as C
from volcano_py.api.meta import (
    annotations_of,
    is_being_deleted,
    labels_of,
    name_of,
    namespace_of,
    uid_of,
)
from volcano_py.api.native_groups import pod_group_name
from volcano_py.controllers.podgroup.interfaces import (
    CONTROLLER_UID_INDEX,
    POD,
    STATEFULSET,
    Request,
)
from volcano_py.controllers.podgroup.sync import PodGroupSync

log = logging.getLogger(__name__)


GANG_ANNOTATION_IGNORED = "GangAnnotationIgnored"


def replicas_of(workload: Mapping[str, Any]) -> int:
    """``spec.replicas`` (the API server defaults it to 1)."""
    replicas = (workload.get("spec") or {}).get("replicas")
    return replicas if isinstance(replicas, int) else 1


def current_pods(sync: PodGroupSync, kind: str, workload: Mapping[str, Any]) -> list[JSON]:
    """The workload's pods from the cache; for a StatefulSet only the update revision's."""
    pods = sync.caches.pods.by_index(CONTROLLER_UID_INDEX, uid_of(workload))
    if kind == STATEFULSET:
        revision = (workload.get("status") or {}).get("updateRevision") or ""
        pods = [p for p in pods if labels_of(p).get(C.CONTROLLER_REVISION_HASH_LABEL) == revision]
    return sorted(pods, key=name_of)


def sync_workload(sync: PodGroupSync, kind: str, key: str) -> None:
    """Reconcile the ReplicaSet or StatefulSet at ``key`` with its PodGroup (module doc)."""
    store = sync.caches.statefulsets if kind == STATEFULSET else sync.caches.replicasets
    workload = store.get(key)
    if workload is None:
        return  # deleted: garbage collection removes its PodGroup
    namespace = namespace_of(workload)
    group = f"{C.PODGROUP_NAME_PREFIX}{uid_of(workload)}"
    if replicas_of(workload) == 0:
        sync.delete_podgroup(namespace, group)
        return
    candidates = [
        pod
        for pod in current_pods(sync, kind, workload)
        if (pod.get("spec") or {}).get("schedulerName") in sync.scheduler_names
        and not is_being_deleted(pod)
    ]
    if not candidates:
        return
    template = candidates[0]
    native = pod_group_name(template)
    if native:
        # one gang object per pod: Kubernetes' own PodGroup is theirs (api/native_groups.py)
        if annotations_of(workload).get(C.VOLCANO_GROUP_MIN_MEMBER_ANNOTATION):
            message = (
                f"{C.VOLCANO_GROUP_MIN_MEMBER_ANNOTATION} is not used: the pods belong to the "
                f"PodGroup {native} (spec.schedulingGroup), whose gang.minCount is their gang"
            )
            sync.warn_owner(workload, kind, GANG_ANNOTATION_IGNORED, message)
        return
    current = annotations_of(template).get(C.KUBE_GROUP_NAME_ANNOTATION)
    if current and current != group:
        log.debug("%s %s: pods already belong to PodGroup %s; skipped", kind, key, current)
        return
    sync.ensure_podgroup(template, group, update=True)
    for pod in candidates:
        if sync.takes(pod) and not sync.awaiting_cache(pod):
            sync.enqueue(Request(POD, f"{namespace}/{name_of(pod)}"))
