"""``make run``'s local cluster behaves like a real one (``ControlPlane(like_a_cluster=True,
workload_api=True)``).

Its nodes carry the labels a kubelet sets and ``ephemeral-storage``; kube-scheduler runs as the
default scheduler, so a Deployment without ``schedulerName`` runs; kube-controller-manager runs
its whole default controller set (a DaemonSet gets its pods). The tests' own harness keeps the
short controller list and no default scheduler. Kubernetes' own Workload API is on, as
``make run`` turns it on: its PodGroups are served and a Job with ``spec.scheduling`` gets one.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from devcluster.fleet import fleet
from devcluster.harness import ControlPlane
from devcluster.nodes import wait_nodes_up, wait_until
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient

JSON = dict[str, Any]
NODES = 2


@pytest.fixture(scope="module")
def cluster() -> Iterator[KubeClient]:
    with ControlPlane(like_a_cluster=True, workload_api=True) as plane:
        client = KubeClient(plane.admin_config())
        bodies = fleet(NODES)
        for body in bodies:
            client.create(R.NODES, body)
        wait_nodes_up(client, [b["metadata"]["name"] for b in bodies], 60)
        yield client
        client.close()


def _template(app: str) -> JSON:
    return {
        "metadata": {"labels": {"app": app}},
        "spec": {
            "nodeSelector": {"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"},
            "containers": [
                {
                    "name": "main",
                    "image": "registry.k8s.io/pause:3.9",
                    "resources": {"requests": {"cpu": "100m", "ephemeral-storage": "1Gi"}},
                }
            ],
        },
    }


def _running(client: KubeClient, app: str, count: int) -> list[JSON]:
    def check() -> list[JSON] | None:
        pods = client.list_all(R.PODS, "default", label_selector=f"app={app}")
        running = [p for p in pods if (p.get("status") or {}).get("phase") == "Running"]
        return running if len(running) >= count else None

    return list(wait_until(check, 90, f"{count} pods of {app} Running"))


def test_nodes_carry_the_well_known_labels_and_ephemeral_storage(cluster: KubeClient) -> None:
    for node in cluster.list_all(R.NODES):
        name = node["metadata"]["name"]
        labels = node["metadata"]["labels"]
        assert labels["kubernetes.io/hostname"] == name
        assert labels["kubernetes.io/os"] == "linux"
        assert labels["kubernetes.io/arch"] == "amd64"
        assert node["status"]["allocatable"]["ephemeral-storage"] == "500Gi"


def test_a_deployment_without_a_scheduler_name_runs(cluster: KubeClient) -> None:
    body = {
        "metadata": {"name": "plain"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "plain"}},
            "template": _template("plain"),
        },
    }
    cluster.create(R.DEPLOYMENTS, body, "default")
    pods = _running(cluster, "plain", 2)
    assert all(p["spec"]["schedulerName"] == "default-scheduler" for p in pods)
    assert all(p["spec"].get("nodeName") for p in pods)


def test_kube_controller_manager_runs_its_default_controllers(cluster: KubeClient) -> None:
    body = {
        "metadata": {"name": "agent"},
        "spec": {"selector": {"matchLabels": {"app": "agent"}}, "template": _template("agent")},
    }
    cluster.create(R.DAEMONSETS, body, "default")
    pods = _running(cluster, "agent", NODES)
    assert len({p["spec"]["nodeName"] for p in pods}) == NODES


def test_the_workload_api_is_on_and_a_job_with_spec_scheduling_gets_its_podgroup(
    cluster: KubeClient,
) -> None:
    body = {
        "metadata": {"name": "gang-job", "namespace": "default"},
        "spec": {
            "parallelism": 2,
            "completions": 2,
            "scheduling": {"schedulingPolicy": {"gang": {"minCount": 2}}},
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}],
                }
            },
        },
    }
    cluster.create(R.JOBS, body, "default")
    groups = wait_until(
        lambda: cluster.list(R.NATIVE_PODGROUPS, "default")["items"], 60, "native PodGroup"
    )
    assert groups[0]["spec"]["schedulingPolicy"]["gang"]["minCount"] == 2
