"""Lease leader election, the Event recorder and retry_on_conflict against the real API server."""

from __future__ import annotations

import threading
import time

import pytest

from tests.builders import pod_body
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import Conflict
from volcano_py.kube.events import EventRecorder
from volcano_py.kube.leaderelection import LeaderElector
from volcano_py.kube.retry import retry_on_conflict


def wait_until(predicate, timeout: float = 20.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


def elector(client: KubeClient, namespace: str, identity: str, led: list[str]) -> LeaderElector:
    return LeaderElector(
        client,
        namespace,
        "volcano-py",
        identity,
        lease_duration=3,
        renew_deadline=2,
        retry_period=0.5,
        on_started_leading=lambda stop: led.append(identity),
    )


def test_leader_election_one_leader_and_handover_on_release(
    client: KubeClient, namespace: str
) -> None:
    led: list[str] = []
    stop_a, stop_b = threading.Event(), threading.Event()
    a = elector(client, namespace, "replica-a", led)
    a.start(stop_a)
    wait_until(a.is_leader)
    b = elector(client, namespace, "replica-b", led)
    b_thread = b.start(stop_b)
    time.sleep(1.5)  # several retry periods: b must not take a held lease
    assert not b.is_leader()
    lease = client.get(R.LEASES, "volcano-py", namespace)
    assert lease["spec"]["holderIdentity"] == "replica-a"

    released_at = time.monotonic()
    stop_a.set()
    wait_until(b.is_leader, timeout=10)
    # A released lease is taken at b's next retry, well before the 3 s lease duration.
    assert time.monotonic() - released_at < 3
    assert led == ["replica-a", "replica-b"]
    assert client.get(R.LEASES, "volcano-py", namespace)["spec"]["holderIdentity"] == "replica-b"
    stop_b.set()
    b_thread.join(5)


def test_leader_election_takes_over_when_leader_dies_without_release(
    client: KubeClient, namespace: str
) -> None:
    led: list[str] = []
    a = elector(client, namespace, "crashed", led)
    assert a.try_acquire_or_renew()  # holds the lease, then "crashes": never renews
    b = elector(client, namespace, "survivor", led)
    stop = threading.Event()
    started = time.monotonic()
    thread = b.start(stop)
    wait_until(b.is_leader, timeout=15)
    took = time.monotonic() - started
    assert 2.5 <= took <= 6, took  # after the 3 s lease expires, not before
    spec = client.get(R.LEASES, "volcano-py", namespace)["spec"]
    assert spec["holderIdentity"] == "survivor"
    assert spec["leaseTransitions"] >= 1
    stop.set()
    thread.join(5)


def test_event_recorder_writes_and_aggregates_events(client: KubeClient, namespace: str) -> None:
    pod = client.create(R.PODS, pod_body("evented", namespace))
    recorder = EventRecorder(client, "volcano-py-test")
    recorder.start()
    try:
        recorder.event(pod, "Warning", "FailedScheduling", "0/3 nodes fit", resource=R.PODS)
        recorder.event(pod, "Warning", "FailedScheduling", "0/3 nodes fit", resource=R.PODS)

        def events() -> list[dict]:  # type: ignore[type-arg]
            return [
                e
                for e in client.list_all(R.EVENTS, namespace)
                if e["involvedObject"]["name"] == "evented"
            ]

        wait_until(lambda: any(e.get("count") == 2 for e in events()))
        (event,) = events()
        assert event["reason"] == "FailedScheduling"
        assert event["type"] == "Warning"
        assert event["message"] == "0/3 nodes fit"
        assert event["involvedObject"]["uid"] == pod["metadata"]["uid"]
        assert event["source"]["component"] == "volcano-py-test"
    finally:
        recorder.stop()


def test_retry_on_conflict_wins_against_a_concurrent_writer(
    client: KubeClient, namespace: str
) -> None:
    client.create(
        R.CONFIGMAPS,
        {"metadata": {"name": "counter", "namespace": namespace}, "data": {"n": "0"}},
    )
    stale = client.get(R.CONFIGMAPS, "counter", namespace)
    client.patch(R.CONFIGMAPS, "counter", {"data": {"n": "1"}}, namespace)  # someone else
    attempts: list[int] = []

    def increment() -> dict:  # type: ignore[type-arg]
        current = stale if not attempts else client.get(R.CONFIGMAPS, "counter", namespace)
        attempts.append(1)
        current["data"]["n"] = str(int(current["data"]["n"]) + 1)
        return client.update(R.CONFIGMAPS, current)

    result = retry_on_conflict(increment)
    assert result["data"]["n"] == "2"
    assert len(attempts) == 2  # the stale write lost with 409 and was retried once


def test_client_update_with_stale_resource_version_raises_conflict(
    client: KubeClient, namespace: str
) -> None:
    client.create(R.CONFIGMAPS, {"metadata": {"name": "cas", "namespace": namespace}})
    stale = client.get(R.CONFIGMAPS, "cas", namespace)
    client.patch(R.CONFIGMAPS, "cas", {"data": {"x": "1"}}, namespace)
    with pytest.raises(Conflict) as info:
        client.update(R.CONFIGMAPS, stale)
    assert info.value.status == 409
