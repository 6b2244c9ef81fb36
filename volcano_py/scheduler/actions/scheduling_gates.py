"""Scheduling gates: a pod whose ``spec.schedulingGates`` is not empty waits, holding nothing.

kube-scheduler keeps such a pod out of its queue (the SchedulingGates PreEnqueue plugin) and
the API server refuses to bind it; Volcano skips it in every action (``SchGated``). Here:

- ``JobInfo.pending_tasks`` leaves gated pods out, so no action places them and they never
  hold a node's resources, not even inside a session;
- an admitted job reserves its ``minResources`` less what its gated pods ask
  (``JobInfo.inqueue_need``), so a gated gang does not keep other jobs out of the cluster;
- a gang that cannot reach ``minMember`` without its gated pods is not tried: ``gated_fit``
  gives its PodGroup condition, naming the gated pods. The pods' own ``PodScheduled``
  condition is the API server's (``SchedulingGated``) and is left alone.

Removing the last gate is an update of the pod, which brings its job back to the next cycle;
no cluster event does (allocate declares no wake-up hint for ``SchedulingGated``).
"""

from __future__ import annotations

from volcano_py.scheduler.actions.placement import gang_prefix
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.framework.interface import JobFit

# kube-scheduler's reason and message for a gated pod (``v1.PodReasonSchedulingGated``)
SCHEDULING_GATED_REASON = "SchedulingGated"
SCHEDULING_GATED_MESSAGE = "Scheduling is blocked due to non-empty scheduling gates"
NAMED_PODS = 5


def gated_fit(job: JobInfo) -> JobFit | None:
    """The job's condition when its gated pods keep the gang below minMember, else None."""
    gated = job.gated_tasks()
    if not gated:
        return None
    reachable = job.ready_task_num() + len(job.pending_tasks())
    if reachable >= job.min_member:
        return None
    names = ", ".join(t.key for t in gated[:NAMED_PODS])
    more = len(gated) - NAMED_PODS
    if more > 0:
        names += f" and {more} more"
    gates: list[str] = []  # kube-scheduler's "waiting for scheduling gates: [a b]", in order
    for task in gated:
        for gate in (task.pod.get("spec") or {}).get("schedulingGates") or ():
            name = str(gate.get("name", "")) if isinstance(gate, dict) else str(gate)
            if name not in gates:
                gates.append(name)
    return JobFit(
        SCHEDULING_GATED_REASON,
        f"{gang_prefix(job)}{SCHEDULING_GATED_MESSAGE}: {len(gated)} pod(s) gated ({names}), "
        f"waiting for scheduling gates: [{' '.join(gates)}]",
    )
