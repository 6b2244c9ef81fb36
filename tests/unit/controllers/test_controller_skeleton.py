"""The controller skeleton job-controller and pg-controller share: its start-up order."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from volcano_py.controllers.framework import ControllerOptions
from volcano_py.controllers.skeleton import QueueController, Wiring
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
