"""Host ports (``api/host_ports.py``): kube-scheduler's NodePorts cases through the scheduler.

The table is kube-scheduler v1.37's ``TestNodePorts`` (its inputs and outcomes): a pod asking
for host ports against one node holding a pod with other host ports. Each case runs the real
cycle on a one-node cluster; a conflict leaves the pod pending with kube-scheduler's reason.
Then the gang cases: two pods of one gang asking the same host port land on different nodes,
or the gang waits.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.scheduler.objects import node, pod, podgroup
from volcano_py.scheduler.api.host_ports import REASON
from volcano_py.scheduler.simulator import Simulator

JSON = dict[str, Any]


def _ports(*infos: str) -> list[JSON]:
    """``PROTOCOL/hostIP/hostPort`` strings (kube-scheduler's test notation) as container ports."""
    out = []
    for info in infos:
        protocol, ip, port = info.split("/")
        out.append(
            {"containerPort": int(port), "hostPort": int(port), "hostIP": ip, "protocol": protocol}
        )
    return out


def _containers(*infos: str) -> JSON:
    return {"containers": [{"name": "main", "ports": _ports(*infos)}]}


def _init_container(sidecar: bool) -> JSON:
    init: JSON = {
        "name": "init",
        "ports": [{"containerPort": 8001, "hostPort": 8001, "protocol": "TCP"}],
    }
    if sidecar:
        init["restartPolicy"] = "Always"
    return {"containers": [{"name": "main"}], "initContainers": [init]}


# kube-scheduler's table: (id, incoming pod's host ports, the node's pod's host ports, fits)
TABLE = [
    ("skip-filter", (), (), True),
    ("other-port", ("UDP/127.0.0.1/8080",), ("UDP/127.0.0.1/9090",), True),
    ("same-udp-port", ("UDP/127.0.0.1/8080",), ("UDP/127.0.0.1/8080",), False),
    ("same-tcp-port", ("TCP/127.0.0.1/8080",), ("TCP/127.0.0.1/8080",), False),
    ("different-host-ip", ("TCP/127.0.0.1/8080",), ("TCP/127.0.0.2/8080",), True),
    ("different-protocol", ("UDP/127.0.0.1/8080",), ("TCP/127.0.0.1/8080",), True),
    (
        "second-udp-port-conflict",
        ("UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"),
        ("UDP/127.0.0.1/8080",),
        False,
    ),
    (
        "first-tcp-port-conflict",
        ("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
        ("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"),
        False,
    ),
    ("conflict-due-to-0.0.0.0-hostIP", ("TCP/0.0.0.0/8001",), ("TCP/127.0.0.1/8001",), False),
    (
        "tcp-conflict-due-to-0.0.0.0-hostIP",
        ("TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
        ("TCP/127.0.0.1/8001",),
        False,
    ),
    ("conflict-to-0.0.0.0-hostIP", ("TCP/127.0.0.1/8001",), ("TCP/0.0.0.0/8001",), False),
    ("second-different-protocol", ("UDP/127.0.0.1/8001",), ("TCP/0.0.0.0/8001",), True),
    (
        "udp-conflict-due-to-0.0.0.0-hostIP",
        ("UDP/127.0.0.1/8001",),
        ("TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"),
        False,
    ),
]
CASES = [pytest.param(_containers(*want), held, fits, id=name) for name, want, held, fits in TABLE]
CASES += [
    pytest.param(
        _init_container(sidecar=False),
        ("TCP/0.0.0.0/8001",),
        True,
        id="non-sidecar-initContainer-using-hostPort",
    ),
    pytest.param(
        _init_container(sidecar=True),
        ("TCP/0.0.0.0/8001",),
        False,
        id="tcp-hostPort-conflict-from-sidecar-initContainer",
    ),
]


@pytest.mark.parametrize(("spec", "existing", "fits"), CASES)
def test_kube_scheduler_node_ports_cases(spec: JSON, existing: tuple[str, ...], fits: bool) -> None:
    running = pod("m1", node_name="n1", phase="Running", scheduler="default-scheduler")
    running["spec"].update(_containers(*existing))
    sim = Simulator([node("n1"), running, podgroup("pg", 1), pod("p", "pg", spec=spec)])
    result = sim.run()
    assert ("default/p" in result.bindings) is fits
    if not fits:
        messages = [c["message"] for c in result.podgroups["default/pg"]["conditions"]]
        assert any(f"0/1 nodes are available: 1 {REASON}." in m for m in messages), messages


def _gang(min_member: int, nodes: int) -> list[JSON]:
    objects = [node(f"n{i}") for i in range(nodes)] + [podgroup("pg", min_member)]
    objects += [pod(f"p-{i}", "pg", {"cpu": 1}, spec=_containers("TCP//28080")) for i in range(2)]
    return objects


def test_two_pods_of_one_gang_asking_one_host_port_land_on_different_nodes() -> None:
    result = Simulator(_gang(2, nodes=2)).run()
    assert sorted(result.bindings) == ["default/p-0", "default/p-1"]
    assert result.bindings["default/p-0"] != result.bindings["default/p-1"]


def test_a_gang_whose_pods_share_a_host_port_waits_on_one_node() -> None:
    result = Simulator(_gang(2, nodes=1)).run()
    assert result.bindings == {}
    messages = [c["message"] for c in result.podgroups["default/pg"]["conditions"]]
    assert any(f"0/1 nodes are available: 1 {REASON}." in m for m in messages), messages


def test_a_freed_port_is_free_again_after_the_pod_leaves() -> None:
    holder = pod("m1", node_name="n0", phase="Running", scheduler="default-scheduler")
    holder["spec"].update(_containers("TCP//28080"))
    sim = Simulator(
        [node("n0"), holder, podgroup("pg", 1), pod("p", "pg", spec=_containers("TCP//28080"))]
    )
    assert sim.run().bindings == {}
    sim.cache.delete_pod(holder)
    assert sim.cycle().binds == {"default/p": "n0"}


def test_a_job_waiting_for_a_port_is_parked_until_a_pod_leaves_a_node() -> None:
    holder = pod("m1", node_name="n0", phase="Running", scheduler="default-scheduler")
    holder["spec"].update(_containers("TCP//28080"))
    objects = [
        node("n0"),
        holder,
        podgroup("pg", 1),
        pod("p", "pg", spec=_containers("TCP//28080")),
    ]
    sim = Simulator(objects)
    for _ in range(3):
        sim.cycle()
    assert sim.cache.is_parked("default/pg")
    sim.cache.delete_pod(holder)  # the port is freed: a pod left its node
    assert "default/pg" in sim.cache.snapshot(active_only=True).jobs
