"""A cluster as an operator's looks after label discovery, for the view's browser test and bench.

``discovered_cache(nodes)``: ``nodes`` GPU nodes with long real-world names, labelled with
their leaf switch, spine and pod (long label keys, as clusters carry them); the HyperNodes
made by the real ``label`` discovery function (``hypernode-<type>-tier<N>-<label values>`` names,
the label key as ``tierName``); queues; and gangs owned the ways workloads own them — a
Volcano Job, a Deployment (through its ReplicaSet), a StatefulSet, a batch Job, a RayCluster,
a PyTorchJob — placed by the real scheduler cycle (``MemoryWriter``), plus gangs too big for
a leaf, left pending with their condition. At 2,000 nodes: 250 leaves, 42 spines and 9 pods,
301 HyperNodes.
"""

from __future__ import annotations

from typing import Any

from volcano_py.controllers.hypernode.label import discover_label_hypernodes, parse_types
from volcano_py.scheduler.cache import SchedulerCache
from volcano_py.scheduler.framework.conf import DEFAULT_SCHEDULER_CONF
from volcano_py.scheduler.framework.registry import load_conf
from volcano_py.scheduler.scheduler import builtin_registries, run_cycle
from volcano_py.scheduler.simulator import fill_cache
from volcano_py.scheduler.writer import MemoryWriter

JSON = dict[str, Any]
GPU = "nvidia.com/gpu"
NODES_PER_LEAF = 8
LEAVES_PER_SPINE = 6
SPINES_PER_POD = 5
# the discovery config's levels, top tier first; the last (the node itself) is dropped
LEVELS = (
    "network.topology.example.com/pod",
    "network.topology.example.com/spine-switch",
    "network.topology.example.com/leaf-switch",
    "kubernetes.io/hostname",
)
NAMESPACE = "ml-research-production"
# (kind, apiVersion, name): who owns the gangs, in turn
OWNERS = (
    ("Job", "batch.volcano.sh/v1alpha1", "llama-70b-pretrain"),
    ("Deployment", "apps/v1", "vllm-inference-server"),
    ("StatefulSet", "apps/v1", "etcd-feature-store"),
    ("Job", "batch/v1", "nightly-eval-sweep"),
    ("RayCluster", "ray.io/v1", "ray-tune-hyperparams"),
    ("PyTorchJob", "kubeflow.org/v1", "bert-large-finetune"),
)
QUEUES = (
    ("research", {"weight": 3, "capability": {GPU: "1024"}}),
    ("production-inference", {"weight": 1, "deserved": {GPU: "512", "cpu": "4000"}}),
)


def _node(i: int) -> JSON:
    leaf, spine = i // NODES_PER_LEAF, i // (NODES_PER_LEAF * LEAVES_PER_SPINE)
    name = f"gpu-node-{i:05d}.dc1.cluster.example.internal"
    values = (
        f"pod-{spine // SPINES_PER_POD:02d}",
        f"spine-sw-{spine:03d}",
        f"leaf-sw-{leaf:04d}",
        name,
    )
    return {
        "kind": "Node",
        "metadata": {"name": name, "labels": dict(zip(LEVELS, values, strict=True))},
        "status": {
            "allocatable": {"cpu": "96", "memory": "1024Gi", "pods": "110", GPU: "8"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def _owned_gang(index: int, pods: int, tier: int, queue: str) -> list[JSON]:
    kind, api, base = OWNERS[index % len(OWNERS)]
    owner_name = f"{base}-{index:03d}"
    pod_labels: dict[str, str] = {}
    pod_owner = {"kind": kind, "apiVersion": api, "name": owner_name, "controller": True}
    if kind == "Deployment":  # pods belong to the ReplicaSet, named <deployment>-<hash>
        pod_labels["pod-template-hash"] = "7c9d5f8b4"
        pod_owner = {
            "kind": "ReplicaSet",
            "apiVersion": "apps/v1",
            "name": f"{owner_name}-7c9d5f8b4",
            "controller": True,
        }
    if kind == "Job" and api.startswith("batch.volcano.sh"):
        group, pg_owner = f"{owner_name}-a1b2c3d4", dict(pod_owner)
    else:  # the podgroup controller names the PodGroup after the pod and copies its owner
        group, pg_owner = f"podgroup-{index:08d}-1f2e-4a5b-9c8d-0123456789ab", dict(pod_owner)
    objects: list[JSON] = [
        {
            "kind": "PodGroup",
            "metadata": {
                "name": group,
                "namespace": NAMESPACE,
                "creationTimestamp": f"2026-01-01T00:{index // 60:02d}:{index % 60:02d}Z",
                "ownerReferences": [pg_owner],
            },
            "spec": {
                "minMember": pods,
                "queue": queue,
                "networkTopology": {"mode": "hard", "highestTierAllowed": tier},
            },
        }
    ]
    for p in range(pods):
        objects.append(
            {
                "kind": "Pod",
                "metadata": {
                    "name": f"{owner_name}-{p}",
                    "namespace": NAMESPACE,
                    "annotations": {"scheduling.k8s.io/group-name": group},
                    "labels": pod_labels,
                    "ownerReferences": [pod_owner],
                },
                "spec": {
                    "schedulerName": "volcano",
                    "containers": [
                        {"name": "c", "resources": {"requests": {GPU: "4", "cpu": "8"}}}
                    ],
                },
                "status": {"phase": "Pending"},
            }
        )
    return objects


def discovered_cache(nodes: int = 2000, gangs: int = 60, pending: int = 3) -> SchedulerCache:
    """The cluster of the module docstring, scheduled."""
    node_objects = [_node(i) for i in range(nodes)]
    config = {"networkTopologyTypes": {"dc1-fabric": [{"nodeLabel": key} for key in LEVELS]}}
    types, problems = parse_types(config)
    assert not problems, problems
    hypernodes = discover_label_hypernodes(node_objects, [], types)
    for hn in hypernodes:
        hn["kind"] = "HyperNode"
    objects: list[JSON] = [*node_objects, *hypernodes]
    for name, spec in QUEUES:
        objects.append(
            {
                "kind": "Queue",
                "apiVersion": "scheduling.volcano.sh/v1beta1",
                "metadata": {"name": name},
                "spec": spec,
            }
        )
    for g in range(gangs):
        objects += _owned_gang(g, 8, 2, QUEUES[g % 2][0])
    for g in range(pending):  # 40 pods x 4 GPUs: more than a leaf's 64 GPUs
        objects += _owned_gang(gangs + g, 40, 1, QUEUES[0][0])
    return scheduled_cache(objects)


def scheduled_cache(objects: list[JSON]) -> SchedulerCache:
    """A cache of ``objects`` after the real cycle ran until it changed nothing (<= 10)."""
    cache = SchedulerCache()
    fill_cache(cache, objects)
    plugins, actions = builtin_registries()
    conf = load_conf(DEFAULT_SCHEDULER_CONF, plugins, actions)
    writer = MemoryWriter(cache)
    for _ in range(10):
        if not run_cycle(cache, conf, plugins, actions, writer).changed:
            break
    return cache
