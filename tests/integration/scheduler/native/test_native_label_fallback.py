"""A native PodGroup keyed by a node label that no HyperNode tier names (gates on).

kube-scheduler's way: the group is placed within one value of the label. Two zones of two
2-GPU nodes (a label only, no HyperNode names it); zone-a is partly used, so the gang of four
one-GPU pods lands whole in zone-b, and the PodGroup is ``PodGroupInitiallyScheduled``.
"""

from __future__ import annotations

import contextlib
from typing import Any

from devcluster.nodes import create_node
from tests.builders import pod_body
from tests.integration.scheduler.conftest import Topology, wait_for
from tests.integration.scheduler.native.test_native_podgroups import (
    _member,
    _nodes_of,
    _scheduled,
)
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import NotFound


def test_a_key_no_tier_names_places_the_gang_within_one_value_of_the_label(
    client: KubeClient, namespace: str, topology: Topology, run_scheduler: Any
) -> None:
    zone = f"example.com/zone-{topology.prefix}"  # this test's own label: no other node has it
    nodes = {f"{topology.prefix}-z{z}-n{i}": f"zone-{'ab'[z]}" for z in range(2) for i in range(2)}
    for name, value in nodes.items():
        create_node(
            client,
            name,
            labels={zone: value},
            allocatable={"cpu": "16", "memory": "64Gi", "pods": "110", topology.gpu: "2"},
        )
    try:
        filler = pod_body(
            "filler",
            namespace,
            requests={topology.gpu: "1", "cpu": "100m"},
            scheduler_name=None,
            node_name=f"{topology.prefix}-z0-n0",
        )
        client.create(R.PODS, filler, namespace)
        client.create(
            R.NATIVE_PODGROUPS,
            {
                "apiVersion": "scheduling.k8s.io/v1beta1",
                "kind": "PodGroup",
                "metadata": {"name": "train", "namespace": namespace},
                "spec": {
                    "schedulingPolicy": {"gang": {"minCount": 4}},
                    "schedulingConstraints": {"topology": [{"key": zone}]},
                },
            },
            namespace,
        )
        names = [f"train-{i}" for i in range(4)]
        for n in names:
            _member(client, namespace, topology, n, "train")
        run_scheduler()
        placed = wait_for(
            lambda: (p := _nodes_of(client, namespace, names)) and all(p.values()) and p
        )
        assert {nodes[n] for n in placed.values()} == {"zone-b"}, placed
        assert _scheduled(client, namespace, "train")["reason"] == "Scheduled"
    finally:
        for name in nodes:
            with contextlib.suppress(NotFound):
                client.delete(R.NODES, name)
