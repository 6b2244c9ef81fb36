"""A job's network topology as the session sees it (Volcano's session-open job handling).

- ``highestTierName`` is translated through the tree's tierName → tier map. An unknown name is
  never dropped silently: a hard-mode job gets ``topology_error`` and waits with a condition
  saying so; a soft-mode job (best effort anyway) keeps going and the name is logged.
- A hard-mode job with neither ``highestTierAllowed`` nor a name may span up to the virtual
  top tier (the whole cluster), still placed through the HyperNode path.
- Soft mode: the job goes through the HyperNode path with the virtual top as its only
  candidate (the gradient function returns ``[[cluster-top]]``), so the LCA node scores pull
  its tasks together without ever refusing a placement.
- While the tree is not ready (cycle, two parents), every topology-constrained job waits with a
  condition naming the broken HyperNodes; jobs without topology still schedule.
- The allocated HyperNode (PodGroup annotation ``volcano.sh/job-allocated-hypernode``) is
  dropped when that HyperNode no longer exists or no task of the job is placed, and recovered
  from the placed tasks when missing: the lowest-tier HyperNode containing all of them.
"""

from __future__ import annotations

import logging

from volcano_py.api.constants import NetworkTopologyMode
from volcano_py.scheduler.api.hypernode_info import HyperNodeTree
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.node_info import NodeInfo
from volcano_py.scheduler.api.task_info import OCCUPYING

log = logging.getLogger(__name__)


def resolve_job_topology(job: JobInfo, tree: HyperNodeTree, nodes: dict[str, NodeInfo]) -> None:
    """Fill in the session-level topology facts of ``job`` (see the module docstring)."""
    job.topology_error = ""
    if job.mode is None:
        return
    if not tree.ready:
        job.topology_error = "HyperNode tree is not ready: " + "; ".join(tree.errors)
        return
    hard = job.mode == NetworkTopologyMode.HARD
    if job.highest_tier_name and job.highest_tier is None:
        tier = tree.tier_names.get(job.highest_tier_name)
        if tier is not None:
            job.highest_tier = tier
        elif hard:
            known = ", ".join(sorted(tree.tier_names)) or "none"
            job.topology_error = (
                f"networkTopology.highestTierName {job.highest_tier_name!r} matches no "
                f"HyperNode tierName (known: {known})"
            )
            return
        else:
            log.info(
                "job %s: highestTierName %r is unknown; soft mode goes on without it",
                job.uid,
                job.highest_tier_name,
            )
    if hard and job.highest_tier is None:
        job.highest_tier = tree.top.tier
    _check_allocated_hypernode(job, tree, nodes)


def _check_allocated_hypernode(
    job: JobInfo, tree: HyperNodeTree, nodes: dict[str, NodeInfo]
) -> None:
    placed = [
        t.node_name
        for t in job.tasks.values()
        if t.status in OCCUPYING and t.node_name and t.node_name in nodes
    ]
    if job.allocated_hypernode and (job.allocated_hypernode not in tree.hypernodes or not placed):
        log.info(
            "job %s: dropping AllocatedHyperNode %s (gone or nothing placed)",
            job.uid,
            job.allocated_hypernode,
        )
        job.allocated_hypernode = ""
    if job.allocated_hypernode or not placed:
        return
    lca = ""
    for node in placed:
        leaf = tree.leaf_of(node)
        lca = tree.lca(lca, leaf) if lca else leaf
    job.allocated_hypernode = lca
    log.info(
        "job %s: recovered AllocatedHyperNode %s from %d placed tasks", job.uid, lca, len(placed)
    )
