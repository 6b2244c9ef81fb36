"""queue-controller's writes, counted in the API server's audit log.

One write per state change under PodGroup churn, none in between, and none in 10 idle
seconds: a queue is created (Open: one write), gets three PodGroups, is closed (Closing: one
write) and loses them one by one (Closed once the last goes: one write). Its status was
written exactly three times, by nobody else than the controller (no scheduler runs here).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from devcluster.harness import ControlPlane
from tests.builders import podgroup_body
from tests.fixtures import audit_writes, audited_control_plane
from tests.integration.queue.conftest import RunningQueueController
from tests.integration.queue.test_queue_controller import make_queue, state_of, vcctl_command
from tests.integration.scheduler.conftest import wait_for
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient

pytestmark = pytest.mark.timeout(300)

NS = "queue-audit"


@pytest.fixture(scope="module")
def audited() -> Iterator[tuple[ControlPlane, KubeClient]]:
    with audited_control_plane(NS) as plane:
        yield plane


def _status_writes(cp: ControlPlane, name: str) -> list[dict[str, Any]]:
    return audit_writes(cp, "queues", ("patch", "update"), "status", name)


def test_one_status_write_per_state_change_and_none_while_idle(
    audited: tuple[ControlPlane, KubeClient],
) -> None:
    cp, admin = audited
    controller = RunningQueueController(admin)
    try:
        queue = make_queue(admin)
        wait_for(lambda: state_of(admin, queue) == "Open")
        names = [f"pg-{i}" for i in range(3)]
        for name in names:
            admin.create(R.PODGROUPS, podgroup_body(name, NS, 1, queue=queue), NS)
        vcctl_command(admin, queue, "CloseQueue")
        wait_for(lambda: state_of(admin, queue) == "Closing")
        for name in names:
            admin.delete(R.PODGROUPS, name, NS)
        wait_for(lambda: state_of(admin, queue) == "Closed")
        time.sleep(2)  # the last write reaches the informer
        writes = _status_writes(cp, queue)
        assert len(writes) == 3, [w["requestReceivedTimestamp"] for w in writes]
        before = len(writes)
        time.sleep(10)
        assert len(_status_writes(cp, queue)) == before
    finally:
        controller.stop()
