from __future__ import annotations

import logging
from typing import Any

import pytest

from tests.unit.kube.memclient import MemoryClient
from tests.unit.waits import WAIT_S
from volcano_py.api.resources import EVENTS, HYPERNODES, NODES
from volcano_py.kube.clock import FakeClock
from volcano_py.kube.errors import AlreadyExists, Invalid, ServerError
from volcano_py.kube.events import (
    MAX_EVENT_MESSAGE,
    NORMAL,
    WARNING,
    EventRecorder,
    FakeRecorder,
)

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "web-0",
        "namespace": "team-a",
        "uid": "u-1",
        "resourceVersion": "42",
        "labels": {"app": "web"},
    },
    "spec": {"nodeName": "n1"},
}


def recorder(client: MemoryClient, clock: FakeClock, **kw: Any) -> EventRecorder:
    return EventRecorder(client, "volcano", clock=clock, rand=lambda: 0.0, **kw)


def events(client: MemoryClient) -> list[dict[str, Any]]:
    return client.of(EVENTS)


def test_recorder_writes_a_core_v1_event_with_only_a_reference_to_the_object() -> None:
    client, clock = MemoryClient(), FakeClock()
    rec = recorder(client, clock, host="node-a")
    rec.event(POD, WARNING, "FailedScheduling", "0/3 nodes are available")
    assert rec.process_pending() == 1
    [event] = events(client)
    assert event["metadata"]["namespace"] == "team-a"
    assert event["metadata"]["name"].startswith("web-0.")
    assert event["involvedObject"] == {
        "apiVersion": "v1",
        "kind": "Pod",
        "name": "web-0",
        "namespace": "team-a",
        "uid": "u-1",
        "resourceVersion": "42",
    }
    assert {
        k: event[k]
        for k in (
            "reason",
            "message",
            "type",
            "count",
            "source",
            "firstTimestamp",
            "lastTimestamp",
            "reportingComponent",
            "reportingInstance",
        )
    } == {
        "reason": "FailedScheduling",
        "message": "0/3 nodes are available",
        "type": "Warning",
        "count": 1,
        "source": {"component": "volcano", "host": "node-a"},
        "firstTimestamp": "2025-01-01T00:00:00Z",
        "lastTimestamp": "2025-01-01T00:00:00Z",
        "reportingComponent": "volcano",
        "reportingInstance": "node-a",
    }


@pytest.mark.parametrize(
    ("obj", "resource"),
    [
        ({"metadata": {"name": "s0", "uid": "h"}}, HYPERNODES),
        ({"kind": "Node", "apiVersion": "v1", "metadata": {"name": "n1"}}, None),
    ],
    ids=["hypernode-from-cache", "node"],
)
def test_recorder_puts_events_about_cluster_scoped_objects_in_default(
    obj: dict[str, Any], resource: Any
) -> None:
    client, clock = MemoryClient(), FakeClock()
    rec = recorder(client, clock)
    rec.event(obj, NORMAL, "Synced", "ok", resource=resource)
    rec.process_pending()
    [event] = events(client)
    assert event["metadata"]["namespace"] == "default"
    assert "namespace" not in event["involvedObject"]
    assert event["involvedObject"]["kind"] == (resource or NODES).kind


def test_recorder_cuts_a_long_message_to_one_bounded_line() -> None:
    client, clock = MemoryClient(), FakeClock()
    rec = recorder(client, clock)
    rec.event(POD, WARNING, "InvalidSchedulerConf", "bad value\n" + "lol " * 10**6)
    assert rec.process_pending() == 1
    [event] = events(client)
    assert len(event["message"]) == MAX_EVENT_MESSAGE
    assert event["message"].startswith("bad value lol")
    assert event["message"].endswith("...")


def test_recorder_counts_a_repeat_within_ten_minutes_with_a_patch() -> None:
    client, clock = MemoryClient(), FakeClock()
    rec = recorder(client, clock)
    rec.event(POD, WARNING, "Unschedulable", "no fit")
    rec.process_pending()
    clock.step(599)
    rec.event(POD, WARNING, "Unschedulable", "no fit")
    rec.event(POD, WARNING, "Unschedulable", "no fit")
    rec.process_pending()
    [event] = events(client)
    assert event["count"] == 3
    assert event["firstTimestamp"] == "2025-01-01T00:00:00Z"
    assert event["lastTimestamp"] == "2025-01-01T00:09:59Z"
    assert [verb for verb, plural, _ in client.calls] == ["create", "patch", "patch"]


@pytest.mark.parametrize(
    ("second", "expected_events"),
    [
        (("Unschedulable", "no fit", 601.0), 2),
        (("Unschedulable", "other", 1.0), 2),
        (("Scheduled", "no fit", 1.0), 2),
        (("Unschedulable", "no fit", 1.0), 1),
    ],
    ids=["after-ten-minutes", "other-message", "other-reason", "repeat"],
)
def test_recorder_creates_a_new_event_unless_it_is_a_recent_exact_repeat(
    second: tuple[str, str, float], expected_events: int
) -> None:
    client, clock = MemoryClient(), FakeClock()
    rec = recorder(client, clock)
    rec.event(POD, WARNING, "Unschedulable", "no fit")
    rec.process_pending()
    reason, message, later = second
    clock.step(later)
    rec.event(POD, WARNING, reason, message)
    rec.process_pending()
    assert len(events(client)) == expected_events


def test_recorder_recreates_a_repeated_event_that_expired_on_the_server() -> None:
    client, clock = MemoryClient(), FakeClock()
    rec = recorder(client, clock)
    rec.event(POD, WARNING, "Unschedulable", "no fit")
    rec.process_pending()
    client.objects.clear()  # the server's event TTL removed it
    rec.event(POD, WARNING, "Unschedulable", "no fit")
    rec.process_pending()
    [event] = events(client)
    assert event["count"] == 2


def test_recorder_spam_filter_allows_25_per_object_then_one_per_five_minutes() -> None:
    client, clock = MemoryClient(), FakeClock()
    rec = recorder(client, clock)
    other = {**POD, "metadata": {**POD["metadata"], "name": "web-1", "uid": "u-2"}}
    for i in range(30):
        rec.event(POD, NORMAL, f"Reason{i}", "m")
    rec.event(other, NORMAL, "Reason0", "m")
    rec.process_pending()
    names = [e["involvedObject"]["name"] for e in events(client)]
    assert names.count("web-0") == 25
    assert names.count("web-1") == 1
    clock.step(299)
    rec.event(POD, NORMAL, "Late", "m")
    clock.step(1)
    rec.event(POD, NORMAL, "Later", "m")
    rec.event(POD, NORMAL, "Latest", "m")
    rec.process_pending()
    reasons = {e["reason"] for e in events(client)}
    assert "Later" in reasons
    assert not {"Late", "Latest"} & reasons


def test_recorder_forgets_correlation_state_that_can_no_longer_matter() -> None:
    client, clock = MemoryClient(), FakeClock()
    rec = recorder(client, clock)
    pods = [
        {**POD, "metadata": {**POD["metadata"], "name": f"web-{i}", "uid": f"u-{i}"}}
        for i in range(200)
    ]
    for pod in pods:
        rec.event(pod, WARNING, "Unschedulable", "no fit")
    rec.process_pending()
    assert rec.correlation_entries() == 400  # one repeat entry and one bucket per pod
    clock.step(400)  # every bucket has refilled; the repeats are still inside the window
    rec.event(pods[0], WARNING, "Unschedulable", "no fit")
    rec.process_pending()
    assert rec.correlation_entries() == 201
    assert [e["count"] for e in events(client) if e["involvedObject"]["name"] == "web-0"] == [2]
    clock.step(601)  # past the window too: nothing of the 200 pods is needed any more
    rec.event(POD, WARNING, "Unschedulable", "no fit")
    rec.process_pending()
    assert rec.correlation_entries() == 2


def test_recorder_drops_events_when_the_queue_is_full_without_blocking() -> None:
    client, clock = MemoryClient(), FakeClock()
    rec = recorder(client, clock, queue_size=2)
    for reason in ["A", "B", "C"]:
        rec.event(POD, NORMAL, reason, "m")
    assert rec.process_pending() == 2
    assert sorted(e["reason"] for e in events(client)) == ["A", "B"]


def test_recorder_retries_transient_failures_and_drops_rejected_events() -> None:
    client, clock = MemoryClient(), FakeClock()
    rec = recorder(client, clock)
    client.fail("create", ServerError(503, "ServiceUnavailable", "later"))
    rec.event(POD, NORMAL, "Retried", "m")
    rec.process_pending()
    client.fail("create", Invalid(422, "Invalid", "bad"), AlreadyExists(409, "AlreadyExists", "x"))
    rec.event(POD, NORMAL, "Invalid", "m")
    rec.event(POD, NORMAL, "Exists", "m")
    rec.process_pending()
    assert [e["reason"] for e in events(client)] == ["Retried"]
    assert [verb for verb, _, _ in client.calls] == ["create"] * 4


def test_recorder_never_logs_or_sends_secret_contents(caplog: pytest.LogCaptureFixture) -> None:
    client, clock = MemoryClient(), FakeClock()
    rec = recorder(client, clock)
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "ufm-creds", "namespace": "volcano-system"},
        "data": {"password": "aHVudGVyMg=="},
        "stringData": {"token": "s3cr3t"},
    }
    client.fail("create", Invalid(422, "Invalid", "bad"))
    with caplog.at_level(logging.DEBUG, logger="volcano_py.kube.events"):
        rec.event(secret, WARNING, "LoadFailed", "cannot read credentials")
        rec.event(secret, WARNING, "LoadFailed", "cannot read credentials again")
        rec.process_pending()
    assert caplog.records, "the test must see the recorder's log lines"
    for text in (caplog.text, repr(client.objects)):
        assert "aHVudGVyMg==" not in text
        assert "s3cr3t" not in text


@pytest.mark.parametrize(
    ("obj", "event_type"),
    [(POD, "Error"), ({"metadata": {"name": "x"}}, NORMAL), ({"kind": "Pod"}, NORMAL)],
    ids=["bad-type", "no-kind", "no-name"],
)
def test_recorder_rejects_bad_calls_loudly(obj: dict[str, Any], event_type: str) -> None:
    for rec in (recorder(MemoryClient(), FakeClock()), FakeRecorder()):
        with pytest.raises(ValueError, match="event"):
            rec.event(obj, event_type, "Reason", "m")


def test_recorder_eventf_formats_percent_style() -> None:
    client, clock = MemoryClient(), FakeClock()
    rec = recorder(client, clock)
    rec.eventf(POD, NORMAL, "Scheduled", "assigned %s to %s", "team-a/web-0", "n1")
    rec.eventf(POD, NORMAL, "Literal", "100% done")
    rec.process_pending()
    assert sorted(e["message"] for e in events(client)) == [
        "100% done",
        "assigned team-a/web-0 to n1",
    ]


def test_recorder_thread_writes_queued_events_and_stops() -> None:
    client, clock = MemoryClient(), FakeClock()
    rec = recorder(client, clock)
    thread = rec.start()
    assert thread.name == "event-recorder"
    rec.event(POD, NORMAL, "A", "m")
    rec.event(POD, NORMAL, "B", "m")
    rec.stop(timeout=WAIT_S)
    assert not thread.is_alive()
    assert sorted(e["reason"] for e in events(client)) == ["A", "B"]
    rec.event(POD, NORMAL, "AfterStop", "m")
    assert rec.process_pending() == 0


def test_fake_recorder_collects_type_reason_message() -> None:
    fake = FakeRecorder()
    fake.event(POD, WARNING, "Unschedulable", "no fit")
    fake.eventf(POD, NORMAL, "Scheduled", "to %s", "n1")
    assert fake.events == [("Warning", "Unschedulable", "no fit"), ("Normal", "Scheduled", "to n1")]
