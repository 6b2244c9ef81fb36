"""What the job controller's reconcile depends on: work items, caches, client verbs, pod index.

Kept apart from the reconcile so ``sync.py``, ``policies.py`` and ``controller.py`` share
one definition of each and unit tests can build caches and a recording client from here
without threads or informers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from volcano_py.api import JSON
from volcano_py.api import resources as R
from volcano_py.api.meta import controller_ref
from volcano_py.api.vcjob import API_VERSION, KIND
from volcano_py.kube.store import Store
from volcano_py.kube.transforms import CacheReads
from volcano_py.kube.verbs import Create, Delete, Get, Update

# What job-controller reads from the shared Pod cache (checked against the Pod transform by
# tests/unit/kube/test_cache_contract.py): identity and ownership for bookkeeping, the
# annotations and labels naming task, version and partition, the phase for counts, and the
# container statuses for exit-code policies, dependsOn readiness and maxRetry.
POD_READS = CacheReads(
    "job-controller",
    R.PODS,
    (
        "metadata.name",
        "metadata.namespace",
        "metadata.uid",
        "metadata.resourceVersion",
        "metadata.annotations",
        "metadata.labels",
        "metadata.deletionTimestamp",
        "metadata.ownerReferences[].apiVersion",
        "metadata.ownerReferences[].kind",
        "metadata.ownerReferences[].uid",
        "metadata.ownerReferences[].controller",
        "status.phase",
        "status.containerStatuses[].ready",
        "status.containerStatuses[].restartCount",
        "status.initContainerStatuses[].restartCount",
        "status.containerStatuses[].state.terminated.exitCode",
    ),
)

# Index of the pod cache: the uid of the Volcano Job that controls each pod.
JOB_UID_INDEX = "job-controller:job-uid"


def job_uid_index(pod: JSON) -> list[str]:
    """Index function: the uid of the pod's controlling vcjob (none for other pods)."""
    ref = controller_ref(pod)
    if ref is None or ref.get("kind") != KIND or ref.get("apiVersion") != API_VERSION:
        return []
    uid = ref.get("uid")
    return [uid] if uid else []


def job_pods(pods: Store, uid: str) -> list[JSON]:
    """The cached pods the Job ``uid`` controls."""
    return pods.by_index(JOB_UID_INDEX, uid)


@dataclass(frozen=True, slots=True)
class Request:
    """One work item (Volcano's ``apis.Request``): a Job key plus what happened.

    ``event`` is a pod or PodGroup event (``PodFailed`` ...), ``action`` an explicit action
    (a delayed policy action or a command); ``task``/``pod``/``partition`` name the source;
    ``version`` is the pod's ``volcano.sh/job-version`` (-1 when not from a pod);
    ``command`` the name of the ``bus.volcano.sh`` Command that asked for ``action``.
    """

    key: str
    event: str = ""
    action: str = ""
    task: str = ""
    pod: str = ""
    partition: str = ""
    exit_code: int | None = None
    version: int = -1
    job_uid: str = ""
    command: str = ""  # a bus.volcano.sh Command to delete before its action runs

    def __str__(self) -> str:
        what = self.action or self.event or "sync"
        return f"{self.key} ({what}{' ' + self.pod if self.pod else ''})"


class JobClient(Get, Create, Update, Delete, Protocol):
    """The ``KubeClient`` verbs the job controller uses (a recording fake in unit tests)."""


@dataclass(frozen=True, slots=True)
class Caches:
    """The stores the job controller reads (the shared informers' in production)."""

    jobs: Store
    pods: Store
    podgroups: Store
