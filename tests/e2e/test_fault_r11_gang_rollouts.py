"""R11: gang Deployments survive rollouts and scale-downs (Volcano #4739).

A nearly full cluster (16 GPUs, 14 in use): a gang Deployment of 8 one-GPU pods with
``scheduling.volcano.sh/group-min-member: "8"`` next to a 6-GPU filler. Its template is then
changed (a rolling update with the default 25% maxSurge / maxUnavailable). In Volcano the new
ReplicaSet's PodGroup asks for all 8 pods while the rollout creates 2, so it deadlocks. Here a
ReplicaSet's gang is ``min(group-min-member, spec.replicas)``: each surge step is a gang of the
pods it asks for, and the final ReplicaSet is a gang of 8 again. A ``Recreate`` rollout and a
scale-down must complete too.

This control plane has no kubelets, so ``StandInKubelet`` plays their part for this
namespace only: it marks bound pods Running and Ready and completes graceful deletions.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.builders import create_node, deployment_body, force_delete_pod
from tests.controlplane.harness import ControlPlane
from tests.e2e.conftest import ManagerProcess, start_manager, stop_manager
from tests.e2e.faults import wait_until
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import ApiError

pytestmark = pytest.mark.timeout(300)

NS = "r11"
GPU = {"cpu": "32", "memory": "64Gi", "pods": "110", "nvidia.com/gpu": "4"}
GANG = {"scheduling.volcano.sh/group-min-member": "8"}


class StandInKubelet:
    """Marks bound pods of one namespace Running/Ready and finishes their deletion."""

    def __init__(self, client: KubeClient, namespace: str) -> None:
        self.client = client
        self.namespace = namespace
        self.stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="r11-kubelet", daemon=True)

    def _run(self) -> None:
        deadline = time.monotonic() + 280  # bounded even if never stopped
        while not self.stop.is_set() and time.monotonic() < deadline:
            try:
                for pod in self.client.list_all(R.PODS, self.namespace):
                    self._tend(pod)
            except ApiError:
                pass
            self.stop.wait(0.2)

    def _tend(self, pod: dict[str, Any]) -> None:
        meta, spec = pod["metadata"], pod["spec"]
        if meta.get("deletionTimestamp"):
            with contextlib.suppress(ApiError):
                force_delete_pod(self.client, meta["name"], self.namespace)
            return
        if not spec.get("nodeName") or (pod.get("status") or {}).get("phase") == "Running":
            return
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        ready = [
            {"type": t, "status": "True", "lastTransitionTime": now}
            for t in ("Initialized", "PodScheduled", "ContainersReady", "Ready")
        ]
        status = {"phase": "Running", "conditions": ready, "startTime": now}
        self.client.patch(
            R.PODS, meta["name"], {"status": status}, self.namespace, subresource="status"
        )

    def __enter__(self) -> StandInKubelet:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self._thread.join(5)


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
    with StandInKubelet(admin, NS):
        admin.create(
            R.DEPLOYMENTS, deployment_body("filler", NS, 6, requests={"nvidia.com/gpu": "1"})
        )
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
