"""With the Workload API off (today's default), native PodGroups change nothing.

The scheduler asks discovery once, finds ``scheduling.k8s.io/v1beta1`` PodGroups not served,
reads none (one INFO line, no error) and schedules Volcano PodGroups as before; a pod
written with ``spec.schedulingGroup`` loses the field at the API server (the gate is off), so
it is a plain pod of ours and no native gang is made of it.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from tests.builders import pod_body
from tests.integration.scheduler.conftest import Topology, gang_pod, wait_for
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.kube.discovery import serves


def test_gates_off_no_native_podgroups_read_and_volcano_gangs_schedule_as_before(
    client: KubeClient,
    namespace: str,
    topology: Topology,
    run_scheduler: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    assert not serves(client, R.NATIVE_PODGROUPS)
    node = topology.node("n0", 4)
    with caplog.at_level(logging.INFO, logger="volcano_py.kube.discovery"):
        run_scheduler()
    told = [r.levelno for r in caplog.records if r.name == "volcano_py.kube.discovery"]
    assert told == [logging.INFO]  # one line, no error
    body = pod_body("native", namespace, requests={topology.gpu: "1"})
    body["spec"]["schedulingGroup"] = {"podGroupName": "g"}
    created = client.create(R.PODS, body, namespace)
    assert "schedulingGroup" not in created["spec"]  # dropped: the gate is off
    client.create(
        R.PODGROUPS,
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "pg", "namespace": namespace},
            "spec": {"minMember": 2},
        },
        namespace,
    )
    names = [gang_pod(client, namespace, topology, f"m{i}", "pg") for i in range(2)]
    bound = wait_for(
        lambda: all(client.get(R.PODS, n, namespace)["spec"].get("nodeName") for n in names)
    )
    assert bound
    assert client.get(R.PODS, "native", namespace)["spec"].get("nodeName") is None
    assert node in {client.get(R.PODS, n, namespace)["spec"]["nodeName"] for n in names}
