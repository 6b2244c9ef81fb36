"""Capacity metrics from a cache snapshot: free resources per HyperNode, largest gang per tier.

``export_capacity(snapshot)`` sets ``volcano_hypernode_free_resource{hypernode,tier,resource}``
(Prometheus base units: the idle cpu in cores, memory in bytes, and every other resource,
``nvidia.com/gpu`` included, as a count, summed over the real nodes under the HyperNode; the
scheduler's ``Resource`` keeps cpu and scalars in milli-units, converted by ``base_units``) and
``volcano_largest_gang_fits_per_tier{tier}``: over the HyperNodes of a tier, the most pods of
the *reference request* that the nodes under one of them could still hold (per node
``min(idle / request)`` over the request's resources, summed over the nodes). The reference
is one ``nvidia.com/gpu`` when any node has GPUs, else one cpu: the question an admin asks
("how big a gang fits in one rack right now?"). Series of HyperNodes that disappeared are
removed. The scheduler calls this at most every ``EXPORT_INTERVAL_S`` seconds, off the
scheduling path's critical section (after a cycle).
A resource the nodes have but that is all taken is exported as 0, never dropped, so an alert
on "free == 0" fires.
"""

from __future__ import annotations

from volcano_py.metrics import HYPERNODE_FREE, LARGEST_GANG_PER_TIER
from volcano_py.scheduler.api.node_info import NodeInfo
from volcano_py.scheduler.api.resource import MEMORY, Resource
from volcano_py.scheduler.api.snapshot import Snapshot

EXPORT_INTERVAL_S = 15.0
GPU = "nvidia.com/gpu"


def reference_request(nodes: dict[str, NodeInfo]) -> Resource:
    """One GPU when the cluster has GPUs, else one cpu."""
    if any(node.allocatable.get(GPU) > 0 for node in nodes.values()):
        return Resource(scalars={GPU: 1000})
    return Resource(milli_cpu=1000)


def base_units(resource: str, amount: int) -> float:
    """An amount from ``Resource`` (milli-units for all but memory) in Prometheus base units."""
    return float(amount) if resource == MEMORY else amount / 1000


def pods_fitting(idle: Resource, request: Resource) -> int:
    """How many ``request``-sized pods fit into ``idle`` (0 for an empty request)."""
    counts = [idle.get(name) // amount for name, amount in request.items()]
    return max(0, min(counts)) if counts else 0


def export_capacity(
    snapshot: Snapshot, previous: set[tuple[str, str, str]]
) -> set[tuple[str, str, str]]:
    """Set the gauges from ``snapshot``; return the label sets now exported."""
    nodes = snapshot.nodes
    tree = snapshot.tree
    request = reference_request(nodes)
    per_node = {name: pods_fitting(node.idle, request) for name, node in nodes.items()}
    exported: set[tuple[str, str, str]] = set()
    largest: dict[int, int] = {}
    for name, info in tree.hypernodes.items():
        members = [nodes[n] for n in tree.real_nodes.get(name, ()) if n in nodes]
        free = Resource()
        names: set[str] = set()
        for node in members:
            free.add(node.idle)
            names.update(resource for resource, _ in node.allocatable.items())
        tier = str(info.tier)
        for resource in names:  # every resource the nodes have, 0 included
            HYPERNODE_FREE.labels(name, tier, resource).set(
                base_units(resource, free.get(resource))
            )
            exported.add((name, tier, resource))
        fits = sum(per_node[node.name] for node in members)
        largest[info.tier] = max(largest.get(info.tier, 0), fits)
    for stale in previous - exported:
        HYPERNODE_FREE.remove(*stale)
    for tier_number, fits in largest.items():
        LARGEST_GANG_PER_TIER.labels(str(tier_number)).set(fits)
    return exported
