"""Fixtures for the scheduler against the real control plane.

``topology`` creates labelled fake nodes (with a test-unique GPU resource, so nodes left by
other tests never fit) and HyperNodes, and deletes them afterwards. ``run_scheduler`` starts
a ``Scheduler`` on its own informer factory in a thread and stops it at teardown (or when the
test calls the returned stopper, to simulate a restart).
"""

from __future__ import annotations

import contextlib
import functools
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.builders import create_node, exact, hypernode_body, pod_body
from tests.fixtures import client, control_plane, namespace
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import NotFound
from volcano_py.kube.events import EventRecorder
from volcano_py.kube.informer import SharedInformerFactory
from volcano_py.scheduler.cache import Classifier
from volcano_py.scheduler.scheduler import Scheduler

__all__ = [
    "client",
    "control_plane",
    "gang_pod",
    "namespace",
    "run_scheduler",
    "scheduler_running",
    "topology",
    "wait_for",
]

JSON = dict[str, Any]


def wait_for(check: Callable[[], Any], timeout: float = 30.0, interval: float = 0.1) -> Any:
    """Poll ``check`` until it returns something truthy; fail with its last value."""
    deadline = time.monotonic() + timeout
    value = None
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out; last value: {value!r}")


class Topology:
    """Nodes and HyperNodes made for one test."""

    def __init__(self, client: KubeClient) -> None:
        self.client = client
        self.prefix = f"s{uuid.uuid4().hex[:6]}"
        self.gpu = f"test.volcano.sh/gpu-{self.prefix}"
        self.nodes: list[str] = []
        self.hypernodes: list[str] = []

    def node(self, name: str, gpus: int) -> str:
        full = f"{self.prefix}-{name}"
        create_node(
            self.client,
            full,
            labels={"test.volcano.sh/prefix": self.prefix},
            allocatable={"cpu": "16", "memory": "64Gi", "pods": "110", self.gpu: str(gpus)},
        )
        self.nodes.append(full)
        return full

    def hypernode(self, name: str, tier: int, members: list[JSON]) -> str:
        full = f"{self.prefix}-{name}"
        self.client.create(R.HYPERNODES, hypernode_body(full, tier, members))
        self.hypernodes.append(full)
        return full

    def cleanup(self) -> None:
        for name in self.hypernodes:
            with contextlib.suppress(NotFound):
                self.client.delete(R.HYPERNODES, name)
        for name in self.nodes:
            with contextlib.suppress(NotFound):
                self.client.delete(R.NODES, name)


def two_spines_of_two_racks(topo: Topology) -> dict[str, list[str]]:
    """Eight 2-GPU nodes, two per rack HyperNode, two racks per spine; rack -> its nodes."""
    nodes = [topo.node(f"n{i}", 2) for i in range(1, 9)]
    racks = {
        topo.hypernode(f"rack-{r}", 1, [exact(nodes[2 * r]), exact(nodes[2 * r + 1])]): nodes[
            2 * r : 2 * r + 2
        ]
        for r in range(4)
    }
    names = sorted(racks)
    for s in range(2):
        members = [exact(names[2 * s], "HyperNode"), exact(names[2 * s + 1], "HyperNode")]
        topo.hypernode(f"spine-{s}", 2, members)
    return racks


def gang_pod(
    client: KubeClient,
    ns: str,
    topo: Topology,
    name: str,
    group: str,
    labels: dict[str, str] | None = None,
) -> str:
    """A pod of PodGroup ``group`` asking for one of the topology's GPUs; its name."""
    client.create(
        R.PODS,
        pod_body(
            name,
            ns,
            requests={topo.gpu: "1", "cpu": "100m"},
            annotations={"scheduling.k8s.io/group-name": group},
            labels=labels,
        ),
    )
    return name


@pytest.fixture
def topology(client: KubeClient) -> Iterator[Topology]:
    """A per-test topology builder, cleaned up afterwards."""
    topo = Topology(client)
    yield topo
    topo.cleanup()


@pytest.fixture
def run_scheduler(client: KubeClient) -> Iterator[Callable[..., Callable[[], Scheduler]]]:
    """Start a scheduler; returns a function that stops it (also done at teardown).

    ``start(conf=None, configmap=None)``: a ``volcano-scheduler.conf`` text, and a
    ``(namespace, name)`` of a scheduler ConfigMap to watch for hot reload.
    """
    running: list[tuple[threading.Event, threading.Thread, SharedInformerFactory]] = []

    def start(
        conf: str | None = None, configmap: tuple[str, str] | None = None
    ) -> Callable[[], Scheduler]:
        informers = SharedInformerFactory(client)
        recorder = EventRecorder(client, "volcano")
        recorder.start()
        getter = None
        synced = None
        if configmap is not None:
            cms = informers.informer(
                R.CONFIGMAPS, namespace=configmap[0], field_selector=f"metadata.name={configmap[1]}"
            )
            getter = functools.partial(cms.store.get, f"{configmap[0]}/{configmap[1]}")
            synced = cms.has_synced
        scheduler = Scheduler(
            client,
            informers,
            conf,
            "volcano",
            recorder,
            schedule_period=0.2,
            configmap=getter,
            configmap_synced=synced,
        )
        informers.start()
        assert informers.wait_for_cache_sync(30)
        stop = threading.Event()
        thread = threading.Thread(target=scheduler.run, args=(stop,), name="scheduler:loop")
        thread.start()
        entry = (stop, thread, informers)
        running.append(entry)

        def stopper() -> Scheduler:
            stop.set()
            scheduler.cache.changed.set()
            thread.join(10)
            informers.shutdown()
            recorder.stop()
            if entry in running:
                running.remove(entry)
            return scheduler

        return stopper

    yield start
    for stop, thread, informers in list(running):
        stop.set()
        thread.join(10)
        informers.shutdown()


@contextlib.contextmanager
def scheduler_running(admin: KubeClient, implicit: Classifier | None = None) -> Iterator[Scheduler]:
    """A scheduler cycling every 0.2 s on its own informers until the block ends.

    Unlike ``run_scheduler``, the ``Scheduler`` is at hand while it runs (its counters).
    """
    informers = SharedInformerFactory(admin)
    scheduler = Scheduler(admin, informers, None, "volcano", schedule_period=0.2, implicit=implicit)
    informers.start()
    assert informers.wait_for_cache_sync(30)
    stop = threading.Event()
    thread = threading.Thread(target=scheduler.run, args=(stop,), name="scheduler:loop")
    thread.start()
    try:
        yield scheduler
    finally:
        stop.set()
        scheduler.cache.changed.set()
        thread.join(10)
        informers.shutdown()
