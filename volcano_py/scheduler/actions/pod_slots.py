"""A gang with more pods to place than the free pod slots that could take them is not tried.

A node holds at most its ``pods`` allocatable (``NodeInfo.max_tasks``, 110 by default); the
pods on it use a slot each. A gang not yet ready still has ``minMember`` less its ready pods
to place together; when that is more than the cluster's free slots, no placement can succeed,
whatever the order (issue 44: a 5,000-task gang on 16 nodes tried every cycle, 1,760 pods
placed and discarded each time). For a hard-topology job the slots must be in one HyperNode
of its allowed tiers: the roomiest one counts. Such a job is not tried: it waits with
``NotEnoughPodSlots``, naming the count and the room, and is parked until a pod leaves a
node, a bind is rolled back, a Node or a HyperNode changes (its wake-up hints).

The count is an upper bound on what placement could use (every node, taints and selectors
left aside), so a job it refuses could not have been placed. Preempt and reclaim still look
at such a job: evicting pods frees slots.
"""

from __future__ import annotations

from collections.abc import Iterable

from volcano_py.scheduler.actions.placement import gang_prefix
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.node_info import NodeInfo
from volcano_py.scheduler.api.wake_hints import ClusterEvent
from volcano_py.scheduler.framework.interface import JobFit
from volcano_py.scheduler.framework.session import Session

POD_SLOTS_REASON = "NotEnoughPodSlots"
WAKE_ON = (
    ClusterEvent.POD_FREED,
    ClusterEvent.BIND_ROLLED_BACK,
    ClusterEvent.NODE_ADDED,
    ClusterEvent.NODE_CHANGED,
    ClusterEvent.HYPERNODE_CHANGED,
)


def has_slots(nodes: Iterable[NodeInfo], need: int) -> bool:
    """Whether the nodes can still take ``need`` pods, by their ``pods`` allocatable.

    Stops at the first nodes that are enough: a job that fits, the usual case, is checked
    at the cost of a node or two, not of the cluster.
    """
    free = 0
    for node in nodes:
        if node.max_tasks > node.pods:
            free += node.max_tasks - node.pods
            if free >= need:
                return True
    return False


def _hypernode_has_slots(ssn: Session, hypernode: str, need: int) -> bool:
    """``has_slots`` over the HyperNode's real nodes, in any order (no sorted list built)."""
    nodes = ssn.nodes
    members = ssn.real_nodes.get(hypernode, ())
    return has_slots((nodes[n] for n in members if n in nodes), need)


def _allocatable(nodes: Iterable[NodeInfo]) -> int:
    return sum(node.max_tasks for node in nodes)


def pod_slots_fit(ssn: Session, job: JobInfo) -> JobFit | None:
    """The job's condition when its gang has more pods to place than free slots, else None.

    The message names what only Nodes change (the pods allocatable), not the free count:
    every pending pod's condition repeats it, and a message that changed with each bind
    elsewhere would rewrite them all each time the job comes back.
    """
    need = job.min_member - job.ready_task_num()
    if need <= 0:
        return None
    text = ""
    if not has_slots(ssn.nodes.values(), need):
        nodes = ssn.nodes.values()
        text = (
            f"the cluster's {len(ssn.nodes)} nodes have fewer free pod slots "
            f"({_allocatable(nodes)} pods allocatable in all)"
        )
    else:
        hard, highest = job.is_hard_topology_mode()
        # highest tier first: its HyperNodes are the roomiest, so the search usually ends at
        # the first (P1: the 8,700 HyperNodes of tiers 1-3 are each too small for its gang);
        # per tier its tuple of names, not one list of them all built for every job
        by_tier = [
            ssn.hypernodes_by_tier.get(tier, ())
            for tier in reversed(ssn.hypernode_tiers)
            if hard and tier <= highest
        ]
        if any(by_tier) and not any(
            _hypernode_has_slots(ssn, name, need) for names in by_tier for name in names
        ):
            most = max(_allocatable(ssn.nodes_in(name)) for names in by_tier for name in names)
            text = (
                f"no HyperNode of tier <= {highest} has as many free pod slots "
                f"(at most {most} pods allocatable in one)"
            )
    if not text:
        return None
    ssn.wake_hints.declare(POD_SLOTS_REASON, WAKE_ON)
    return JobFit(
        POD_SLOTS_REASON, f"{gang_prefix(job)}{need} pods must be placed together and {text}"
    )
