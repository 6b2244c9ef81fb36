"""Kubernetes' ``CompositePodGroup`` scheduled by volcano-py with the HyperNode tree (gates on).

Two child PodGroups (each a whole rack, keyed by the rack label) under a CompositePodGroup
keyed by the spine label, ``gang.minGroupCount: 2``: each child lands in its own rack, both
under one spine. When no spine can hold both (one rack of each is partly used), nothing
binds and the CompositePodGroup carries ``PodGroupInitiallyScheduled=False`` /
``Unschedulable`` with the per-tier shortfall.
"""

from __future__ import annotations

from typing import Any

from tests.builders import pod_body
from tests.integration.scheduler.conftest import Topology, two_spines_of_two_racks, wait_for
from tests.integration.scheduler.native.test_native_podgroups import _condition as _pg_condition
from tests.integration.scheduler.native.test_native_podgroups import (
    _member,
    _nodes_of,
    _scheduled,
)
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient

RACK = "example.com/rack"
SPINE = "example.com/spine"
JSON = dict[str, Any]


def _racks_and_spines(topo: Topology) -> dict[str, list[str]]:
    """Two spines of two 4-GPU racks, their HyperNodes named by the rack and spine labels."""
    racks = two_spines_of_two_racks(topo)
    for name in topo.hypernodes:
        hn = topo.client.get(R.HYPERNODES, name)
        hn["spec"]["tierName"] = RACK if name in racks else SPINE
        topo.client.update(R.HYPERNODES, hn)
    return racks


def _composite(client: KubeClient, ns: str, topo: Topology, children: int, size: int) -> None:
    """CompositePodGroup ``train`` (2 children must place) with ``children`` gangs of ``size``."""
    ref = {"workloadName": "train", "templateName": "train"}
    client.create(
        R.NATIVE_COMPOSITES,
        {
            "apiVersion": "scheduling.k8s.io/v1alpha3",
            "kind": "CompositePodGroup",
            "metadata": {"name": "train", "namespace": ns},
            "spec": {
                "workloadRef": ref,
                "schedulingPolicy": {"gang": {"minGroupCount": 2}},
                "schedulingConstraints": {"topology": [{"key": SPINE}]},
            },
        },
        ns,
    )
    for c in range(children):
        client.create(
            R.NATIVE_PODGROUPS,
            {
                "apiVersion": "scheduling.k8s.io/v1beta1",
                "kind": "PodGroup",
                "metadata": {"name": f"child-{c}", "namespace": ns},
                "spec": {
                    "parentCompositePodGroupName": "train",
                    "workloadRef": dict(ref, templateName=f"child-{c}"),
                    "schedulingPolicy": {"gang": {"minCount": size}},
                    "schedulingConstraints": {"topology": [{"key": RACK}]},
                },
            },
            ns,
        )
        for i in range(size):
            _member(client, ns, topo, f"child-{c}-{i}", f"child-{c}")


def _condition(client: KubeClient, ns: str) -> JSON | None:
    return _pg_condition(client, ns, "train", R.NATIVE_COMPOSITES)


def test_composite_children_each_land_in_their_own_rack_under_one_spine(
    client: KubeClient, namespace: str, topology: Topology, run_scheduler: Any
) -> None:
    racks = _racks_and_spines(topology)
    run_scheduler()
    _composite(client, namespace, topology, children=2, size=4)
    names = {c: [f"child-{c}-{i}" for i in range(4)] for c in range(2)}
    every = names[0] + names[1]
    placed = wait_for(lambda: (p := _nodes_of(client, namespace, every)) and all(p.values()) and p)
    rack_of = {node: rack for rack, nodes in racks.items() for node in nodes}
    used = [{rack_of[placed[n]] for n in names[c]} for c in range(2)]
    assert all(len(r) == 1 for r in used), used  # each child within one rack
    assert used[0] != used[1], used  # each in its own
    spine_of = {rack: sorted(racks).index(rack) // 2 for rack in racks}
    assert spine_of[min(used[0])] == spine_of[min(used[1])], used  # under one spine
    # False while the second child is still being created, then True
    assert _scheduled(client, namespace, "train", R.NATIVE_COMPOSITES)["reason"] == "Scheduled"
    for c in range(2):  # and on each child, where kube-scheduler writes it
        assert _scheduled(client, namespace, f"child-{c}")["reason"] == "Scheduled"


def test_composite_whose_children_fit_under_no_one_spine_waits_with_its_reason(
    client: KubeClient, namespace: str, topology: Topology, run_scheduler: Any
) -> None:
    racks = _racks_and_spines(topology)
    for rack in sorted(racks)[::2]:  # one rack of each spine partly used
        filler = pod_body(
            f"filler-{rack}",
            namespace,
            requests={topology.gpu: "1", "cpu": "100m"},
            scheduler_name=None,
            node_name=racks[rack][0],
        )
        client.create(R.PODS, filler, namespace)
    run_scheduler()
    _composite(client, namespace, topology, children=2, size=4)
    # until both children exist it says the gang lacks one, then why no spine holds both
    condition = wait_for(
        lambda: (c := _condition(client, namespace)) and "tier 2: 0/2 fit" in c["message"] and c
    )
    assert (condition["status"], condition["reason"]) == ("False", "Unschedulable")
    children = [f"child-{c}-{i}" for c in range(2) for i in range(4)]
    assert not any(_nodes_of(client, namespace, children).values())  # never partly bound
