"""The embedded scheduler against a real API server: gangs, tiers, messages, restarts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.builders import delete_pod, exact, pod_body, podgroup_body
from tests.integration.scheduler.conftest import Topology, gang_pod, wait_for
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.scheduler.api.task_info import TaskInfo
from volcano_py.scheduler.scheduler import Scheduler

JSON = dict[str, Any]
ALLOCATED = "volcano.sh/job-allocated-hypernode"


def _two_tors(topo: Topology, gpus: int = 4) -> dict[str, list[str]]:
    """4 nodes, tor-a (n1, n2) and tor-b (n3, n4) under one spine."""
    nodes = [topo.node(f"n{i}", gpus) for i in range(1, 5)]
    tor_a = topo.hypernode("tor-a", 1, [exact(nodes[0]), exact(nodes[1])])
    tor_b = topo.hypernode("tor-b", 1, [exact(nodes[2]), exact(nodes[3])])
    topo.hypernode("spine", 2, [exact(tor_a, "HyperNode"), exact(tor_b, "HyperNode")])
    return {tor_a: nodes[:2], tor_b: nodes[2:]}


def _gang(
    client: KubeClient, ns: str, topo: Topology, name: str, pods: int, min_member: int, tier: int
) -> list[str]:
    client.create(
        R.PODGROUPS,
        podgroup_body(
            name,
            ns,
            min_member,
            min_resources={topo.gpu: str(min_member)},
            network_topology={"mode": "hard", "highestTierAllowed": tier},
        ),
    )
    names = []
    for i in range(pods):
        names.append(f"{name}-{i}")
        gang_pod(client, ns, topo, f"{name}-{i}", name)
    return names


def _placement(client: KubeClient, ns: str, names: list[str]) -> dict[str, str]:
    return {n: client.get(R.PODS, n, ns)["spec"].get("nodeName", "") for n in names}


def _all_bound(client: KubeClient, ns: str, names: list[str]) -> dict[str, str] | None:
    placement = _placement(client, ns, names)
    return placement if all(placement.values()) else None


def _blocker(client: KubeClient, ns: str, topo: Topology, node: str, gpus: int) -> str:
    name = f"block-{node}"
    body = pod_body(
        name, ns, requests={topo.gpu: str(gpus)}, scheduler_name="default-scheduler", node_name=node
    )
    client.create(R.PODS, body)
    return name


def test_gang_bound_inside_lowest_tier_that_fits(
    client: KubeClient,
    namespace: str,
    topology: Topology,
    run_scheduler: Callable[[], Callable[[], Scheduler]],
) -> None:
    tors = _two_tors(topology)
    run_scheduler()
    names = _gang(client, namespace, topology, "train", 6, 6, 2)
    placement = wait_for(lambda: _all_bound(client, namespace, names))
    homes = [tor for tor, nodes in tors.items() if set(placement.values()) <= set(nodes)]
    assert len(homes) == 1, placement
    pg = wait_for(
        lambda: (
            (p := client.get(R.PODGROUPS, "train", namespace)).get("status", {}).get("phase")
            == "Running"
            and p
        )
    )
    assert pg["metadata"]["annotations"][ALLOCATED] == homes[0]


def test_gang_too_big_waits_with_per_tier_message_until_capacity_frees(
    client: KubeClient,
    namespace: str,
    topology: Topology,
    run_scheduler: Callable[[], Callable[[], Scheduler]],
) -> None:
    tors = _two_tors(topology)
    tor_a = sorted(tors)[0]
    blockers = [_blocker(client, namespace, topology, n, 3) for ns in tors.values() for n in ns]
    run_scheduler()
    names = _gang(client, namespace, topology, "big", 4, 4, 1)

    def unschedulable_message() -> str:
        pg = client.get(R.PODGROUPS, "big", namespace)
        for cond in pg.get("status", {}).get("conditions", []):
            if cond["type"] == "Unschedulable" and cond["status"] == "True":
                return str(cond["message"])
        return ""

    # The PodGroup exists before its pods: a cycle in between may first say "Not enough valid
    # tasks" (gang, right for that moment); wait for the message about the whole gang.
    message = wait_for(lambda: m if "tier 1:" in (m := unschedulable_message()) else "")
    assert f"tier 1: 0/2 fit ({topology.gpu} short by 2)" in message
    assert _placement(client, namespace, names) == dict.fromkeys(names, "")
    pod = wait_for(
        lambda: (p := client.get(R.PODS, names[0], namespace))["status"].get("conditions") and p
    )
    conditions = {c["type"]: c for c in pod["status"]["conditions"]}
    assert conditions["PodScheduled"]["status"] == "False"
    assert conditions["PodScheduled"]["message"] == message
    events = wait_for(
        lambda: [
            e
            for e in client.list(R.EVENTS, namespace)["items"]
            if e["reason"] == "FailedScheduling" and e["involvedObject"]["name"] == names[0]
        ]
    )
    assert events[0]["type"] == "Warning"

    for node, blocker in zip(sorted(n for ns in tors.values() for n in ns), blockers, strict=True):
        if node in tors[tor_a]:
            delete_pod(client, blocker, namespace)
    placement = wait_for(lambda: _all_bound(client, namespace, names))
    assert set(placement.values()) <= set(tors[tor_a])


def test_restart_keeps_allocated_hypernode_and_binds_no_pod_twice(
    client: KubeClient,
    namespace: str,
    topology: Topology,
    run_scheduler: Callable[[], Callable[[], Scheduler]],
) -> None:
    tors = _two_tors(topology)
    tor_a, tor_b = sorted(tors)
    # tor-a is full, so the first two pods go to tor-b.
    blockers = [_blocker(client, namespace, topology, n, 4) for n in tors[tor_a]]
    stop = run_scheduler()
    first = _gang(client, namespace, topology, "elastic", 2, 2, 1)
    placed = wait_for(lambda: _all_bound(client, namespace, first))
    assert set(placed.values()) <= set(tors[tor_b])
    wait_for(
        lambda: (
            client.get(R.PODGROUPS, "elastic", namespace)["metadata"]
            .get("annotations", {})
            .get(ALLOCATED)
            == tor_b
        )
    )
    stop()

    # While no scheduler runs: tor-a empties (it would now score better) and the job grows.
    for blocker in blockers:
        delete_pod(client, blocker, namespace)
    more = [f"elastic-{i}" for i in range(2, 4)]
    for name in more:
        gang_pod(client, namespace, topology, name, "elastic")

    bound_calls: list[str] = []
    stop = run_scheduler()
    scheduler_writer_bind = _spy_binds(stop, bound_calls)
    placement = wait_for(lambda: _all_bound(client, namespace, first + more))
    assert set(placement.values()) <= set(tors[tor_b]), placement
    assert _placement(client, namespace, first) == placed
    assert scheduler_writer_bind is not None
    assert not set(bound_calls) & {f"{namespace}/{n}" for n in first}
    assert len(bound_calls) == len(set(bound_calls))


def _spy_binds(stop: Callable[[], Scheduler], calls: list[str]) -> object:
    """Record every pod the running scheduler asks to bind (wraps its writer)."""
    scheduler = _running_scheduler(stop)
    original = scheduler.writer.start_binds

    def start_binds(tasks: list[TaskInfo]) -> Callable[[], dict[str, str]]:
        calls.extend(t.key for t in tasks)
        return original(tasks)

    scheduler.writer.start_binds = start_binds  # type: ignore[method-assign]
    return original


def _running_scheduler(stop: Callable[[], Scheduler]) -> Scheduler:
    for cell in stop.__closure__ or ():
        if isinstance(cell.cell_contents, Scheduler):
            return cell.cell_contents
    raise AssertionError("no scheduler in the stopper")


def test_a_parked_gang_is_placed_when_a_node_is_added(
    client: KubeClient,
    namespace: str,
    topology: Topology,
    run_scheduler: Callable[[], Callable[[], Scheduler]],
) -> None:
    """A gang of 4 one-GPU pods on one 2-GPU node waits out of cycles (parked: no cycle looks
    at it while nothing changes); a second node is an event that may make room, and the gang
    is placed across both."""
    topology.node("n1", 2)
    stop = run_scheduler()
    client.create(
        R.PODGROUPS, podgroup_body("wide", namespace, 4, min_resources={topology.gpu: "4"})
    )
    names = [gang_pod(client, namespace, topology, f"wide-{i}", "wide") for i in range(4)]
    scheduler = _running_scheduler(stop)
    wait_for(lambda: scheduler.cache.is_parked(f"{namespace}/wide"))
    assert _placement(client, namespace, names) == dict.fromkeys(names, "")
    topology.node("n2", 2)
    # well within the 30 s after which a parked job is looked at again anyway
    placement = wait_for(lambda: _all_bound(client, namespace, names), timeout=10)
    assert set(placement.values()) == set(topology.nodes)
