"""What preempt/reclaim take and where: candidate domains, protected pods, a domain's result.

Shared by the planner (``eviction``) and ``explain``: the HyperNodes a job may be placed in
(its reach, without allocate's idle pre-filter), which pods are never victims
(``volcano.sh/preemptable: "false"`` on the pod or its PodGroup), and ``DomainChoice``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from volcano_py.api.constants import POD_PREEMPTABLE
from volcano_py.scheduler.actions.placement import reach_by_tier
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.task_info import TaskInfo, TaskStatus
from volcano_py.scheduler.framework.session import Session

CLUSTER_DOMAIN = "<cluster>"
VictimFn = Callable[[TaskInfo, list[TaskInfo]], list[TaskInfo]]
# (preemptor job, victim job) -> whether the action may take the victim's pods
Scope = Callable[[JobInfo, JobInfo], bool]
# tasks an eviction may take: bound to a node and holding it
EVICTABLE_STATES = frozenset({TaskStatus.BINDING, TaskStatus.BOUND, TaskStatus.RUNNING})


@dataclass(slots=True)
class DomainChoice:
    """One candidate domain's victims and cost (``explain`` prints these)."""

    domain: str
    tier: int
    victims: list[TaskInfo] = field(default_factory=list)
    cost: tuple[int, int, int] = (0, 0, 0)
    feasible: bool = False
    note: str = ""
    placement: dict[str, str] = field(default_factory=dict)  # preemptor task -> node


def not_preemptable(task: TaskInfo, jobs: dict[str, JobInfo]) -> bool:
    """``volcano.sh/preemptable: "false"`` on the pod (annotation or label) or its PodGroup."""
    meta = task.pod.get("metadata") or {}
    values = [(meta.get("annotations") or {}).get(POD_PREEMPTABLE)]
    values.append((meta.get("labels") or {}).get(POD_PREEMPTABLE))
    job = jobs.get(task.job)
    if job is not None:
        pg_meta = job.podgroup.get("metadata") or {}
        values.append((pg_meta.get("annotations") or {}).get(POD_PREEMPTABLE))
    return any(str(v).lower() == "false" for v in values if v is not None)


def candidate_domains(ssn: Session, job: JobInfo) -> list[tuple[str, int]]:
    """(HyperNode, tier) the job may be placed in, lowest tier first; the cluster otherwise."""
    if not job.with_network_topology():
        return [(CLUSTER_DOMAIN, 0)]
    hard, highest = job.is_hard_topology_mode()
    if not hard:
        highest = ssn.tree.top.tier
    out = []
    for tier, names in reach_by_tier(ssn, highest, job.allocated_hypernode):
        out += [(name, tier) for name in sorted(names)]
    return out
