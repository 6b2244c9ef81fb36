"""Fixtures for job-controller against the real control plane (kube-controller-manager on).

``job_controller`` runs a ``JobController`` with its own informer factory and a real event
recorder on a thread, the way the manager runs it. The scheduler fixtures (``topology``,
``run_scheduler``) come from the scheduler's integration tests: vcjobs need the scheduler to
move their PodGroup to Inqueue before any pod exists.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from tests.fixtures import client, control_plane, namespace
from tests.integration.scheduler.conftest import run_scheduler, topology
from volcano_py.controllers.framework import ControllerOptions
from volcano_py.controllers.job import JobController
from volcano_py.kube.client import KubeClient
from volcano_py.kube.events import EventRecorder
from volcano_py.kube.informer import SharedInformerFactory

__all__ = ["client", "control_plane", "job_controller", "namespace", "run_scheduler", "topology"]


class RunningJobController:
    """job-controller on a thread, with its own informers and event recorder."""

    def __init__(self, client: KubeClient) -> None:
        self.factory = SharedInformerFactory(client)
        self.recorder = EventRecorder(client, "vc-controller-manager")
        self.recorder.start()
        self.controller = JobController()
        self.controller.initialize(
            ControllerOptions(client=client, informers=self.factory, recorder=self.recorder)
        )
        self.stop_event = threading.Event()
        self.thread = threading.Thread(
            target=self.controller.run, args=(self.stop_event,), name="job-controller", daemon=True
        )
        self.thread.start()

    def stop(self) -> None:
        self.stop_event.set()
        self.thread.join(15)
        self.factory.shutdown()
        self.recorder.stop()


@pytest.fixture
def job_controller(client: KubeClient) -> Iterator[RunningJobController]:
    """A running job-controller for one test."""
    running = RunningJobController(client)
    yield running
    running.stop()
