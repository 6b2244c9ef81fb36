"""Fixtures for queue-controller against the real control plane.

``queue_controller`` runs a ``QueueController`` with its own informer factory and a real
event recorder on a thread, the way the manager runs it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fixtures import RunningController, client, control_plane, namespace
from volcano_py.controllers.queue.controller import QueueController
from volcano_py.kube.client import KubeClient

__all__ = ["client", "control_plane", "namespace", "queue_controller"]


class RunningQueueController(RunningController[QueueController]):
    """queue-controller on a thread, with its own informers and event recorder."""

    def __init__(self, client: KubeClient) -> None:
        super().__init__(client, QueueController, "queue-controller")


@pytest.fixture
def queue_controller(client: KubeClient) -> Iterator[RunningQueueController]:
    """A running queue-controller for one test."""
    running = RunningQueueController(client)
    yield running
    running.stop()
