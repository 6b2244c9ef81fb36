"""HyperNode gradients of the ``network-topology-aware`` plugin (a mixin of the plugin class).

- **Job gradient** (hard mode): BFS from the search root (the given HyperNode, narrowed to
  the highest allowed ancestor of the job's allocated HyperNode), keeping HyperNodes whose
  tier is within the bound and — when nothing of the job is placed yet — whose idle or
  future-idle resources cover what the gang needs (the resource pre-filter:
  ``JobInfo.gang_min_resources``). One list per tier, lowest first. Soft mode (Volcano
  HEAD, PR #5206): the same search bounded by the virtual top tier. No topology:
  ``[[hyperNode]]``.
- **SubJob gradient**: the same BFS inside the job's candidate domain, bounded by the
  SubJob's tier (a soft SubJob by its job's tier, or the top when the job has none), with
  the SubJob's allocated HyperNode and the least its missing members need.
"""

from __future__ import annotations

import logging

from volcano_py.api.constants import NetworkTopologyMode
from volcano_py.kube.changelog import ChangeLog
from volcano_py.scheduler.api.hypernode_info import HyperNodeInfo
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.resource import Resource
from volcano_py.scheduler.api.sub_job_info import SubJobInfo
from volcano_py.scheduler.framework.session import Session
from volcano_py.scheduler.plugins.support.hypernode_resources import ResourceStatus

log = logging.getLogger(__name__)


class HyperNodeGradients:
    """Gradient builders; the plugin provides the session and the resource cache."""

    _ssn: Session | None
    resource_cache: dict[str, ResourceStatus]

    def hypernode_gradient_for_job(
        self, job: JobInfo, hypernode: HyperNodeInfo
    ) -> list[list[HyperNodeInfo]]:
        """Eligible HyperNodes per tier (hard; soft up to the top tier); else ``[[hypernode]]``."""
        highest = self.job_tier(job)
        if highest is None:
            return [[hypernode]]
        return self._gradient_or_none(
            job.key, hypernode, highest, job.allocated_hypernode, job.gang_min_resources()
        )

    def job_tier(self, job: JobInfo) -> int | None:
        """The tier bounding the job's search: hard's own, soft's the virtual top (#5206)."""
        hard, highest = job.is_hard_topology_mode()
        if hard:
            return highest
        if job.is_soft_topology_mode():
            assert self._ssn is not None
            return self._ssn.tree.top.tier
        return None

    def hypernode_gradient_for_sub_job(
        self, job: JobInfo, sub_job: SubJobInfo, domain: HyperNodeInfo
    ) -> list[list[HyperNodeInfo]]:
        """Eligible HyperNodes per tier for ``sub_job`` inside the job's candidate ``domain``."""
        if sub_job.mode is None:
            return [[domain]]
        bound = self.job_tier(job)
        if bound is None:
            assert self._ssn is not None
            bound = self._ssn.tree.top.tier
        highest = bound
        if sub_job.mode == NetworkTopologyMode.HARD and sub_job.highest_tier is not None:
            highest = sub_job.highest_tier
        # a candidate domain that does not hold the SubJob's allocated HyperNode is routine
        return self._gradient_or_none(
            sub_job.uid or job.key,
            domain,
            highest,
            sub_job.allocated_hypernode,
            sub_job.min_resources(),
            logging.DEBUG,
        )

    def _gradient_or_none(
        self,
        who: str,
        hypernode: HyperNodeInfo,
        highest: int,
        allocated: str,
        need: Resource,
        level: int = logging.ERROR,
    ) -> list[list[HyperNodeInfo]]:
        try:
            return self.hypernode_gradient(hypernode, highest, allocated, need)
        except LookupError as e:
            notes = self._ssn.notes if self._ssn is not None else ChangeLog()
            notes.log(
                log,
                level,
                who,
                "build hyperNode gradient fail: job=%s hyperNode=%s highestAllowedTier=%d "
                "allocatedHyperNode=%s: %s",
                who,
                hypernode.name,
                highest,
                allocated,
                e,
            )
            return []

    def hypernode_gradient(
        self,
        hypernode: HyperNodeInfo,
        highest_tier: int,
        allocated_hypernode: str,
        min_resource: Resource,
    ) -> list[list[HyperNodeInfo]]:
        """BFS from the search root keeping the eligible HyperNodes, grouped by tier."""
        assert self._ssn is not None
        hypernodes = self._ssn.hypernodes
        root = self.search_root(hypernode, highest_tier, allocated_hypernode)
        queue = [root]
        enqueued = {root.name}
        eligible: dict[int, list[HyperNodeInfo]] = {}
        i = 0
        while i < len(queue):
            current = queue[i]
            i += 1
            if self.is_eligible_hypernode(current, highest_tier, allocated_hypernode, min_resource):
                eligible.setdefault(current.tier, []).append(current)
            for child in current.children:
                if child not in enqueued and child in hypernodes:
                    enqueued.add(child)
                    queue.append(hypernodes[child])
        return [eligible[tier] for tier in sorted(eligible)]

    def is_eligible_hypernode(
        self, hn: HyperNodeInfo, highest_tier: int, allocated: str, min_resource: Resource
    ) -> bool:
        """Tier within bounds and (first placement only) idle or future idle ≥ minResources."""
        if hn.tier > highest_tier:
            return False
        if allocated:
            return True
        status = self.resource_cache.get(hn.name)
        if status is None:
            return True
        return min_resource.less_equal(status.idle) or min_resource.less_equal(status.future_idle)

    def search_root(
        self, available: HyperNodeInfo, highest_tier: int, allocated: str
    ) -> HyperNodeInfo:
        """``available`` intersected with the highest allowed ancestor of ``allocated``.

        Raises:
            LookupError: when the two subtrees do not intersect or ``allocated`` is too high.
        """
        if not allocated:
            return available
        assert self._ssn is not None
        tree = self._ssn.tree
        highest = ""
        for ancestor in tree.ancestors(allocated):
            if tree.hypernodes[ancestor].tier > highest_tier:
                break
            highest = ancestor
        if not highest:
            raise LookupError(
                f"allocated hyperNode {allocated} tier is greater than highest allowed tier "
                f"{highest_tier}"
            )
        lca = tree.lca(available.name, highest)
        if lca == highest:
            return available
        if lca == available.name:
            return tree.hypernodes[highest]
        raise LookupError(
            f"there is no intersection between hyperNodeAvailable {available.name} and "
            f"hyperNodeHighestAllowed {highest}"
        )
