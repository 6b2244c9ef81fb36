"""Topology-aware preemption against a real API server.

A full two-rack cluster: rack a runs two low-priority 4-pod gangs, rack b one 8-pod gang of a
middle priority. A high-priority rack-bound gang of 8 arrives. Preempt must empty rack a (the
cheaper rack: same pod count, lower victim priority) through the Eviction API, leave rack b
alone, annotate the preemptor's PodGroup with the nominated HyperNode, and the gang must land
in rack a.

The harness runs no kubelet, so an evicted (bound) pod keeps its ``deletionTimestamp`` and is
never removed: the test plays the kubelet and force-deletes pods once they are terminating.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.builders import exact, force_delete_pod, pod_body, podgroup_body
from tests.integration.scheduler.conftest import Topology, wait_for
from volcano_py.api import resources as R
from volcano_py.api.resources import Resource
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import NotFound
from volcano_py.scheduler.scheduler import Scheduler

JSON = dict[str, Any]
PRIORITY_CLASSES = Resource(
    "scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", namespaced=False
)
NOMINATED = "volcano.sh/nominated-hypernode"
CONF = """
actions: "enqueue, allocate, preempt, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: predicates}, {name: nodeorder}, {name: network-topology-aware}]
"""


@pytest.fixture
def priority_classes(client: KubeClient) -> Iterator[dict[str, str]]:
    """Three PriorityClasses (low 10, mid 20, high 1000), deleted afterwards."""
    suffix = uuid.uuid4().hex[:6]
    names = {level: f"preempt-{level}-{suffix}" for level in ("low", "mid", "high")}
    for level, value in (("low", 10), ("mid", 20), ("high", 1000)):
        client.create(
            PRIORITY_CLASSES,
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": names[level]},
                "value": value,
            },
        )
    yield names
    for name in names.values():
        with contextlib.suppress(NotFound):
            client.delete(PRIORITY_CLASSES, name)


def _pod(
    client: KubeClient, ns: str, topo: Topology, name: str, group: str, pc: str, node: str = ""
) -> str:
    body = pod_body(
        name,
        ns,
        requests={topo.gpu: "1", "cpu": "100m"},
        annotations={"scheduling.k8s.io/group-name": group},
        node_name=node or None,
    )
    body["spec"]["priorityClassName"] = pc
    client.create(R.PODS, body)
    return name


def _group(client: KubeClient, ns: str, name: str, size: int, tier: int | None = None) -> None:
    topology = {"mode": "hard", "highestTierAllowed": tier} if tier else None
    client.create(R.PODGROUPS, podgroup_body(name, ns, size, network_topology=topology))


def _terminating_then_gone(client: KubeClient, ns: str, names: list[str]) -> set[str]:
    """Play the kubelet: force-delete every terminating pod; the names that are gone."""
    gone = set()
    for name in names:
        try:
            pod = client.get(R.PODS, name, ns)
        except NotFound:
            gone.add(name)
            continue
        if pod["metadata"].get("deletionTimestamp"):
            force_delete_pod(client, name, ns)
    return gone


def test_high_priority_gang_empties_the_cheapest_rack_through_evictions(
    client: KubeClient,
    namespace: str,
    topology: Topology,
    priority_classes: dict[str, str],
    run_scheduler: Callable[..., Callable[[], Scheduler]],
) -> None:
    a = [topology.node(f"a{i}", 4) for i in range(2)]
    b = [topology.node(f"b{i}", 4) for i in range(2)]
    rack_a = topology.hypernode("rack-a", 1, [exact(n) for n in a])
    rack_b = topology.hypernode("rack-b", 1, [exact(n) for n in b])
    topology.hypernode("spine", 2, [exact(rack_a, "HyperNode"), exact(rack_b, "HyperNode")])
    ns, low, mid = namespace, priority_classes["low"], priority_classes["mid"]
    victims, bystanders = [], []
    for g, node in (("low-1", a[0]), ("low-2", a[1])):
        _group(client, ns, g, 4)
        victims += [_pod(client, ns, topology, f"{g}-{i}", g, low, node) for i in range(4)]
    _group(client, ns, "mid", 8)
    for i in range(8):
        bystanders.append(_pod(client, ns, topology, f"mid-{i}", "mid", mid, b[i // 4]))

    run_scheduler(CONF)
    _group(client, ns, "high", 8, tier=1)
    gang = [
        _pod(client, ns, topology, f"high-{i}", "high", priority_classes["high"]) for i in range(8)
    ]

    wait_for(lambda: len(_terminating_then_gone(client, ns, victims)) == len(victims), 60)
    placement = wait_for(
        lambda: (
            p
            if all(
                (p := {n: client.get(R.PODS, n, ns)["spec"].get("nodeName") for n in gang}).values()
            )
            else None
        ),
        60,
    )
    assert set(placement.values()) <= set(a), placement
    pg = client.get(R.PODGROUPS, "high", ns)
    assert pg["metadata"]["annotations"][NOMINATED] == rack_a
    for name in bystanders:
        pod = client.get(R.PODS, name, ns)
        assert not pod["metadata"].get("deletionTimestamp"), name
        assert pod["spec"]["nodeName"] in b
    events = client.list(R.EVENTS, ns)["items"]
    preempted = {e["involvedObject"]["name"] for e in events if e.get("reason") == "Preempted"}
    assert preempted == set(victims)
    assert all(f"{ns}/high" in e["message"] for e in events if e.get("reason") == "Preempted")
