"""Clients written for Volcano, against a real API server (issue 24).

- Volcano's job controller and Kubeflow training-operator create the PodGroup first and its
  pods only once it is ``Inqueue``: the PodGroup must be enqueued with no pods at all, and
  its pods bound when they come.
- An operator that puts ``volcano.sh/network-topology-*`` on the PodGroup (LWS,
  training-operator) gets its gang inside one rack.
- ``Queue.status.allocated`` shrinks when the pods go (a key dropped to zero is removed,
  which a merge patch with ``allocated: {}`` never did).

The scheduler runs the built-in default tiers (Volcano's default + network-topology-aware).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

from tests.builders import force_delete_pod, podgroup_body
from tests.integration.scheduler.conftest import (
    Topology,
    gang_pod,
    two_spines_of_two_racks,
    wait_for,
)
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient

JSON = dict[str, Any]


def _phase(client: KubeClient, ns: str, name: str) -> str:
    return str((client.get(R.PODGROUPS, name, ns).get("status") or {}).get("phase") or "")


def _pods(client: KubeClient, ns: str, topo: Topology, group: str, count: int) -> list[str]:
    return [gang_pod(client, ns, topo, f"{group}-{i}", group) for i in range(count)]


def _bound(client: KubeClient, ns: str, names: list[str]) -> dict[str, str]:
    nodes = {n: client.get(R.PODS, n, ns)["spec"].get("nodeName") for n in names}
    return nodes if all(nodes.values()) else {}


def test_podgroup_created_before_its_pods_is_inqueue_then_its_pods_bind(
    client: KubeClient,
    namespace: str,
    topology: Topology,
    run_scheduler: Callable[..., Callable[[], Any]],
) -> None:
    racks = two_spines_of_two_racks(topology)
    run_scheduler()
    created = time.monotonic()
    client.create(
        R.PODGROUPS,
        podgroup_body("trainer", namespace, 2, min_resources={topology.gpu: "2", "cpu": "20m"}),
    )
    wait_for(lambda: _phase(client, namespace, "trainer") == "Inqueue", timeout=15)
    inqueue_after = time.monotonic() - created
    assert not client.list(R.PODS, namespace)["items"]  # admitted with no pods at all
    time.sleep(max(0.0, 5.0 - inqueue_after))  # the job-controller pattern: pods come later
    names = _pods(client, namespace, topology, "trainer", 2)
    nodes = wait_for(lambda: _bound(client, namespace, names), timeout=15)
    assert set(nodes.values()) <= {n for members in racks.values() for n in members}
    wait_for(lambda: _phase(client, namespace, "trainer") == "Running")


def test_podgroup_that_can_never_fit_stays_pending_and_says_why(
    client: KubeClient,
    namespace: str,
    topology: Topology,
    run_scheduler: Callable[..., Callable[[], Any]],
) -> None:
    topology.node("n0", 4)
    run_scheduler()
    client.create(
        R.PODGROUPS, podgroup_body("huge", namespace, 64, min_resources={topology.gpu: "64"})
    )

    def condition() -> str:
        pg = client.get(R.PODGROUPS, "huge", namespace)
        messages = [c.get("message", "") for c in (pg.get("status") or {}).get("conditions", [])]
        return next((m for m in messages if "overused" in m), "")

    message = wait_for(condition, timeout=15)
    assert f"{topology.gpu} short by" in message
    assert _phase(client, namespace, "huge") == "Pending"


def test_annotation_topology_keeps_an_operator_gang_inside_one_rack(
    client: KubeClient,
    namespace: str,
    topology: Topology,
    run_scheduler: Callable[..., Callable[[], Any]],
) -> None:
    racks = two_spines_of_two_racks(topology)
    run_scheduler()
    body = podgroup_body("lws-0", namespace, 4)  # spec without networkTopology, as LWS writes
    body["metadata"]["annotations"] = {
        "volcano.sh/network-topology-mode": "hard",
        "volcano.sh/network-topology-highest-tier": "1",
    }
    client.create(R.PODGROUPS, body)
    names = _pods(client, namespace, topology, "lws-0", 4)
    nodes = wait_for(lambda: _bound(client, namespace, names), timeout=20)
    assert any(set(nodes.values()) <= set(members) for members in racks.values()), nodes


def test_queue_allocated_drops_to_zero_when_the_pods_go(
    client: KubeClient,
    namespace: str,
    topology: Topology,
    run_scheduler: Callable[..., Callable[[], Any]],
) -> None:
    topology.node("n0", 4)
    queue = f"shrink-{uuid.uuid4().hex[:5]}"
    client.create(
        R.QUEUES,
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "Queue",
            "metadata": {"name": queue},
            "spec": {"weight": 1},
        },
    )
    try:
        run_scheduler()
        client.create(R.PODGROUPS, podgroup_body("q", namespace, 2, queue=queue))
        names = _pods(client, namespace, topology, "q", 2)
        wait_for(lambda: _bound(client, namespace, names), timeout=20)

        def allocated() -> JSON:
            status = client.get(R.QUEUES, queue).get("status") or {}
            return dict(status.get("allocated") or {})

        wait_for(lambda: allocated().get(topology.gpu) == "2", timeout=15)
        for name in names:
            force_delete_pod(client, name, namespace)
        wait_for(lambda: topology.gpu not in allocated(), timeout=30)
    finally:
        client.delete(R.QUEUES, queue)


def _podgroup_events(client: KubeClient, ns: str, name: str, reason: str) -> list[JSON]:
    return [
        e
        for e in client.list(R.EVENTS, ns)["items"]
        if e["involvedObject"].get("kind") == "PodGroup"
        and e["involvedObject"].get("name") == name
        and e.get("reason") == reason
    ]


def test_bad_topology_annotation_is_one_warning_and_the_job_runs(
    client: KubeClient,
    namespace: str,
    topology: Topology,
    run_scheduler: Callable[..., Callable[[], Any]],
) -> None:
    two_spines_of_two_racks(topology)
    run_scheduler()
    body = podgroup_body("typo", namespace, 2)
    body["metadata"]["annotations"] = {"volcano.sh/network-topology-highest-tier": "rack"}
    client.create(R.PODGROUPS, body)
    names = _pods(client, namespace, topology, "typo", 2)
    wait_for(lambda: _bound(client, namespace, names), timeout=20)
    (event,) = wait_for(
        lambda: _podgroup_events(client, namespace, "typo", "InvalidNetworkTopologyAnnotation")
    )
    assert event["type"] == "Warning"
    assert "volcano.sh/network-topology-highest-tier='rack'" in event["message"]
    assert event["source"]["component"] == "volcano"
    time.sleep(1)  # several more cycles (period 0.2 s): still told once
    (event,) = _podgroup_events(client, namespace, "typo", "InvalidNetworkTopologyAnnotation")
    assert event.get("count", 1) == 1


def test_topology_without_the_plugin_is_said_on_the_podgroup(
    client: KubeClient,
    namespace: str,
    topology: Topology,
    run_scheduler: Callable[..., Callable[[], Any]],
) -> None:
    two_spines_of_two_racks(topology)
    run_scheduler(
        'actions: "enqueue, allocate"\ntiers:\n- plugins:\n  - name: gang\n  - name: predicates\n'
    )
    client.create(
        R.PODGROUPS,
        podgroup_body(
            "racked", namespace, 2, network_topology={"mode": "hard", "highestTierAllowed": 1}
        ),
    )
    names = _pods(client, namespace, topology, "racked", 2)
    wait_for(lambda: _bound(client, namespace, names), timeout=20)  # scheduled as configured
    (event,) = wait_for(
        lambda: _podgroup_events(client, namespace, "racked", "NetworkTopologyNotConfigured")
    )
    assert "is not enforced" in event["message"]

    def scheduled_message() -> str:
        pg = client.get(R.PODGROUPS, "racked", namespace)
        conditions = (pg.get("status") or {}).get("conditions") or []
        return next((c["message"] for c in conditions if c.get("type") == "Scheduled"), "")

    assert "no network-topology-aware plugin" in wait_for(scheduled_message)


def test_a_hard_job_on_a_tree_without_its_tier_is_placed_and_said_on_the_podgroup(
    client: KubeClient,
    namespace: str,
    topology: Topology,
    run_scheduler: Callable[..., Callable[[], Any]],
) -> None:
    # issue 44: every rack retired; as Volcano, the job goes to the cluster top, but not silently
    for i in range(2):
        topology.node(f"bare-{i}", 2)
    run_scheduler()
    client.create(
        R.PODGROUPS,
        podgroup_body(
            "wide", namespace, 2, network_topology={"mode": "hard", "highestTierAllowed": 1}
        ),
    )
    names = _pods(client, namespace, topology, "wide", 2)
    wait_for(lambda: _bound(client, namespace, names), timeout=20)
    (event,) = wait_for(
        lambda: _podgroup_events(client, namespace, "wide", "NetworkTopologyTierMissing")
    )
    assert event["type"] == "Warning"
    assert "no HyperNode at tier 1 or below" in event["message"]
