"""A vcjob that selects nodes by the labels a kubelet sets runs, its ``dependsOn`` chain too.

Volcano's ``task-start-dependency`` example is this shape: three tasks (1, 5 and 5 pods), each
started once the one before it runs, every pod with ``nodeSelector: kubernetes.io/os: linux``.
It stayed Pending on nodes without the well-known labels; the dev cluster's nodes
(``devcluster.nodes.well_known_labels``) carry them, as a kubelet's do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from devcluster.nodes import create_node, well_known_labels
from tests.integration.job.conftest import RunningJobController, job_pods, phase
from tests.integration.scheduler.conftest import Topology, wait_for
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.scheduler.scheduler import Scheduler

JSON = dict[str, Any]


def _task(name: str, replicas: int, after: str | None) -> JSON:
    task: JSON = {
        "name": name,
        "replicas": replicas,
        "template": {
            "spec": {
                "nodeSelector": {"kubernetes.io/os": "linux"},
                "restartPolicy": "OnFailure",
                "containers": [
                    {
                        "name": "nginx",
                        "image": "nginx",
                        "resources": {"requests": {"cpu": "100m"}},
                    }
                ],
            }
        },
    }
    if after:
        task["dependsOn"] = {"name": [after]}
    return task


def test_a_dependency_chain_selecting_the_os_label_runs_on_labelled_nodes(
    client: KubeClient,
    namespace: str,
    topology: Topology,
    run_scheduler: Callable[..., Callable[[], Scheduler]],
    job_controller: RunningJobController,
) -> None:
    nodes = [f"{topology.prefix}-os-{i}" for i in range(2)]
    for name in nodes:
        create_node(
            client,
            name,
            labels=well_known_labels(name),
            allocatable={"cpu": "8", "memory": "16Gi", "pods": "110"},
        )
        topology.nodes.append(name)  # deleted with the test's topology
    run_scheduler()
    job = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "chain"},
        "spec": {
            "schedulerName": "volcano",
            "queue": "default",
            "minAvailable": 1,
            "tasks": [
                _task("first", 1, None),
                _task("second", 5, "first"),
                _task("third", 5, "second"),
            ],
        },
    }
    client.create(R.VCJOBS, job, namespace)

    def all_running() -> list[JSON] | None:
        pods = [
            p for p in job_pods(client, namespace, "chain") if p["status"].get("phase") == "Running"
        ]
        return pods if len(pods) == 11 else None

    pods: list[JSON] = wait_for(all_running, timeout=180)
    assert {p["spec"]["nodeName"] for p in pods} <= set(nodes)
    assert wait_for(lambda: phase(client, namespace, "chain") == "Running", timeout=60)
