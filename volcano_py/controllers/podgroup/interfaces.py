"""What pg-controller's reconciles depend on: work items, caches, client verbs, pod index.

Kept apart from the reconciles so that ``sync.py``, ``workload.py`` and ``controller.py`` share
one definition of each, and unit tests can build the caches and a recording client from
here without threads or informers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from volcano_py.api import JSON
from volcano_py.api import resources as R
from volcano_py.api.meta import controller_ref
from volcano_py.kube.store import Store
from volcano_py.kube.transforms import CacheReads
from volcano_py.kube.verbs import Create, Delete, Get, Patch, Update

POD = "Pod"
REPLICASET = "ReplicaSet"
STATEFULSET = "StatefulSet"
# Owner kinds whose annotations a PodGroup inherits, and where they are read.
CACHED_OWNERS = {REPLICASET: R.REPLICASETS, STATEFULSET: R.STATEFULSETS}
FETCHED_OWNERS = {"DaemonSet": R.DAEMONSETS, "Job": R.JOBS}
# Index of the pod cache: the uid of each pod's controller.
CONTROLLER_UID_INDEX = "pg-controller:controller-uid"


# What pg-controller reads from the shared Pod cache (checked against the Pod transform by
# tests/unit/kube/test_cache_contract.py): identity, owners and group annotation, the
# scheduler name, and what a pod's quota usage is made of.
POD_READS = CacheReads(
    "pg-controller",
    R.PODS,
    (
        "metadata.name",
        "metadata.namespace",
        "metadata.uid",
        "metadata.labels",
        "metadata.annotations",
        "metadata.creationTimestamp",
        "metadata.deletionTimestamp",
        "metadata.deletionGracePeriodSeconds",
        "metadata.ownerReferences[].kind",
        "metadata.ownerReferences[].name",
        "metadata.ownerReferences[].uid",
        "metadata.ownerReferences[].controller",
        "spec.schedulerName",
        "spec.priorityClassName",
        "spec.overhead",
        "spec.schedulingGroup.podGroupName",
        "spec.containers[].resources",
        "spec.initContainers[].resources",
        "spec.initContainers[].restartPolicy",
        "status.phase",
    ),
)


def controller_uid_index(pod: JSON) -> list[str]:
    """Index function: the uid of the pod's controller (none for a bare pod)."""
    ref = controller_ref(pod)
    uid = ref.get("uid") if ref else None
    return [uid] if uid else []


@dataclass(frozen=True, slots=True)
class Request:
    """One work item: the kind (``Pod``, ``ReplicaSet``, ``StatefulSet``) and its cache key."""

    kind: str
    key: str

    def __str__(self) -> str:
        return f"{self.kind} {self.key}"


class PodGroupClient(Get, Create, Update, Patch, Delete, Protocol):
    """The ``KubeClient`` verbs pg-controller uses (a recording fake in unit tests)."""


@dataclass(frozen=True, slots=True)
class Caches:
    """The stores pg-controller reads (the shared informers' in production)."""

    pods: Store
    podgroups: Store
    replicasets: Store
    statefulsets: Store
