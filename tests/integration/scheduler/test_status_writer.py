"""One status writer per PodGroup: the scheduler's status writes never race the controllers'.

Volcano's PodGroup CRD has no status subresource; the podgroup and job controllers PUT whole
objects to change spec and annotations. The scheduler's status writes are merge patches
without a ``resourceVersion``, so a controller writing in a loop makes none of them conflict.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import pytest

from tests.builders import podgroup_body
from tests.integration.scheduler.conftest import Topology, gang_pod, scheduler_running, wait_for
from volcano_py.api import JSON
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import Conflict
from volcano_py.scheduler.scheduler import Scheduler
from volcano_py.scheduler.writer import KubeWriter

WRITER_LOG = "volcano_py.scheduler.writer"


class ControllerLike:
    """Updates a PodGroup's annotations in a loop (GET + PUT), as a controller does."""

    def __init__(self, client: KubeClient, namespace: str, name: str) -> None:
        self.client, self.namespace, self.name = client, namespace, name
        self.writes = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="test:controller-like")

    def _run(self) -> None:
        while not self.stop.is_set():
            pg = self.client.get(R.PODGROUPS, self.name, self.namespace)
            pg["metadata"].setdefault("annotations", {})["test.volcano.sh/tick"] = str(self.writes)
            try:
                self.client.update(R.PODGROUPS, pg)
                self.writes += 1
            except Conflict:  # the controller's own retry; the scheduler's writes must not be
                pass

    def __enter__(self) -> ControllerLike:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        self.thread.join(10)


def _status(client: KubeClient, ns: str, name: str) -> JSON:
    status: JSON = client.get(R.PODGROUPS, name, ns).get("status") or {}
    return status


def test_scheduler_status_writes_never_conflict_with_a_spec_writer(
    client: KubeClient,
    namespace: str,
    topology: Topology,
    run_scheduler: Callable[[], Callable[[], Scheduler]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger=WRITER_LOG)
    node = topology.node("n1", 2)
    client.create(R.PODGROUPS, podgroup_body("busy", namespace, 2))
    run_scheduler()
    with ControllerLike(client, namespace, "busy") as controller:
        gang_pod(client, namespace, topology, "busy-0", "busy")

        def waits() -> str:  # the scheduler's decision: 1 of 2 pods, the gang waits
            conditions = _status(client, namespace, "busy").get("conditions") or ()
            return next((c["message"] for c in conditions if c["type"] == "Unschedulable"), "")

        wait_for(waits)
        wait_for(lambda: controller.writes >= 20)
        gang_pod(client, namespace, topology, "busy-1", "busy")
        wait_for(
            lambda: all(
                client.get(R.PODS, f"busy-{i}", namespace)["spec"].get("nodeName") == node
                for i in range(2)
            )
        )
        wait_for(lambda: _status(client, namespace, "busy").get("phase") == "Running")
        start = controller.writes
        wait_for(lambda: controller.writes >= start + 20)  # the spec writer kept going
    pg = client.get(R.PODGROUPS, "busy", namespace)
    assert pg["status"]["phase"] == "Running"
    assert pg["metadata"]["annotations"]["test.volcano.sh/tick"]  # its writes stayed
    failed = [r.getMessage() for r in caplog.records if r.name == WRITER_LOG]
    assert [m for m in failed if m.startswith("podgroup")] == []


def test_a_status_computed_for_a_deleted_podgroup_is_not_written_to_its_successor(
    client: KubeClient, namespace: str
) -> None:
    old = client.create(R.PODGROUPS, podgroup_body("again", namespace, 1))
    client.delete(R.PODGROUPS, "again", namespace)  # no finalizers: gone at once
    client.create(R.PODGROUPS, podgroup_body("again", namespace, 1))
    writer = KubeWriter(client, None, workers=1)  # type: ignore[arg-type]
    try:
        writer.update_podgroup(dict(old, status={"phase": "Running"}))
        assert writer.statuses.flush(30)
    finally:
        writer.close()
    assert _status(client, namespace, "again").get("phase") != "Running"


def test_a_podgroup_left_running_by_pods_now_gone_is_written_once_then_left_alone(
    client: KubeClient, namespace: str
) -> None:
    # what a scheduler before this one left behind: its gang ran, then its pods went
    body = podgroup_body("left", namespace, 2)
    body["status"] = {"phase": "Running", "running": 2, "succeeded": 1}
    client.create(R.PODGROUPS, body)  # no status subresource: the status is created with it
    with scheduler_running(client) as scheduler:
        # back to Pending, then enqueued again (no minResources); the counts removed
        settled = {"phase": "Inqueue", "conditions": []}
        wait_for(lambda: _status(client, namespace, "left") == settled)
        written = client.get(R.PODGROUPS, "left", namespace)
        cycles = scheduler.queue_status.syncs
        wait_for(lambda: scheduler.queue_status.syncs >= cycles + 10)  # cycles that saw it
        assert client.get(R.PODGROUPS, "left", namespace) == written  # not written again
