"""Fixtures for queue-controller against the real control plane.

``queue_controller`` runs a ``QueueController`` with its own informer factory and a real
event recorder on a thread, the way the manager runs it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from tests.fixtures import client, control_plane, namespace
from volcano_py.controllers.framework import ControllerOptions
from volcano_py.controllers.queue.controller import QueueController
from volcano_py.kube.client import KubeClient
from volcano_py.kube.events import EventRecorder
from volcano_py.kube.informer import SharedInformerFactory

__all__ = ["client", "control_plane", "namespace", "queue_controller"]


class RunningQueueController:
    """queue-controller on a thread, with its own informers and event recorder."""

    def __init__(self, client: KubeClient) -> None:
        self.factory = SharedInformerFactory(client)
        self.recorder = EventRecorder(client, "vc-controller-manager")
        self.recorder.start()
        self.controller = QueueController()
        self.controller.initialize(
            ControllerOptions(client=client, informers=self.factory, recorder=self.recorder)
        )
        self.stop_event = threading.Event()
        self.thread = threading.Thread(
            target=self.controller.run,
            args=(self.stop_event,),
            name="queue-controller",
            daemon=True,
        )
        self.thread.start()

    def stop(self) -> None:
        self.stop_event.set()
        self.thread.join(15)
        self.factory.shutdown()
        self.recorder.stop()


@pytest.fixture
def queue_controller(client: KubeClient) -> Iterator[RunningQueueController]:
    """A running queue-controller for one test."""
    running = RunningQueueController(client)
    yield running
    running.stop()
