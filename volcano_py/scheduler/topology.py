"""A job's network topology as the session sees it (Volcano's session-open job handling).

- ``highestTierName`` is translated through the tree's tierName → tier map. An unknown name is
  never dropped silently: a hard-mode job gets ``topology_error`` and waits with a condition
  saying so; a soft-mode job (best effort anyway) keeps going and the name is logged. A
  native PodGroup's key (a node label) that names no tier is placed within one value of that
  label instead, as kube-scheduler does (``job.label_key``, ``actions/allocate_label.py``).
- A hard-mode job with neither ``highestTierAllowed`` nor a name may span up to the virtual
  top tier (the whole cluster), still placed through the HyperNode path.
- Soft mode (Volcano HEAD, PR #5206): the job is searched like a hard one bounded by the
  virtual top tier (the plugin's ``job_tier``), from tier 1 upward, never refused while the
  cluster holds it; its own tier fields are not used.
- Broken HyperNodes (cycle, two parents, a node claimed by two leaves) are quarantined by the
  tree (``HyperNodeTree.quarantined``) and everything else keeps scheduling. A job whose
  AllocatedHyperNode is quarantined, or whose placed tasks run under one, needed it: it waits
  with a condition naming the HyperNode and why. (Volcano stops every topology job instead.)
- The allocated HyperNode (PodGroup annotation ``volcano.sh/job-allocated-hypernode``) is
  dropped when that HyperNode no longer exists or no task of the job is placed, and recovered
  from the placed tasks when missing: the lowest-tier HyperNode containing all of them (the
  writer then rewrites the annotation once; the cache keeps such a job in cycles until it
  has, ``cache.py``). A replaced HyperNode whose successors do not yet hold all the placed
  nodes is recovered in a later session, not pinned to the cluster top meanwhile. A
  hard job whose placed tasks span more than its highest allowed tier (bound while their node
  had no leaf, say) waits with a condition saying so instead of adopting that domain.
- SubJobs: each SubJob's AllocatedHyperNode is recovered every session from where its placed
  tasks run (never persisted), so after a restart a replacement pod rejoins its partition's
  HyperNode; a SubJob's ``highestTierName`` is translated like the job's, and an unknown name
  in hard mode makes the job wait with a condition naming the SubJob's policy.
"""

from __future__ import annotations

import logging

from volcano_py.api.constants import CLUSTER_TOP_HYPERNODE, NetworkTopologyMode
from volcano_py.api.native_groups import is_native_view
from volcano_py.kube.changelog import ChangeLog
from volcano_py.scheduler.api.hypernode_info import HyperNodeTree
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.node_info import NodeInfo
from volcano_py.scheduler.api.task_info import OCCUPYING

log = logging.getLogger(__name__)


def resolve_job_topology(
    job: JobInfo,
    tree: HyperNodeTree,
    nodes: dict[str, NodeInfo],
    notes: ChangeLog | None = None,
) -> None:
    """Fill in the session-level topology facts of ``job`` (see the module docstring).

    What it logs goes through ``notes``: once per change, not once per cycle.
    """
    notes = notes if notes is not None else ChangeLog()
    job.topology_error = ""
    if job.policies:
        if job.mode is None and not tree.ready and any(sj.mode for sj in job.sub_jobs.values()):
            job.topology_error = "HyperNode tree is not ready: " + "; ".join(tree.errors)
            return
        _resolve_sub_jobs(job, tree, nodes)
    if job.mode is None or job.topology_error:
        return
    if not tree.ready:
        job.topology_error = "HyperNode tree is not ready: " + "; ".join(tree.errors)
        return
    if tree.quarantined:
        needed = _quarantined_needs(job, tree)
        if needed:
            job.topology_error = "; ".join(
                f"HyperNode {name} is quarantined: {tree.quarantined[name]}" for name in needed
            )
            return
    hard = job.mode == NetworkTopologyMode.HARD
    if job.highest_tier_name and job.highest_tier is None:
        tier = tree.tier_names.get(job.highest_tier_name)
        if tier is not None:
            job.highest_tier = tier
        elif hard and not job.policies and is_native_view(job.podgroup):
            # kube-scheduler's way: within one value of the node label (allocate_label.py)
            job.label_key, job.mode = job.highest_tier_name, None
            return
        elif hard:
            known = ", ".join(sorted(tree.tier_names)) or "none"
            job.topology_error = (
                f"networkTopology.highestTierName {job.highest_tier_name!r} matches no "
                f"HyperNode tierName (known: {known})"
            )
            return
        else:
            notes.info(
                log,
                job.key,
                "job %s: highestTierName %r is unknown; soft mode goes on without it",
                job.key,
                job.highest_tier_name,
            )
    if hard and job.highest_tier is None:
        job.highest_tier = tree.top.tier
    _check_allocated_hypernode(job, tree, nodes, notes)
    allocated = tree.hypernodes.get(job.allocated_hypernode)
    tier_cap = job.highest_tier
    if hard and allocated is not None and tier_cap is not None and allocated.tier > tier_cap:
        # Placed tasks (e.g. bound while their node had no leaf) already span more than the
        # job may: wait until the tree covers them again, never adopt that domain.
        job.topology_error = (
            f"the job's placed tasks span HyperNode {allocated.name} (tier {allocated.tier}), "
            f"above its highest allowed tier {tier_cap}"
        )
        job.allocated_hypernode = ""


def _quarantined_needs(job: JobInfo, tree: HyperNodeTree) -> list[str]:
    """The quarantined HyperNodes this job is bound to.

    Its AllocatedHyperNode, or one whose own nodes (not held by a healthy HyperNode) its placed
    tasks run on: the tree no longer holds them, so the job's domain is unknown until fixed.
    """
    needed = set()
    if job.allocated_hypernode in tree.quarantined:
        needed.add(job.allocated_hypernode)
    placed = {t.node_name for t in job.tasks.values() if t.status in OCCUPYING and t.node_name}
    if placed:
        for name in tree.quarantined:
            members = tree.quarantined_nodes.get(name, frozenset())
            if not members.isdisjoint(placed):
                needed.add(name)
    return sorted(needed)


def _check_allocated_hypernode(
    job: JobInfo, tree: HyperNodeTree, nodes: dict[str, NodeInfo], notes: ChangeLog
) -> None:
    placed = [
        t.node_name
        for t in job.tasks.values()
        if t.status in OCCUPYING and t.node_name and t.node_name in nodes
    ]
    gone = bool(job.allocated_hypernode) and job.allocated_hypernode not in tree.hypernodes
    if job.allocated_hypernode and (gone or not placed):
        notes.info(
            log,
            job.key,
            "job %s: dropping AllocatedHyperNode %s (gone or nothing placed)",
            job.key,
            job.allocated_hypernode,
        )
        job.allocated_hypernode = ""
    if job.allocated_hypernode or not placed:
        return
    lca = ""
    for node in placed:
        leaf = tree.leaf_of(node)
        lca = tree.lca(lca, leaf) if lca else leaf
    if (
        gone
        and lca == CLUSTER_TOP_HYPERNODE
        and any(tree.leaf_of(n) == CLUSTER_TOP_HYPERNODE for n in placed)
    ):
        # its HyperNode was replaced and the new leaves are not all there yet: recover it
        # in a later session rather than pin the job to the whole cluster
        return
    job.allocated_hypernode = lca
    notes.info(
        log,
        job.key,
        "job %s: recovered AllocatedHyperNode %s from %d placed tasks",
        job.key,
        lca,
        len(placed),
    )


def _resolve_sub_jobs(job: JobInfo, tree: HyperNodeTree, nodes: dict[str, NodeInfo]) -> None:
    for sub_job in job.sub_jobs.values():
        lca = ""
        for task in sub_job.tasks.values():
            if task.status in OCCUPYING and task.node_name in nodes:
                leaf = tree.leaf_of(task.node_name)
                lca = tree.lca(lca, leaf) if lca else leaf
        sub_job.allocated_hypernode = lca
        if sub_job.highest_tier_name and sub_job.highest_tier is None:
            tier = tree.tier_names.get(sub_job.highest_tier_name)
            if tier is not None:
                sub_job.highest_tier = tier
            elif sub_job.mode == NetworkTopologyMode.HARD and tree.ready:
                known = ", ".join(sorted(tree.tier_names)) or "none"
                job.topology_error = (
                    f"subGroupPolicy {sub_job.policy!r}: networkTopology.highestTierName "
                    f"{sub_job.highest_tier_name!r} matches no HyperNode tierName (known: {known})"
                )
