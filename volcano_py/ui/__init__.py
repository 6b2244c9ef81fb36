"""The live topology view: a read-only page and its JSON, served by every manager replica.

- ``topology`` — ``topology_json(snapshot, hypernodes)``: the HyperNode tree with free/total
  resources, gangs in their domains, pending gangs' reasons, discovery and tree health (pure).
- ``view`` — ``TopologyView``: builds that JSON from the shared scheduler cache at most once
  every 2 s after a change, and serves ``/ui`` and ``/api/topology`` through the ops server.
- ``index.html`` — the page: plain JavaScript and inline CSS, no build step, no CDN.

Layering: above the scheduler and controllers (it reads their caches and wire names), below
the manager (which wires it into ``OpsServer``). Nothing in the scheduler depends on it.
"""
