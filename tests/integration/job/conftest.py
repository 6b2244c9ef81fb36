"""Fixtures for job-controller against the real control plane (kube-controller-manager on).

``job_controller`` runs a ``JobController`` with its own informer factory and a real event
recorder on a thread, the way the manager runs it. The scheduler fixtures (``topology``,
``run_scheduler``) come from the scheduler's integration tests: vcjobs need the scheduler to
move their PodGroup to Inqueue before any pod exists. ``job_cluster`` is the opening most
Job tests share (racks, scheduler, job-controller); ``vcjob``, ``job_pods`` and ``phase`` build
and read their Jobs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.fixtures import RunningController, client, control_plane, namespace
from tests.integration.scheduler.conftest import (
    Topology,
    run_scheduler,
    topology,
    two_spines_of_two_racks,
)
from volcano_py.api import resources as R
from volcano_py.controllers.job import JobController
from volcano_py.kube.client import KubeClient
from volcano_py.scheduler.scheduler import Scheduler

__all__ = [
    "client",
    "control_plane",
    "job_cluster",
    "job_controller",
    "namespace",
    "run_scheduler",
    "topology",
]

JSON = dict[str, Any]


def vcjob(name: str, ns: str, topo: Topology, *, replicas: int, min_available: int,
          tier: int, partition: JSON | None = None, **spec: Any) -> JSON:  # fmt: skip
    task: JSON = {
        "name": "t0",
        "replicas": replicas,
        "template": {
            "spec": {
                "containers": [{
                    "name": "c0", "image": "nginx:latest",
                    "resources": {"requests": {topo.gpu: "1", "cpu": "100m"},
                                  "limits": {topo.gpu: "1"}},
                }],
            }
        },
    }  # fmt: skip
    if partition is not None:
        task["partitionPolicy"] = partition
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "schedulerName": "volcano",
            "minAvailable": min_available,
            "networkTopology": {"mode": "hard", "highestTierAllowed": tier},
            "tasks": [task],
            **spec,
        },
    }


def job_pods(client: KubeClient, ns: str, name: str) -> list[JSON]:
    items = client.list(R.PODS, ns, label_selector=f"volcano.sh/job-name={name}")["items"]
    return sorted(items, key=lambda p: p["metadata"]["name"])


def phase(client: KubeClient, ns: str, name: str) -> str:
    job = client.get(R.VCJOBS, name, ns)
    return str(((job.get("status") or {}).get("state") or {}).get("phase", ""))


class RunningJobController(RunningController[JobController]):
    """job-controller on a thread, with its own informers and event recorder."""

    def __init__(self, client: KubeClient) -> None:
        super().__init__(client, JobController, "job-controller")


@pytest.fixture
def job_controller(client: KubeClient) -> Iterator[RunningJobController]:
    """A running job-controller for one test."""
    running = RunningJobController(client)
    yield running
    running.stop()


@pytest.fixture
def job_cluster(
    namespace: str,  # first, so it is deleted after the controller and scheduler stop
    topology: Topology,
    run_scheduler: Callable[..., Callable[[], Scheduler]],
    job_controller: RunningJobController,
) -> dict[str, list[str]]:
    """Two spines of two racks of 2-GPU nodes, a scheduler and the job-controller running.

    The opening most Job tests share; returns rack -> its nodes.
    """
    racks = two_spines_of_two_racks(topology)
    run_scheduler()
    return racks
