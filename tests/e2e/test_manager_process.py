"""The whole process: gunicorn + TLS webhook + controllers + scheduler on one cache."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from tests.builders import create_node, deployment_body, exact, hypernode_body, regex
from tests.e2e.conftest import ManagerProcess
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import ApiError


def wait_until(predicate: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.2)


def test_manager_serves_probes_and_volcano_metrics(manager: ManagerProcess) -> None:
    assert manager.get("/healthz") == (200, "ok\n")
    assert manager.get("/readyz") == (200, "ok\n")
    status, body = manager.get("/metrics")
    assert status == 200
    assert "volcano_e2e_scheduling_latency_milliseconds" in body


def test_manager_webhook_rejects_bad_hypernode_through_the_api_server(
    manager: ManagerProcess, client: KubeClient
) -> None:
    with pytest.raises(ApiError) as info:
        client.create(R.HYPERNODES, hypernode_body("e2e-bad-regex", 1, [regex("node-[")]))
    assert info.value.status in (400, 403, 422)
    assert "member regexMatch pattern is invalid" in info.value.message
    created = client.create(R.HYPERNODES, hypernode_body("e2e-good", 1, [exact("node-x")]))
    assert created["metadata"]["name"] == "e2e-good"
    client.delete(R.HYPERNODES, "e2e-good")


def test_manager_places_an_annotated_deployment_as_a_gang(
    manager: ManagerProcess, client: KubeClient, namespace: str
) -> None:
    for i in range(4):
        create_node(
            client, f"{namespace}-n{i}", allocatable={"cpu": "4", "memory": "16Gi", "pods": "110"}
        )
    client.create(
        R.DEPLOYMENTS,
        deployment_body(
            "gang",
            namespace,
            4,
            annotations={"scheduling.volcano.sh/group-min-member": "4"},
            requests={"cpu": "3"},
        ),
    )

    def bound() -> list[str]:
        return [p["spec"].get("nodeName", "") for p in client.list_all(R.PODS, namespace)]

    wait_until(lambda: len(bound()) == 4 and all(bound()), timeout=90)
    assert len(set(bound())) == 4  # 3 cpu each on 4-cpu nodes: one per node
    groups = client.list_all(R.PODGROUPS, namespace)
    assert len(groups) == 1
    assert groups[0]["spec"]["minMember"] == 4
