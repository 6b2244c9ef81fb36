"""Fixtures for pg-controller against the real control plane (kube-controller-manager on).

``pg_controller`` runs a ``PodGroupController`` with its own informer factory and a real
event recorder on a thread, the way the manager runs it; ``.restart()`` stops it and starts
a fresh one (new caches, new queue), as a restarted manager would. ``kubectl`` applies
manifests with the control plane's own kubectl binary.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import yaml

from devcluster.harness import ControlPlane
from tests import fixtures
from tests.fixtures import client, control_plane, namespace
from volcano_py.controllers.podgroup import PodGroupController
from volcano_py.kube.client import KubeClient

__all__ = ["client", "control_plane", "kubectl", "namespace", "pg_controller", "wait_until"]

JSON = dict[str, Any]


def wait_until(predicate: Callable[[], Any], timeout: float = 30.0, what: str = "") -> Any:
    """Poll ``predicate`` until it returns something truthy; return that."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met in {timeout}s: {what}")
        time.sleep(0.05)


class RunningController(fixtures.RunningController[PodGroupController]):
    """pg-controller on a thread, with its own informers and event recorder."""

    def __init__(self, client: KubeClient, scheduler_names: tuple[str, ...] = ("volcano",)):
        super().__init__(
            client,
            PodGroupController,
            "pg-controller",
            component="pg-controller",
            scheduler_names=scheduler_names,
            worker_threads_for_podgroup=4,
        )


@pytest.fixture
def pg_controller(client: KubeClient) -> Iterator[RunningController]:
    """A running pg-controller for one test."""
    running = RunningController(client)
    yield running
    running.stop()


@pytest.fixture
def kubectl(control_plane: ControlPlane) -> Callable[..., str]:
    """``kubectl(*args, manifest=None)``: run the control plane's kubectl; returns stdout."""
    binary = str(control_plane.binaries["kubectl"])

    def run(*args: str, manifest: JSON | None = None) -> str:
        stdin = yaml.safe_dump(manifest) if manifest is not None else None
        result = subprocess.run(
            [binary, "--kubeconfig", str(control_plane.kubeconfig), *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed: {result.stderr}")
        return result.stdout

    return run
