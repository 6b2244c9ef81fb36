"""The harness's nodes behave like a cluster's (kwok as kubelets, devcluster/kwok.py).

A node created the builders' way turns Ready, renews its Lease and loses the not-ready taint
the API server gave it (kube-controller-manager's node-lifecycle controller, not the test);
a pod bound to it goes Running and a graceful delete completes. A node nobody runs a kubelet
for keeps its taint.
"""

from __future__ import annotations

import time
import uuid

from devcluster import kwok
from tests.builders import create_node, delete_pod, node_is_up, pod_body, wait_until
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient


def test_a_builder_node_goes_ready_runs_a_bound_pod_and_finishes_its_deletion(
    client: KubeClient, namespace: str
) -> None:
    node = f"kwok-{uuid.uuid4().hex[:6]}"
    created = create_node(client, node, allocatable={"cpu": "4", "memory": "8Gi", "pods": "10"})
    try:
        assert created["metadata"]["annotations"][kwok.ANNOTATION] == kwok.VALUE
        assert node_is_up(created)
        assert not created["spec"].get("taints")
        assert created["status"]["allocatable"]["cpu"] == "4"  # kwok keeps the registered capacity
        lease = client.get(R.LEASES, node, "kube-node-lease")
        assert lease["spec"]["holderIdentity"]
        assert lease["spec"]["leaseDurationSeconds"] == kwok.NODE_LEASE_SECONDS

        client.create(R.PODS, pod_body("bound", namespace, scheduler_name=None, node_name=node))
        pod = wait_until(
            lambda: (
                (p := client.get(R.PODS, "bound", namespace))["status"].get("phase") == "Running"
                and p
            ),
            30,
            "the bound pod runs",
        )
        ready = {c["type"]: c["status"] for c in pod["status"]["conditions"]}
        assert ready["Ready"] == "True"
        assert pod["status"]["podIP"]
        assert pod["status"]["containerStatuses"][0]["state"]["running"]

        # graceful (30 s by default): gone well before, because the kubelet (kwok) finished it
        delete_pod(client, "bound", namespace, timeout=20)
    finally:
        client.delete(R.NODES, node)


def test_a_node_without_a_kubelet_keeps_the_not_ready_taint(client: KubeClient) -> None:
    node = f"dead-{uuid.uuid4().hex[:6]}"
    create_node(client, node, ready=False)
    try:
        time.sleep(2)  # long enough for kwok and the node-lifecycle controller to act
        current = client.get(R.NODES, node)
        assert not node_is_up(current)
        taints = {t["key"] for t in current["spec"].get("taints") or []}
        assert "node.kubernetes.io/not-ready" in taints
        assert kwok.ANNOTATION not in (current["metadata"].get("annotations") or {})
    finally:
        client.delete(R.NODES, node)
