"""``examples/vcjob/``: Volcano's own vcjobs (the network-topology guide's three and
``example/job.yaml``), applied unchanged with kubectl, run under job-controller + the scheduler.

The guide's jobs ask for whole 4-CPU pods and all live in ``default`` under one name, so each
is applied, checked and deleted in turn. The fleet is four racks of two 16-CPU nodes (four
such pods per node); a hard tier-1 gang must land inside one rack.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from devcluster.harness import ControlPlane
from tests.integration.job.conftest import RunningJobController, job_pods, phase
from tests.integration.job.test_job_controller import _gone, rack_of
from tests.integration.scheduler.conftest import Topology, two_spines_of_two_racks, wait_for
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.scheduler.scheduler import Scheduler

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "vcjob"
JSON = dict[str, Any]


def kubectl(cp: ControlPlane, *args: str) -> None:
    result = subprocess.run(
        [str(cp.binaries["kubectl"]), "--kubeconfig", str(cp.kubeconfig), *args],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr


def run_example(client: KubeClient, cp: ControlPlane, path: Path) -> tuple[JSON, list[JSON]]:
    """Apply one example; wait until its Job runs its ``minAvailable`` pods; return them."""
    job = yaml.safe_load(path.read_text())
    name, ns = job["metadata"]["name"], job["metadata"].get("namespace", "default")
    kubectl(cp, "apply", "-n", ns, "-f", str(path))

    def running() -> list[JSON] | None:
        pods = [p for p in job_pods(client, ns, name) if p["status"].get("phase") == "Running"]
        ok = phase(client, ns, name) == "Running" and len(pods) >= job["spec"]["minAvailable"]
        return pods if ok else None

    pods: list[JSON] = wait_for(running, timeout=120)
    return client.get(R.VCJOBS, name, ns), pods


def delete_example(client: KubeClient, cp: ControlPlane, path: Path, job: JSON) -> None:
    name, ns, uid = job["metadata"]["name"], job["metadata"]["namespace"], job["metadata"]["uid"]
    kubectl(cp, "delete", "-n", ns, "-f", str(path), "--wait=true")
    wait_for(lambda: not job_pods(client, ns, name), timeout=90)
    wait_for(lambda: _gone(client, R.PODGROUPS, f"{name}-{uid}", ns), timeout=60)


def test_the_guides_vcjobs_run_unchanged(
    client: KubeClient, control_plane: ControlPlane, topology: Topology,
    run_scheduler: Callable[..., Callable[[], Scheduler]],
    job_controller: RunningJobController,
) -> None:  # fmt: skip
    racks = two_spines_of_two_racks(topology)
    run_scheduler()

    hard = EXAMPLES / "network-topology-job-hard-tier1.yaml"
    job, pods = run_example(client, control_plane, hard)
    assert {rack_of(racks, p["spec"]["nodeName"]) for p in pods} == {
        rack_of(racks, pods[0]["spec"]["nodeName"])
    }
    pg = client.get(R.PODGROUPS, f"network-topology-job-{job['metadata']['uid']}", "default")
    assert pg["spec"]["networkTopology"] == {"mode": "hard", "highestTierAllowed": 1}
    assert pg["spec"]["minMember"] == 4
    delete_example(client, control_plane, hard, job)

    partitioned = EXAMPLES / "network-topology-job-partitioned.yaml"
    job, pods = run_example(client, control_plane, partitioned)
    wait_for(lambda: len([p for p in job_pods(client, "default", "network-topology-job")
                          if p["status"].get("phase") == "Running"]) == 8, timeout=120)  # fmt: skip
    by_partition: dict[str, set[str]] = {}
    for p in job_pods(client, "default", "network-topology-job"):
        by_partition.setdefault(p["metadata"]["labels"]["volcano.sh/partition-id"], set()).add(
            rack_of(racks, p["spec"]["nodeName"])
        )
    assert sorted(by_partition) == ["0", "1"]
    assert all(len(r) == 1 for r in by_partition.values()), by_partition
    delete_example(client, control_plane, partitioned, job)

    free = EXAMPLES / "network-topology-job-no-topology.yaml"
    job, pods = run_example(client, control_plane, free)
    assert len(pods) == 2
    delete_example(client, control_plane, free, job)


def test_volcanos_example_job_runs_with_its_plugins_and_cleans_up_with_the_job(
    client: KubeClient, control_plane: ControlPlane, namespace: str, topology: Topology,
    run_scheduler: Callable[..., Callable[[], Scheduler]],
    job_controller: RunningJobController,
) -> None:  # fmt: skip
    two_spines_of_two_racks(topology)
    run_scheduler()
    path = EXAMPLES / "job.yaml"
    kubectl(control_plane, "apply", "-n", namespace, "-f", str(path))
    wait_for(lambda: phase(client, namespace, "test-job") == "Running", timeout=120)
    pods = job_pods(client, namespace, "test-job")
    assert len(pods) == 6
    first = pods[0]
    assert first["spec"]["hostname"] == first["metadata"]["name"]
    assert first["spec"]["subdomain"] == "test-job"
    env = {e["name"] for e in first["spec"]["containers"][0]["env"]}
    assert {"VC_TASK_INDEX", "VK_TASK_INDEX", "VC_DEFAULT_NGINX_HOSTS"} <= env
    made = {
        (R.SERVICES, "test-job"), (R.CONFIGMAPS, "test-job-svc"), (R.SECRETS, "test-job-ssh"),
        (R.NETWORKPOLICIES, "test-job"),
    }  # fmt: skip
    for resource, name in made:
        client.get(resource, name, namespace)
    hosts = client.get(R.CONFIGMAPS, "test-job-svc", namespace)["data"]
    assert hosts["VC_DEFAULT_NGINX_NUM"] == "6"
    client.delete(R.VCJOBS, "test-job", namespace)
    wait_for(lambda: all(_gone(client, r, n, namespace) for r, n in made), timeout=60)
    wait_for(lambda: not job_pods(client, namespace, "test-job"), timeout=90)
