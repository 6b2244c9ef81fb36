"""R10: a deposed leader writes nothing.

Replica A (its own client certificate, user ``replica-a``, so the API server's audit log tells
its requests apart) takes the Lease; replica B stands by. A's worker is paused (SIGSTOP) while
work piles up for it: pods are created, B takes the Lease and binds them. A is resumed
(SIGCONT) past its lease with that stale work in its caches and queues, and more pods arrive.
The audit log then counts the writes A's identity sent once resumed: pods/binding,
PodGroups, pod status, HyperNodes, Queues, Events: everything but its own Lease requests. The
fence (``LeaderElector.holds_lease`` behind the manager's leader client) must make it 0.
"""

from __future__ import annotations

import datetime as dt
import os
import signal
import time
from collections.abc import Iterator

import pytest

from devcluster.harness import ControlPlane
from tests.builders import create_node, pod_body
from tests.e2e.conftest import ManagerProcess, start_manager
from tests.e2e.faults import lease_holder, own_plane, wait_until
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient

pytestmark = pytest.mark.timeout(240)

LEASE = ("--lease-duration=4", "--renew-deadline=3", "--retry-period=0.5")
NS = "r10"
PAUSE_S = 9.0
WRITES = {"create", "update", "patch", "delete", "deletecollection"}
LEASE_EVENT = "volcano-py."  # Events about the Lease are named <lease>.<suffix>


@pytest.fixture(scope="module")
def plane() -> Iterator[ControlPlane]:
    with own_plane(audit=True) as cp:
        admin = KubeClient(cp.admin_config())
        admin.create(R.NAMESPACES, {"metadata": {"name": NS}})
        for i in range(4):
            create_node(admin, f"r10-n{i}", allocatable={"cpu": "64", "pods": "500"})
        yield cp


def pods(admin: KubeClient, prefix: str, count: int) -> None:
    for i in range(count):
        admin.create(R.PODS, pod_body(f"{prefix}-{i}", NS, requests={"cpu": "100m"}))


def bound(admin: KubeClient) -> int:
    return sum(1 for p in admin.list_all(R.PODS, NS) if p["spec"].get("nodeName"))


def writes_by(plane: ControlPlane, user: str, since: dt.datetime) -> list[str]:
    found = []
    for event in plane.audit_events():
        if event.get("user", {}).get("username") != user or event.get("verb") not in WRITES:
            continue
        ref = event.get("objectRef") or {}
        lease_event = ref.get("resource") == "events" and ref.get("name", "").startswith(
            LEASE_EVENT
        )
        if ref.get("resource") == "leases" or lease_event:
            continue  # the election's own requests (optimistically locked) and Events on its Lease
        received = dt.datetime.fromisoformat(
            event["requestReceivedTimestamp"].replace("Z", "+00:00")
        )
        if received >= since:
            what = ref.get("resource", "") + (
                "/" + ref["subresource"] if ref.get("subresource") else ""
            )
            code = (event.get("responseStatus") or {}).get("code")
            found.append(f"{event['verb']} {what} {ref.get('name', '')} -> {code}")
    return found


def test_a_leader_paused_past_its_lease_writes_nothing_when_it_resumes(
    plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory, replicas: list[ManagerProcess]
) -> None:
    admin = KubeClient(plane.admin_config())
    a_config = plane.user_kubeconfig("replica-a", ["system:masters"])
    a = start_manager(plane, tmp_path_factory.mktemp("r10a"), *LEASE, f"--kubeconfig={a_config}")
    replicas.append(a)
    wait_until(lambda: lease_holder(admin), 20, "replica A takes the Lease")
    leader_a = lease_holder(admin)
    b = start_manager(plane, tmp_path_factory.mktemp("r10b"), *LEASE)
    replicas.append(b)
    pods(admin, "warm", 20)
    wait_until(lambda: bound(admin) == 20, 60, "A binds the first pods")
    assert writes_by(plane, "replica-a", dt.datetime.min.replace(tzinfo=dt.UTC)), (
        "A's writes must show in the audit log under its own user, or the count below is void"
    )

    (worker,) = a.worker_pids()
    os.kill(worker, signal.SIGSTOP)
    paused_at = dt.datetime.now(dt.UTC)
    try:
        pods(admin, "paused", 100)  # A's watches hold these for when it wakes up
        wait_until(
            lambda: lease_holder(admin) not in ("", leader_a), 30, "replica B takes the Lease"
        )
        time.sleep(max(0.0, PAUSE_S - (dt.datetime.now(dt.UTC) - paused_at).total_seconds()))
    finally:
        # A write sent just before SIGSTOP may reach the API server just after it: count from
        # the moment the process can send again.
        resumed_at = dt.datetime.now(dt.UTC)
        os.kill(worker, signal.SIGCONT)
    pods(admin, "resumed", 100)
    wait_until(lambda: bound(admin) == 220, 90, "B binds every pod")
    time.sleep(3)  # anything A still had in flight has reached the API server by now
    late = writes_by(plane, "replica-a", resumed_at)
    print(f"R10: writes by the deposed leader after its pause: {len(late)} {late[:5]}")
    assert late == []
