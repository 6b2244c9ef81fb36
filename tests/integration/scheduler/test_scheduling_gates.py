"""A gated gang on the real control plane (Volcano's "Scheduling gated task will not consume
inqueue resources"): it never binds (no 409s), holds nothing, other jobs bind, and removing
its gates lets it place.
"""

from __future__ import annotations

from collections.abc import Callable

from tests.builders import delete_pod, pod_body, podgroup_body
from tests.integration.scheduler.conftest import Topology, gang_pod, wait_for
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.scheduler.scheduler import Scheduler

GATE = "example.com/hold"


def _bound(client: KubeClient, ns: str, names: list[str]) -> bool:
    return all(client.get(R.PODS, n, ns)["spec"].get("nodeName") for n in names)


def _condition(client: KubeClient, ns: str, group: str) -> str:
    pg = client.get(R.PODGROUPS, group, ns)
    for cond in pg.get("status", {}).get("conditions", []):
        if cond["type"] == "Unschedulable" and cond["status"] == "True":
            return str(cond["message"])
    return ""


def test_a_gated_gang_holds_nothing_and_places_once_its_gates_are_removed(
    client: KubeClient,
    namespace: str,
    topology: Topology,
    run_scheduler: Callable[[], Callable[[], Scheduler]],
) -> None:
    topology.node("n1", 2)
    topology.node("n2", 2)
    run_scheduler()
    # the gated gang asks for every GPU of the cluster, and came first
    client.create(
        R.PODGROUPS, podgroup_body("held", namespace, 4, min_resources={topology.gpu: "4"})
    )
    held = [f"held-{i}" for i in range(4)]
    for name in held:
        body = pod_body(
            name,
            namespace,
            requests={topology.gpu: "1", "cpu": "100m"},
            annotations={"scheduling.k8s.io/group-name": "held"},
        )
        body["spec"]["schedulingGates"] = [{"name": GATE}]
        client.create(R.PODS, body)
    wait_for(lambda: "non-empty scheduling gates" in _condition(client, namespace, "held"))
    # two jobs asking half of the cluster each still run
    others = []
    for job in ("job1", "job2"):
        client.create(
            R.PODGROUPS, podgroup_body(job, namespace, 2, min_resources={topology.gpu: "2"})
        )
        others += [gang_pod(client, namespace, topology, f"{job}-{i}", job) for i in range(2)]
    wait_for(lambda: _bound(client, namespace, others))
    message = _condition(client, namespace, "held")
    assert "4 pod(s) gated" in message
    assert f"{namespace}/held-0" in message
    for name in held:
        pod = client.get(R.PODS, name, namespace)
        assert not pod["spec"].get("nodeName")
        # the API server's condition, left alone
        scheduled = {c["type"]: c for c in pod["status"].get("conditions", [])}["PodScheduled"]
        assert scheduled["reason"] == "SchedulingGated"

    for name in others:
        delete_pod(client, name, namespace)
    for name in held:
        client.patch(R.PODS, name, {"spec": {"schedulingGates": None}}, namespace)
    wait_for(lambda: _bound(client, namespace, held))
