"""Pods whose PersistentVolumeClaims cannot be used yet wait, naming the claim.

kube-scheduler's VolumeBinding and VolumeRestrictions refuse such a pod before looking at any
node (PreFilter); here a job with such a pending pod is not tried, and its condition
``VolumeClaims`` says which pod and why, in kube-scheduler's words
(``api/volumes.claim_refusal``): a claim not found, lost or being deleted, an unbound claim of
an ``Immediate`` class, a ``ReadWriteOncePod`` claim another pod uses (a placed pod, or an
earlier pod of the same gang), and volcano-py's choice for an unbound ``WaitForFirstConsumer``
claim: the pod waits (docs/scheduler.md). A volume object changing or a pod leaving a node
brings the job back (its wake-up hints).
"""

from __future__ import annotations

from volcano_py.scheduler.actions.placement import gang_prefix
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.task_info import OCCUPYING
from volcano_py.scheduler.api.volumes import claim_refusal, read_write_once_pod
from volcano_py.scheduler.api.wake_hints import ClusterEvent
from volcano_py.scheduler.framework.interface import JobFit
from volcano_py.scheduler.framework.session import Session

VOLUME_CLAIMS_REASON = "VolumeClaims"
WAKE_ON = (ClusterEvent.VOLUME_CHANGED, ClusterEvent.POD_FREED)


def claims_in_use(ssn: Session) -> set[str]:
    """``namespace/name`` of the ReadWriteOncePod claims the placed pods use."""
    used: set[str] = set()
    for node in ssn.nodes.values():
        for task in node.tasks.values():
            if task.claims and task.status in OCCUPYING:
                used.update(read_write_once_pod(task.namespace, task.claims, ssn.volumes))
    return used


def volume_fit(ssn: Session, job: JobInfo) -> JobFit | None:
    """The job's condition when a pending pod's claims keep it from every node, else None."""
    if not any(t.claims for t in job.tasks.values()):  # the usual case, without ordering
        return None
    pending = [t for t in job.pending_tasks() if t.claims]
    if not pending:
        return None
    # only ReadWriteOncePod claims (rare) need the placed pods' claims: a scan of every pod
    rwop = any(read_write_once_pod(t.namespace, t.claims, ssn.volumes) for t in pending)
    used = claims_in_use(ssn) if rwop else set()
    for task in pending:
        refusal = claim_refusal(task.namespace, task.claims, ssn.volumes, used)
        if refusal is not None:
            ssn.wake_hints.declare(VOLUME_CLAIMS_REASON, WAKE_ON)
            return JobFit(VOLUME_CLAIMS_REASON, f"{gang_prefix(job)}pod {task.key}: {refusal}")
        used.update(read_write_once_pod(task.namespace, task.claims, ssn.volumes))
    return None
