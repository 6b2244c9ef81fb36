"""Topology-aware preemption against a real API server.

A full two-rack cluster: rack a runs two low-priority 4-pod gangs, rack b one 8-pod gang of a
middle priority. A high-priority rack-bound gang of 8 arrives. Preempt must empty rack a (the
cheaper rack: same pod count, lower victim priority) through the Eviction API, leave rack b
alone, annotate the preemptor's PodGroup with the nominated HyperNode, and the gang must land
in rack a. With a PodDisruptionBudget over one of rack a's gangs the API server refuses that
eviction and the gang goes to rack b instead.

kwok plays the kubelets and finishes graceful deletions; the tests also force-delete pods once
they are terminating, so nothing waits on a grace period. The failover test holds its victims
in Terminating with a finalizer: a second scheduler, started after the first one stops with
its evictions under way, must evict nothing more.
"""

from __future__ import annotations

import contextlib
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.builders import exact, force_delete_pod, pod_body, podgroup_body
from tests.integration.scheduler.conftest import Topology, wait_for
from volcano_py.api import resources as R
from volcano_py.api.resources import APIResource
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import NotFound
from volcano_py.metrics import REGISTRY
from volcano_py.scheduler.scheduler import Scheduler

JSON = dict[str, Any]
PRIORITY_CLASSES = APIResource(
    "scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", namespaced=False
)
PDBS = APIResource("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", namespaced=True)
NOMINATED = "volcano.sh/nominated-hypernode"
HOLD = "test.volcano-py.io/hold"  # keeps an evicted pod Terminating until the test lets go
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
    client: KubeClient,
    ns: str,
    topo: Topology,
    name: str,
    group: str,
    pc: str,
    node: str = "",
    hold: bool = False,
) -> str:
    body = pod_body(
        name,
        ns,
        requests={topo.gpu: "1", "cpu": "100m"},
        annotations={"scheduling.k8s.io/group-name": group},
        node_name=node or None,
    )
    body["spec"]["priorityClassName"] = pc
    if hold:
        body["metadata"]["finalizers"] = [HOLD]
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
    client: KubeClient, ns: str, topo: Topology, pcs: dict[str, str], hold: bool = False
) -> tuple[list[str], list[str], list[str], list[str], str, str]:
    """Racks a (two low 4-pod gangs) and b (one mid 8-pod gang), all GPUs taken.

    Returns nodes of a, nodes of b, the low pods, the mid pods, rack a, rack b. ``hold``: the
    low pods carry the ``HOLD`` finalizer.
    """
    a = [topo.node(f"a{i}", 4) for i in range(2)]
    b = [topo.node(f"b{i}", 4) for i in range(2)]
    rack_a = topo.hypernode("rack-a", 1, [exact(n) for n in a])
    rack_b = topo.hypernode("rack-b", 1, [exact(n) for n in b])
    topo.hypernode("spine", 2, [exact(rack_a, "HyperNode"), exact(rack_b, "HyperNode")])
    low, mid = [], []
    for g, node in (("low-1", a[0]), ("low-2", a[1])):
        _group(client, ns, g, 4)
        low += [_pod(client, ns, topo, f"{g}-{i}", g, pcs["low"], node, hold) for i in range(4)]
    _group(client, ns, "mid", 8)
    for i in range(8):
        mid.append(_pod(client, ns, topo, f"mid-{i}", "mid", pcs["mid"], b[i // 4]))
    return a, b, low, mid, rack_a, rack_b


def _high_gang(client: KubeClient, ns: str, topo: Topology, pcs: dict[str, str]) -> list[str]:
    _group(client, ns, "high", 8, tier=1)
    return [_pod(client, ns, topo, f"high-{i}", "high", pcs["high"]) for i in range(8)]


def _annotations(client: KubeClient, ns: str, name: str) -> dict[str, str]:
    return client.get(R.PODGROUPS, name, ns)["metadata"].get("annotations") or {}


def _placed(client: KubeClient, ns: str, gang: list[str]) -> dict[str, str] | None:
    placement = {n: client.get(R.PODS, n, ns)["spec"].get("nodeName", "") for n in gang}
    return placement if all(placement.values()) else None


def _lands_where_victims_were(
    client: KubeClient,
    ns: str,
    gang: list[str],
    victims: list[str],
    nodes: list[str],
    bystanders: list[str],
    their_nodes: list[str],
) -> None:
    """Once the victims are gone the gang lands on their ``nodes``, its nomination is dropped
    (it served), and every bystander still runs where it did."""
    wait_for(lambda: len(_terminating_then_gone(client, ns, victims)) == len(victims), 60)
    placement = wait_for(lambda: _placed(client, ns, gang), 60)
    assert set(placement.values()) <= set(nodes), placement
    wait_for(lambda: NOMINATED not in _annotations(client, ns, "high"), 30)
    for name in bystanders:
        pod = client.get(R.PODS, name, ns)
        assert not pod["metadata"].get("deletionTimestamp"), name
        assert pod["spec"]["nodeName"] in their_nodes


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

    _lands_where_victims_were(client, ns, gang, victims, a, bystanders, b)
    events = client.list(R.EVENTS, ns)["items"]
    preempted = {e["involvedObject"]["name"] for e in events if e.get("reason") == "Preempted"}
    assert preempted == set(victims)
    assert all(
        f"{ns}/high in HyperNode {rack_a}" in e["message"]
        for e in events
        if e.get("reason") == "Preempted"
    )


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
    events = client.list(R.EVENTS, ns)["items"]
    messages = {e["message"] for e in events if e.get("reason") == "Preempted"}
    assert messages == {f"preempt: evicted for PodGroup {ns}/high in HyperNode {rack_b}"}
    wait_for(lambda: NOMINATED not in _annotations(client, ns, "high"), 30)
    for name in low[:4]:  # the budget held: low-1 still runs where it was
        pod = client.get(R.PODS, name, ns)
        assert not pod["metadata"].get("deletionTimestamp"), name
        assert pod["spec"]["nodeName"] == a[0]


def _preempted(client: KubeClient, ns: str) -> Counter[str]:
    """Pod -> how many times it was evicted (the Preempted events, repeats counted)."""
    counts: Counter[str] = Counter()
    for event in client.list(R.EVENTS, ns)["items"]:
        if event.get("reason") == "Preempted":
            counts[event["involvedObject"]["name"]] += int(event.get("count") or 1)
    return counts


def _unschedulable_cycles() -> float:
    return (
        REGISTRY.get_sample_value("volcano_schedule_attempts_total", {"result": "unschedulable"})
        or 0.0
    )


def test_a_failover_while_victims_terminate_evicts_nothing_twice(
    client: KubeClient,
    namespace: str,
    topology: Topology,
    priority_classes: dict[str, str],
    run_scheduler: Callable[..., Callable[[], Scheduler]],
) -> None:
    """The first scheduler evicts rack a's gangs and stops while they still terminate (the
    leader is lost); the next one starts from the API objects alone: it sees the nominated
    HyperNode and the terminating victims, evicts nothing, and places the gang in rack a once
    they are gone."""
    ns = namespace
    a, b, victims, bystanders, rack_a, _ = _full_cluster(
        client, ns, topology, priority_classes, hold=True
    )
    stop_first = run_scheduler(CONF)
    gang = _high_gang(client, ns, topology, priority_classes)

    def all_terminating() -> bool:
        pods = [client.get(R.PODS, name, ns) for name in victims]
        return all(p["metadata"].get("deletionTimestamp") for p in pods)

    wait_for(all_terminating, 60)
    wait_for(lambda: _annotations(client, ns, "high").get(NOMINATED) == rack_a, 30)
    stop_first()
    assert _preempted(client, ns) == Counter(dict.fromkeys(victims, 1))

    before = _unschedulable_cycles()
    run_scheduler(CONF)  # the next leader, with caches of its own
    wait_for(lambda: _unschedulable_cycles() >= before + 10, 30)  # ten cycles with the gang stuck
    assert _preempted(client, ns) == Counter(dict.fromkeys(victims, 1))
    for name in bystanders:
        assert not client.get(R.PODS, name, ns)["metadata"].get("deletionTimestamp"), name
    assert _placed(client, ns, gang) is None

    for name in victims:  # the kubelet lets go: the victims are removed
        client.patch(R.PODS, name, {"metadata": {"finalizers": None}}, ns)
    _lands_where_victims_were(client, ns, gang, victims, a, bystanders, b)
    assert _preempted(client, ns) == Counter(dict.fromkeys(victims, 1))
