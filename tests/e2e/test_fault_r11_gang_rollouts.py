"""R11: gang Deployments survive rollouts and scale-downs (Volcano #4739).

A nearly full cluster (16 GPUs, 14 in use): a gang Deployment of 8 one-GPU pods with
``scheduling.volcano.sh/group-min-member: "8"`` next to a 6-GPU filler. Its template is then
changed (a rolling update with the default 25% maxSurge / maxUnavailable). In Volcano the new
ReplicaSet's PodGroup asks for all 8 pods while the rollout creates 2, so it deadlocks. Here a
ReplicaSet's gang is ``min(group-min-member, spec.replicas)``: each surge step is a gang of the
pods it asks for, and the final ReplicaSet is a gang of 8 again. A ``Recreate`` rollout and a
scale-down must complete too.

kwok plays the kubelets (``devcluster/kwok.py``): bound pods go Running and Ready,
and graceful deletions complete, so the Deployment controller sees real availability.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from devcluster.harness import ControlPlane
from tests.builders import create_node, deployment_body
from tests.e2e.conftest import ManagerProcess, start_manager, stop_manager
from tests.e2e.faults import wait_until
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient

pytestmark = pytest.mark.timeout(300)

NS = "r11"
GPU = {"cpu": "32", "memory": "64Gi", "pods": "110", "nvidia.com/gpu": "4"}
GANG = {"scheduling.volcano.sh/group-min-member": "8"}


@pytest.fixture(scope="module")
def manager(
    plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ManagerProcess]:
    admin = KubeClient(plane.admin_config())
    admin.create(R.NAMESPACES, {"metadata": {"name": NS}})
    for i in range(4):
        create_node(admin, f"r11-n{i}", allocatable=GPU)
    process = start_manager(plane, tmp_path_factory.mktemp("r11"))
    yield process
    assert stop_manager(process) == 0, process.log()[-4000:]


def rolled_out(client: KubeClient, name: str, replicas: int) -> bool:
    d = client.get(R.DEPLOYMENTS, name, NS)
    status = d.get("status") or {}
    return (
        status.get("observedGeneration", 0) >= d["metadata"]["generation"]
        and status.get("updatedReplicas") == replicas
        and status.get("availableReplicas") == replicas
        and status.get("replicas") == replicas
    )


def final_gang(client: KubeClient, name: str) -> tuple[int, int]:
    """(minMember of the newest ReplicaSet's PodGroup, its pods bound)."""
    sets = [
        rs
        for rs in client.list_all(R.REPLICASETS, NS)
        if rs["metadata"]["ownerReferences"][0]["name"] == name and rs["spec"].get("replicas")
    ]
    (newest,) = sets
    group = client.get(R.PODGROUPS, f"podgroup-{newest['metadata']['uid']}", NS)
    bound = [
        p
        for p in client.list_all(R.PODS, NS)
        if p["metadata"]["ownerReferences"][0]["uid"] == newest["metadata"]["uid"]
        and p["spec"].get("nodeName")
    ]
    return int(group["spec"]["minMember"]), len(bound)


def test_gang_deployment_rolls_out_recreates_and_scales_down_on_a_nearly_full_cluster(
    manager: ManagerProcess, admin: KubeClient
) -> None:
    figures: dict[str, float] = {}
    admin.create(R.DEPLOYMENTS, deployment_body("filler", NS, 6, requests={"nvidia.com/gpu": "1"}))
    gang = deployment_body("gang", NS, 8, annotations=GANG, requests={"nvidia.com/gpu": "1"})
    admin.create(R.DEPLOYMENTS, gang)
    wait_until(lambda: rolled_out(admin, "gang", 8), 90, "the gang Deployment runs")
    wait_until(lambda: rolled_out(admin, "filler", 6), 90, "the filler runs")
    assert final_gang(admin, "gang") == (8, 8)

    # Rolling update: 2 GPUs free, maxSurge 2, maxUnavailable 2.
    started = time.monotonic()
    template_change = {"spec": {"template": {"metadata": {"labels": {"rev": "2"}}}}}
    admin.patch(R.DEPLOYMENTS, "gang", template_change, NS)
    wait_until(lambda: rolled_out(admin, "gang", 8), 120, "the rolling update completes")
    figures["rolling update (8 pods, 2 GPUs free)"] = time.monotonic() - started
    assert final_gang(admin, "gang") == (8, 8)

    # Recreate: the old ReplicaSet goes to 0 first, the new one is a full gang at once.
    started = time.monotonic()
    recreate = {
        "spec": {
            "strategy": {"type": "Recreate", "rollingUpdate": None},
            "template": {"metadata": {"labels": {"rev": "3"}}},
        }
    }
    admin.patch(R.DEPLOYMENTS, "gang", recreate, NS)
    wait_until(lambda: rolled_out(admin, "gang", 8), 120, "the Recreate rollout completes")
    figures["Recreate (8 pods)"] = time.monotonic() - started
    assert final_gang(admin, "gang") == (8, 8)

    # Scale down below minMember: the remaining pods are a gang of 4, still Running.
    started = time.monotonic()
    admin.patch(R.DEPLOYMENTS, "gang", {"spec": {"replicas": 4}}, NS)
    wait_until(lambda: rolled_out(admin, "gang", 4), 60, "the scale-down completes")
    figures["scale-down 8 -> 4"] = time.monotonic() - started
    wait_until(lambda: final_gang(admin, "gang") == (4, 4), 30, "the gang follows the replicas")
    print("R11: " + "; ".join(f"{k} {v:.1f}s" for k, v in figures.items()))
