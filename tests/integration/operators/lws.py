"""LeaderWorkerSet (scheduler provider ``volcano``), read from kubernetes-sigs/lws
``pkg/schedulerprovider/volcano_provider.go`` and ``interface.go``.

- One PodGroup per group, ``<lws>-<groupIndex>-<revision>``, created once the group's
  **leader pod exists** and controller-owned by that pod; labels
  ``leaderworkerset.sigs.k8s.io/{name,group-index,template-revision-hash}``; annotations:
  the LWS's ``volcano.sh/*`` annotations inherited (so ``volcano.sh/network-topology-*``
  arrive on the PodGroup, its spec has no ``networkTopology``).
- ``minMember`` = the group size, **1 under ``startupPolicy: LeaderReady``** (the workers are
  only created once the leader is ready); ``minResources`` = the group's requests; queue from
  the LWS annotation ``scheduling.volcano.sh/queue-name``.
- Every pod is annotated ``scheduling.k8s.io/group-name`` = the PodGroup's name. The pods'
  owner (the leader or worker StatefulSet) is left out (see ``common``).

Played with ``LeaderReady``: leader, PodGroup, leader bound, then the workers; a leader that
cannot be placed (the group's ``minResources`` fit no allowed HyperNode) gets no workers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.integration.operators.common import (
    GROUP_NAME,
    Played,
    create,
    node_of,
    owner,
    pod,
    podgroup,
    waits,
)
from tests.integration.scheduler.conftest import Topology
from volcano_py.kube.client import KubeClient

NAME = "lws"


def play(
    client: KubeClient, ns: str, topo: Topology, size: int, wait: Callable[..., Any]
) -> Played:
    lws, index, revision = "vllm", "0", "5d8f7c9b4"
    group = f"{lws}-{index}-{revision}"
    base = {
        "leaderworkerset.sigs.k8s.io/name": lws,
        "leaderworkerset.sigs.k8s.io/group-index": index,
        "leaderworkerset.sigs.k8s.io/template-revision-hash": revision,
    }
    leader_name = f"{lws}-{index}"
    leader = create(
        client,
        pod(
            leader_name,
            ns,
            topo,
            annotations={GROUP_NAME: group, "leaderworkerset.sigs.k8s.io/size": str(size)},
            labels={**base, "leaderworkerset.sigs.k8s.io/worker-index": "0"},
        ),
    )
    spec = {
        "minMember": 1,  # LeaderReady
        "minResources": {topo.gpu: str(size), "cpu": f"{100 * size}m"},
        "queue": "default",
    }
    inherited = {
        "volcano.sh/network-topology-mode": "hard",
        "volcano.sh/network-topology-highest-tier": "1",
    }
    leader_owner = owner("v1", "Pod", leader_name, leader["metadata"]["uid"])
    create(
        client,
        podgroup(group, ns, spec, owners=[leader_owner], labels=base, annotations=inherited),
    )
    wait(lambda: node_of(client, ns, leader_name) or waits(client, ns, leader_name), timeout=30)
    names = [leader_name]
    if not node_of(client, ns, leader_name):
        return Played(group, names, tier1=True)  # LeaderReady: no workers before the leader
    for w in range(1, size):
        name = f"{lws}-{index}-{w}"
        labels = {**base, "leaderworkerset.sigs.k8s.io/worker-index": str(w)}
        create(client, pod(name, ns, topo, annotations={GROUP_NAME: group}, labels=labels))
        names.append(name)
    return Played(group, names, tier1=True)
