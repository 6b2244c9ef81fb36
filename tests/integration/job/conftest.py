"""Fixtures for job-controller against the real control plane (kube-controller-manager on).

``job_controller`` runs a ``JobController`` with its own informer factory and a real event
recorder on a thread, the way the manager runs it. The scheduler fixtures (``topology``,
``run_scheduler``) come from the scheduler's integration tests: vcjobs need the scheduler to
move their PodGroup to Inqueue before any pod exists.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fixtures import RunningController, client, control_plane, namespace
from tests.integration.scheduler.conftest import run_scheduler, topology
from volcano_py.controllers.job import JobController
from volcano_py.kube.client import KubeClient

__all__ = ["client", "control_plane", "job_controller", "namespace", "run_scheduler", "topology"]


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
