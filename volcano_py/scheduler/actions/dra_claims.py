"""Pods with DRA resource claims wait: volcano-py does not allocate ``ResourceClaim``s.

kube-scheduler's DynamicResources plugin allocates a pod's claims (``spec.resourceClaims``)
to devices on the chosen node; without it, a pod placed as if it had no claims would never
start (the kubelet waits for an allocation nobody makes). So a job with such a pod pending is
not placed at all: allocate and backfill leave it with the condition ``DRANotSupported``
naming the pod and its claims, the pods get it as their ``FailedScheduling`` reason, and
preempt/reclaim evict nothing for it. Removing the claims means a new pod (the field is
immutable), which brings the job back.
"""

from __future__ import annotations

from volcano_py.scheduler.actions.placement import gang_prefix
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.task_info import TaskInfo
from volcano_py.scheduler.framework.interface import JobFit

DRA_NOT_SUPPORTED_REASON = "DRANotSupported"


def claim_names(task: TaskInfo) -> list[str]:
    """The names of the pod's ``spec.resourceClaims`` (empty when it has none)."""
    claims = (task.pod.get("spec") or {}).get("resourceClaims") or ()
    return [str(c.get("name", "")) if isinstance(c, dict) else str(c) for c in claims]


def claims_fit(job: JobInfo) -> JobFit | None:
    """The job's condition when one of its pending pods has DRA claims, else None."""
    # asked of every job before each placement: a job without claims (the usual case) is
    # told by one pass over its pods, without ordering its pending ones
    if not any((t.pod.get("spec") or {}).get("resourceClaims") for t in job.tasks.values()):
        return None
    for task in job.pending_tasks():
        names = claim_names(task)
        if names:
            return JobFit(
                DRA_NOT_SUPPORTED_REASON,
                f"{gang_prefix(job)}pod {task.key} has DRA resource claims "
                f"({', '.join(names)}): DRA claims are not supported by volcano-py",
            )
    return None
