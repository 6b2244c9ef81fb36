"""Fixtures for the hyperNode-controller against the real control plane.

``controller_runner`` starts a real ``HyperNodeController`` (its own informer factory and
Event recorder) on a thread, reading its ConfigMap from the test's namespace; stopping and
starting again is a controller restart. HyperNodes owned by discovery sources are removed
before and after each test, so tests sharing the session's cluster do not see each other's.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.builders import wait_until
from tests.fixtures import RunningController
from volcano_py.api import resources as R
from volcano_py.controllers.hypernode import HyperNodeController
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import NotFound

CONFIGMAP = "volcano-controller-configmap"
SOURCE_LABEL = "volcano.sh/network-topology-source"
JSON = dict[str, Any]
__all__ = ["wait_until"]  # the tests here import it from this module


class Running(RunningController[HyperNodeController]):
    """One running controller; ``stop`` fails the test when its thread does not end."""

    join_s = 30.0

    def __init__(self, client: KubeClient, namespace: str) -> None:
        super().__init__(
            client,
            lambda: HyperNodeController(configmap=(namespace, CONFIGMAP)),
            "test:hypernode",
            component="hyperNode-controller",
        )

    def stop(self) -> None:
        super().stop()
        assert not self.thread.is_alive(), "controller did not stop"


@pytest.fixture
def controller_runner(client: KubeClient, namespace: str) -> Iterator[Callable[[], Running]]:
    started: list[Running] = []

    def start() -> Running:
        running = Running(client, namespace)
        started.append(running)
        return running

    yield start
    for running in started:
        if not running.stop_event.is_set():
            running.stop()


def delete_discovered(client: KubeClient) -> None:
    for obj in client.list_all(R.HYPERNODES, label_selector=SOURCE_LABEL):
        with contextlib.suppress(NotFound):
            client.delete(R.HYPERNODES, obj["metadata"]["name"])


@pytest.fixture(autouse=True)
def clean_hypernodes(client: KubeClient) -> Iterator[None]:
    delete_discovered(client)
    yield
    delete_discovered(client)


@pytest.fixture
def key_prefix() -> str:
    """A label-key prefix no other test uses."""
    return f"t{uuid.uuid4().hex[:8]}.example.com"


@pytest.fixture
def nodes(client: KubeClient) -> Iterator[list[str]]:
    """Names of Nodes the test created; deleted afterwards."""
    created: list[str] = []
    yield created
    for name in created:
        with contextlib.suppress(NotFound):
            client.delete(R.NODES, name)


def put_configmap(client: KubeClient, namespace: str, text: str) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": CONFIGMAP, "namespace": namespace},
        "data": {"volcano-controller.conf": text},
    }
    try:
        current = client.get(R.CONFIGMAPS, CONFIGMAP, namespace)
    except NotFound:
        client.create(R.CONFIGMAPS, body)
        return
    body["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
    client.update(R.CONFIGMAPS, body)


def discovered(client: KubeClient, source: str) -> dict[str, JSON]:
    return {
        obj["metadata"]["name"]: obj
        for obj in client.list_all(R.HYPERNODES, label_selector=f"{SOURCE_LABEL}={source}")
    }


def events_about(client: KubeClient, namespace: str, name: str) -> list[JSON]:
    return client.list_all(R.EVENTS, namespace, field_selector=f"involvedObject.name={name}")
