"""KubeRay (``--batch-scheduler=volcano``), read from ray-project/kuberay
``ray-operator/controllers/ray/batchscheduler/volcano/volcano_scheduler.go``.

- PodGroup ``ray-<cluster>-pg``, controller-owned by the RayCluster (``ray.io/v1``); its
  annotations are the RayCluster's, copied.
- ``minMember`` = desired workers + 1 (the head); ``minResources`` = the whole cluster's
  requests; ``status.phase`` written as ``Pending`` at creation.
- Topology from the RayCluster's *labels*: ``volcano.sh/network-topology-mode`` and
  ``volcano.sh/network-topology-highest-tier-allowed`` go into ``spec.networkTopology``
  (KubeRay translates them itself); queue from the label ``volcano.sh/queue-name``.
- Pods are created at once (KubeRay does not wait for Inqueue): annotations
  ``scheduling.k8s.io/group-name`` and ``volcano.sh/task-spec`` (``headgroup`` or the worker
  group's name), the queue label copied, ``schedulerName: volcano``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.integration.operators.common import (
    GROUP_NAME,
    TASK_SPEC,
    Played,
    create,
    owner,
    pod,
    podgroup,
)
from tests.integration.scheduler.conftest import Topology
from volcano_py.kube.client import KubeClient

NAME = "kuberay"


def play(
    client: KubeClient, ns: str, topo: Topology, size: int, wait: Callable[..., Any]
) -> Played:
    cluster = "raycluster-gpu"
    group = f"ray-{cluster}-pg"
    ray_owner = owner("ray.io/v1", "RayCluster", cluster)
    spec = {
        "minMember": size,
        "minResources": {topo.gpu: str(size), "cpu": f"{100 * size}m"},
        "queue": "default",
        "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
    }
    create(client, podgroup(group, ns, spec, owners=[ray_owner], phase="Pending"))
    names = []
    labels = {"volcano.sh/queue-name": "default", "ray.io/cluster": cluster}
    for i in range(size):
        name, task = (f"{cluster}-head", "headgroup") if i == 0 else (f"{cluster}-gpu-{i}", "gpu")
        annotations = {GROUP_NAME: group, TASK_SPEC: task}
        create(
            client, pod(name, ns, topo, annotations=annotations, labels=labels, owners=[ray_owner])
        )
        names.append(name)
    return Played(group, names, tier1=True)
