"""The controller skeleton job-, pg- and queue-controller share: start-up order, helpers."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from volcano_py.api import resources as R
from volcano_py.controllers.framework import ControllerOptions
from volcano_py.controllers.skeleton import QueueController, Wiring, add_index, recorder_of
from volcano_py.kube.events import DiscardRecorder, FakeRecorder
from volcano_py.kube.informer import SharedInformerFactory


class Probe(QueueController[str]):
    controller_name = "probe-controller"

    def __init__(self) -> None:
        super().__init__()
        self.wired = 0
        self.closed = 0

    def wire(self, options: ControllerOptions) -> Wiring:
        self.wired += 1
        return [], []

    def sync(self, item: str) -> None:
        raise AssertionError("no work was queued")

    def close(self) -> None:
        self.closed += 1


def options() -> ControllerOptions:
    client: Any = object()
    return ControllerOptions(client=client, informers=SharedInformerFactory(client))


def test_run_before_initialize_names_the_controller() -> None:
    with pytest.raises(RuntimeError, match="probe-controller: run"):
        Probe().run(threading.Event())


def test_run_wires_once_runs_workers_until_stop_then_closes() -> None:
    probe = Probe()
    opts = options()
    probe.initialize(opts)
    assert probe.name == "probe-controller"
    assert probe.wired == 1
    assert probe.worker_count(opts) == opts.worker_threads
    stop = threading.Event()
    stop.set()  # the workers return at once
    probe.run(stop)
    assert probe.closed == 1


class StartProbe(Probe):
    """Queues one item once the caches are synced; its sync stops the controller."""

    def __init__(self, stop: threading.Event) -> None:
        super().__init__()
        self.stop = stop
        self.synced: list[str] = []

    def caches_synced(self) -> None:
        self.queue.add("at-start")

    def sync(self, item: str) -> None:
        self.synced.append(item)
        self.stop.set()


def test_work_queued_when_the_caches_sync_reaches_the_workers() -> None:
    stop = threading.Event()
    probe = StartProbe(stop)
    probe.initialize(options())
    assert len(probe.queue) == 0  # nothing is queued by wiring alone
    probe.run(stop)
    assert probe.synced == ["at-start"]
    assert probe.closed == 1


class NeverSynced:
    """An informer whose first list never arrives."""

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        return False


def test_caches_synced_is_skipped_when_stopped_before_the_caches_sync() -> None:
    stop = threading.Event()
    probe = StartProbe(stop)
    never_synced: Any = NeverSynced()
    probe.wire = lambda options: ([never_synced], [])  # type: ignore[method-assign]
    probe.initialize(options())
    stop.set()
    probe.run(stop)
    assert len(probe.queue) == 0
    assert probe.closed == 0


def test_add_index_keeps_the_first_index_of_a_name() -> None:
    informer = options().informers.informer(R.PODS)
    add_index(informer, "by-node", lambda pod: [pod["spec"]["nodeName"]])
    add_index(informer, "by-node", lambda pod: ["other"])  # a second wiring: no error
    informer.store.put("ns/p", {"metadata": {"name": "p"}, "spec": {"nodeName": "n1"}})
    assert informer.store.index_keys("by-node", "n1") == ["ns/p"]
    assert informer.store.index_keys("by-node", "other") == []


def test_recorder_of_is_the_options_recorder_or_one_that_discards() -> None:
    opts = options()
    assert isinstance(recorder_of(opts), DiscardRecorder)
    recorder = FakeRecorder()
    opts.recorder = recorder  # type: ignore[assignment]
    assert recorder_of(opts) is recorder


class Declared(QueueController[str]):
    """Wired by the skeleton's default ``wire``: its resources and its pod index."""

    controller_name = "declared-controller"
    resources = (R.PODS, R.PODGROUPS)
    cache_index = (R.PODS, "by-node", lambda pod: [pod["spec"]["nodeName"]])

    def connect(self, options: ControllerOptions, informers: list[Any]) -> list[Any]:
        self.connected = informers
        return []


def test_the_default_wire_hands_the_resources_informers_to_connect_with_the_index_added() -> None:
    opts = options()
    declared = Declared()
    declared.initialize(opts)
    pods, podgroups = opts.informers.informer(R.PODS), opts.informers.informer(R.PODGROUPS)
    assert declared.connected == [pods, podgroups]
    pods.store.put("ns/p", {"metadata": {"name": "p"}, "spec": {"nodeName": "n1"}})
    assert pods.store.index_keys("by-node", "n1") == ["ns/p"]
