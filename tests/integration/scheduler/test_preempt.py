"""Topology-aware preemption against a real API server.

A full two-rack cluster: rack a runs two low-priority 4-pod gangs, rack b one 8-pod gang of a
middle priority. A high-priority rack-bound gang of 8 arrives. Preempt must empty rack a (the
cheaper rack: same pod count, lower victim priority) through the Eviction API, leave rack b
alone, annotate the preemptor's PodGroup with the nominated HyperNode, and the gang must land
in rack a. With a PodDisruptionBudget over one of rack a's gangs the API server refuses that
eviction and the gang goes to rack b instead.

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
PDBS = Resource("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", namespaced=True)
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


def _full_cluster(
    client: KubeClient, ns: str, topo: Topology, pcs: dict[str, str]
) -> tuple[list[str], list[str], list[str], list[str], str, str]:
    """Racks a (two low 4-pod gangs) and b (one mid 8-pod gang), all GPUs taken.

    Returns nodes of a, nodes of b, the low pods, the mid pods, rack a, rack b.
    """
    a = [topo.node(f"a{i}", 4) for i in range(2)]
    b = [topo.node(f"b{i}", 4) for i in range(2)]
    rack_a = topo.hypernode("rack-a", 1, [exact(n) for n in a])
    rack_b = topo.hypernode("rack-b", 1, [exact(n) for n in b])
    topo.hypernode("spine", 2, [exact(rack_a, "HyperNode"), exact(rack_b, "HyperNode")])
    low, mid = [], []
    for g, node in (("low-1", a[0]), ("low-2", a[1])):
        _group(client, ns, g, 4)
        low += [_pod(client, ns, topo, f"{g}-{i}", g, pcs["low"], node) for i in range(4)]
    _group(client, ns, "mid", 8)
    for i in range(8):
        mid.append(_pod(client, ns, topo, f"mid-{i}", "mid", pcs["mid"], b[i // 4]))
    return a, b, low, mid, rack_a, rack_b


def _high_gang(client: KubeClient, ns: str, topo: Topology, pcs: dict[str, str]) -> list[str]:
    _group(client, ns, "high", 8, tier=1)
    return [_pod(client, ns, topo, f"high-{i}", "high", pcs["high"]) for i in range(8)]


def _placed(client: KubeClient, ns: str, gang: list[str]) -> dict[str, str] | None:
    placement = {n: client.get(R.PODS, n, ns)["spec"].get("nodeName", "") for n in gang}
    return placement if all(placement.values()) else None


def test_high_priority_gang_empties_the_cheapest_rack_through_evictions(
    client: KubeClient,
    namespace: str,
    topology: Topology,
    priority_classes: dict[str, str],
    run_scheduler: Callable[..., Callable[[], Scheduler]],
) -> None:
    ns = namespace
    a, b, victims, bystanders, rack_a, _ = _full_cluster(client, ns, topology, priority_classes)
    run_scheduler(CONF)
    gang = _high_gang(client, ns, topology, priority_classes)

    wait_for(lambda: len(_terminating_then_gone(client, ns, victims)) == len(victims), 60)
    placement = wait_for(lambda: _placed(client, ns, gang), 60)
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


def test_a_disruption_budget_refusal_sends_the_gang_to_the_other_rack(
    client: KubeClient,
    namespace: str,
    topology: Topology,
    priority_classes: dict[str, str],
    run_scheduler: Callable[..., Callable[[], Scheduler]],
) -> None:
    """A PDB over low-1 (no disruption controller runs here: it allows none) makes the API
    server refuse that eviction with a 429; the scheduler re-plans and empties rack b."""
    ns = namespace
    a, b, low, mid, _, rack_b = _full_cluster(client, ns, topology, priority_classes)
    for name in low[:4]:
        client.patch(R.PODS, name, {"metadata": {"labels": {"app": "low-1"}}}, ns)
        # the Eviction API ignores budgets for Pending pods: play the kubelet once more
        client.patch(R.PODS, name, {"status": {"phase": "Running"}}, ns, subresource="status")
    client.create(
        PDBS,
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "low-1", "namespace": ns},
            "spec": {"minAvailable": 4, "selector": {"matchLabels": {"app": "low-1"}}},
        },
    )
    run_scheduler(CONF)
    gang = _high_gang(client, ns, topology, priority_classes)

    def settled() -> dict[str, str] | None:
        _terminating_then_gone(client, ns, low + mid)
        return _placed(client, ns, gang)

    placement = wait_for(settled, 90)
    assert set(placement.values()) <= set(b), placement
    assert client.get(R.PODGROUPS, "high", ns)["metadata"]["annotations"][NOMINATED] == rack_b
    for name in low[:4]:  # the budget held: low-1 still runs where it was
        pod = client.get(R.PODS, name, ns)
        assert not pod["metadata"].get("deletionTimestamp"), name
        assert pod["spec"]["nodeName"] == a[0]
