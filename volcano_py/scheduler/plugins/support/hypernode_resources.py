"""Per-HyperNode resource totals for the network-topology-aware plugin (its resource cache).

``build_resource_cache(ssn)`` sums, for every HyperNode of the session (the virtual top
included), the allocatable, used, idle and future-idle resources of the real nodes under it —
in one pass over the nodes, each adding itself to the HyperNodes of its chain. The plugin's
allocate/deallocate handlers then keep ``used``/``idle``/``future_idle`` in step with the
session's statements along the same chains.
"""

from __future__ import annotations

from dataclasses import dataclass

from volcano_py.scheduler.api.resource import Resource
from volcano_py.scheduler.framework.session import Session


@dataclass(slots=True)
class ResourceStatus:
    """One HyperNode's aggregated resources."""

    allocatable: Resource
    used: Resource
    idle: Resource
    future_idle: Resource


def build_resource_cache(ssn: Session) -> dict[str, ResourceStatus]:
    """Totals per HyperNode from the session's nodes."""
    cache = {
        name: ResourceStatus(Resource(), Resource(), Resource(), Resource())
        for name in ssn.hypernodes
    }
    chains = ssn.tree.node_chain
    for node in ssn.nodes.values():
        future = node.future_idle()
        for hn in chains.get(node.name, ()):
            status = cache[hn]
            status.allocatable.add(node.allocatable)
            status.used.add(node.used)
            status.idle.add(node.idle)
            status.future_idle.add(future)
    return cache
