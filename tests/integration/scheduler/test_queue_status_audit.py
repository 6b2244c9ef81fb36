"""An idle cluster writes no Queue or PodGroup status: counted in the API server's audit log.

The writer used to merge-patch ``allocated: {}`` for a queue whose pods were gone; a merge
patch cannot remove keys, so the stale amounts stayed, the status never matched and was
patched again every cycle (about once a second). Here a private, audited control plane runs
a job through a queue, the pods go, and then 10 idle seconds must hold 0 writes to any
Queue's status — while the scheduler keeps cycling.

PodGroup statuses are written off the cycle (``status_writes.py``): a gang's reach
``Running`` (eventually written), and then, while its pods keep running, 10 idle seconds hold
0 PodGroup writes. A bare pod run as an implicit job is bound with no PodGroup write at all.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from devcluster.harness import ControlPlane
from tests.builders import create_node, force_delete_pod, pod_body, podgroup_body
from tests.fixtures import audit_writes, audited_control_plane
from tests.integration.scheduler.conftest import scheduler_running, wait_for
from volcano_py.api import resources as R
from volcano_py.controllers.podgroup.implicit import implicit_podgroup
from volcano_py.kube.client import KubeClient
from volcano_py.scheduler.scheduler import Scheduler

pytestmark = pytest.mark.timeout(300)

NS = "audit"
GPU = "test.volcano.sh/gpu"


@pytest.fixture(scope="module")
def audited() -> Iterator[tuple[ControlPlane, KubeClient]]:
    with audited_control_plane(NS) as plane:
        yield plane


def _queue_status_writes(cp: ControlPlane) -> list[dict[str, Any]]:
    return audit_writes(cp, "queues", ("patch", "update"), "status")


def test_no_queue_status_writes_in_ten_idle_seconds(
    audited: tuple[ControlPlane, KubeClient],
) -> None:
    cp, admin = audited
    create_node(admin, "n0", allocatable={"cpu": "8", "memory": "16Gi", "pods": "110", GPU: "4"})
    with scheduler_running(admin) as scheduler:
        admin.create(R.PODGROUPS, podgroup_body("job", NS, 2))
        names = [f"job-{i}" for i in range(2)]
        for name in names:
            admin.create(
                R.PODS,
                pod_body(
                    name,
                    NS,
                    requests={GPU: "1", "cpu": "10m"},
                    annotations={"scheduling.k8s.io/group-name": "job"},
                ),
            )
        wait_for(lambda: all(admin.get(R.PODS, n, NS)["spec"].get("nodeName") for n in names))

        def allocated() -> dict[str, Any]:
            return dict((admin.get(R.QUEUES, "default").get("status") or {}).get("allocated") or {})

        wait_for(lambda: allocated().get(GPU) == "2", timeout=30)
        for name in names:
            force_delete_pod(admin, name, NS)
        wait_for(lambda: GPU not in allocated(), timeout=30)
        time.sleep(2)  # the last write reaches the informer; the cache settles
        before = len(_queue_status_writes(cp))
        cycles_before = scheduler_cycles(scheduler)
        time.sleep(10)
        writes = _queue_status_writes(cp)[before:]
        assert writes == [], [
            (w["objectRef"]["name"], w["requestReceivedTimestamp"]) for w in writes
        ]
        assert before >= 2  # the test saw the writer write (amounts up, then removed)
        assert scheduler_cycles(scheduler) > cycles_before  # it kept cycling meanwhile


def scheduler_cycles(scheduler: Scheduler) -> int:
    """How many queue syncs the scheduler has made (one per cycle)."""
    return scheduler.queue_status.syncs


def _podgroup_writes(cp: ControlPlane) -> list[dict[str, Any]]:
    return audit_writes(cp, "podgroups", ("create", "patch", "update"))


def test_podgroup_status_written_once_running_then_never_again_and_none_for_a_bare_pod(
    audited: tuple[ControlPlane, KubeClient],
) -> None:
    cp, admin = audited
    create_node(admin, "n1", allocatable={"cpu": "8", "memory": "16Gi", "pods": "110", GPU: "4"})
    names = ["steady-0", "steady-1", "bare"]
    with scheduler_running(admin, implicit_podgroup):
        admin.create(R.PODGROUPS, podgroup_body("steady", NS, 2))
        created_by_test = len(_podgroup_writes(cp))
        for name in names[:2]:
            annotations = {"scheduling.k8s.io/group-name": "steady"}
            body = pod_body(name, NS, requests={GPU: "1"}, annotations=annotations)
            admin.create(R.PODS, body)
        admin.create(R.PODS, pod_body("bare", NS, requests={"cpu": "100m"}))
        wait_for(lambda: all(admin.get(R.PODS, n, NS)["spec"].get("nodeName") for n in names))

        def phase() -> str:
            return str((admin.get(R.PODGROUPS, "steady", NS).get("status") or {}).get("phase"))

        wait_for(lambda: phase() == "Running", timeout=30)
        time.sleep(2)  # the last write reaches the informer; the cache settles
        writes = _podgroup_writes(cp)
        names_written = {w["objectRef"].get("name") for w in writes[created_by_test:]}
        assert names_written == {"steady"}  # the gang's statuses; nothing for the bare pod
        before = len(writes)
        time.sleep(10)
        idle = _podgroup_writes(cp)[before:]
        assert idle == [], [(w["objectRef"]["name"], w["requestReceivedTimestamp"]) for w in idle]
    for name in names:
        force_delete_pod(admin, name, NS)
