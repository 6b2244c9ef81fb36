"""When two candidate domains of a partitioned gang must give the same trial.

``allocate_sub_jobs`` tries every candidate domain of a gradient and keeps the best sum of
SubJob scores, ties to the first by name. On a large uniform cluster most domains are copies
of each other (same shape, same free resources): their trials place the SubJobs the same
way and score the same, so only the first by name can win and the others need no trial.

``domain_signature`` describes a domain so that equal signatures mean equal trials:

- its HyperNodes in (tier, name) order, each with its tier and its parent's position;
- its nodes in name order, each with everything the built-in predicates and scores read
  (allocatable, used, releasing, pod count and limit, readiness, unschedulable, taints) and
  the positions of its HyperNode chain.

Every choice inside a trial depends only on these states and on name order, which the
positions preserve. Node names and labels are left out, so the shortcut applies only when
the job's pending pods cannot tell nodes apart by them (``label_blind``: no ``nodeName``,
``nodeSelector`` or ``affinity``) and every SubJob with pending pods has none placed (its
scores would depend on where those run). A domain holding placed pods of the job is always
tried (``job_nodes``): the task-count scores see them.
"""

from __future__ import annotations

from collections.abc import Hashable

from volcano_py.scheduler.api.hypernode_info import HyperNodeInfo
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.node_info import NodeInfo
from volcano_py.scheduler.api.task_info import OCCUPYING
from volcano_py.scheduler.framework.session import Session


def label_blind(job: JobInfo) -> bool:
    """No SubJob with pending pods has any placed; no pending pod selects nodes by name/label."""
    for sub_job in job.sub_jobs.values():
        if sub_job.allocated_hypernode and sub_job.pending_tasks():
            return False
    for task in job.pending_tasks():
        spec = task.pod.get("spec") or {}
        if spec.get("nodeName") or spec.get("nodeSelector") or spec.get("affinity"):
            return False
    return True


def job_nodes(job: JobInfo) -> set[str]:
    """Nodes running or holding a placed pod of the job."""
    return {t.node_name for t in job.tasks.values() if t.node_name and t.status in OCCUPYING}


def domain_signature(ssn: Session, domain: HyperNodeInfo, avoid: set[str]) -> Hashable | None:
    """See the module docstring; None when the domain holds one of the ``avoid`` nodes."""
    hypernodes = ssn.hypernodes
    members = [domain.name]
    i = 0
    while i < len(members):
        members.extend(c for c in hypernodes[members[i]].children if c in hypernodes)
        i += 1
    members.sort(key=lambda n: (hypernodes[n].tier, n))
    position = {name: i for i, name in enumerate(members)}
    shape = tuple((hypernodes[n].tier, position.get(hypernodes[n].parent, -1)) for n in members)
    chains = ssn.tree.node_chain
    members_nodes = ssn.nodes_in(domain.name)
    if avoid and any(node.name in avoid for node in members_nodes):
        return None
    nodes = tuple(
        (
            _node_state(node),
            tuple(position[h] for h in chains.get(node.name, ()) if h in position),
        )
        for node in members_nodes
    )
    return shape, nodes


def _node_state(node: NodeInfo) -> Hashable:
    return (
        tuple(node.allocatable.items()),
        tuple(node.used.items()),
        tuple(node.releasing.items()),
        node.pods,
        node.max_tasks,
        node.ready,
        node.unschedulable,
        tuple((t.get("key"), t.get("value"), t.get("effect")) for t in node.taints),
    )
