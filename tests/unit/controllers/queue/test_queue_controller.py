"""queue-controller: the state machine table, Commands, the hierarchy and the built-ins."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.controllers.podgroup.pgfakes import RecordingClient
from volcano_py.api.queue import CLOSED_BY_PARENT_ANNOTATION, QueueState
from volcano_py.controllers.queue.controller import (
    MAX_OPEN_RETRIES,
    QueueController,
    Request,
    parent_cycle,
)
from volcano_py.controllers.queue.state import (
    CLOSE_QUEUE_ACTION,
    OPEN_QUEUE_ACTION,
    SYNC_QUEUE_ACTION,
    Step,
    read_state,
    transition,
)
from volcano_py.kube.events import FakeRecorder
from volcano_py.kube.store import key_of

JSON = dict[str, Any]
OP, C, CG, U = QueueState.OPEN, QueueState.CLOSED, QueueState.CLOSING, QueueState.UNKNOWN


@pytest.mark.parametrize(
    ("state", "action", "podgroups", "expected"),
    [
        (OP, SYNC_QUEUE_ACTION, 3, (Step.SYNC, OP)),
        (OP, OPEN_QUEUE_ACTION, 0, (Step.SYNC, OP)),
        (OP, CLOSE_QUEUE_ACTION, 0, (Step.CLOSE, C)),
        (OP, CLOSE_QUEUE_ACTION, 2, (Step.CLOSE, CG)),
        (CG, SYNC_QUEUE_ACTION, 1, (Step.SYNC, CG)),
        (CG, SYNC_QUEUE_ACTION, 0, (Step.SYNC, C)),
        (CG, CLOSE_QUEUE_ACTION, 0, (Step.SYNC, C)),
        (CG, OPEN_QUEUE_ACTION, 4, (Step.OPEN, OP)),
        (C, SYNC_QUEUE_ACTION, 2, (Step.SYNC, C)),
        (C, CLOSE_QUEUE_ACTION, 2, (Step.SYNC, C)),
        (C, OPEN_QUEUE_ACTION, 0, (Step.OPEN, OP)),
        (U, SYNC_QUEUE_ACTION, 0, (Step.SYNC, U)),
        (U, OPEN_QUEUE_ACTION, 0, (Step.OPEN, OP)),
        (U, CLOSE_QUEUE_ACTION, 1, (Step.CLOSE, CG)),
    ],
    ids=lambda v: str(v),
)
def test_transition_follows_volcanos_state_table(
    state: QueueState, action: str, podgroups: int, expected: tuple[Step, QueueState]
) -> None:
    assert transition(state, action, podgroups) == expected


@pytest.mark.parametrize(("raw", "state"), [(None, OP), ("", OP), ("Closed", C), ("Weird", U)])
def test_read_state_reads_unset_as_open_and_unknown_values_as_unknown(
    raw: object, state: QueueState
) -> None:
    assert read_state(raw) is state


def queue(
    name: str, *, state: str | None = None, parent: str | None = None, **annotations: str
) -> JSON:
    """A Queue; under ``root`` unless ``parent`` says otherwise (``""``: no parent written)."""
    obj: JSON = {"metadata": {"name": name, "annotations": dict(annotations)}, "spec": {}}
    if parent is None:
        parent = "" if name == "root" else "root"
    if parent:
        obj["spec"]["parent"] = parent
    if state:
        obj["status"] = {"state": state}
    return obj


def podgroup(name: str, queue_name: str) -> JSON:
    return {"metadata": {"name": name, "namespace": "ns"}, "spec": {"queue": queue_name}}


def command(name: str, target: Any, action: Any = CLOSE_QUEUE_ACTION) -> JSON:
    """A Command as vcctl's CreateQueueCommand writes it (controller ref as target)."""
    cmd: JSON = {
        "apiVersion": "bus.volcano.sh/v1alpha1",
        "kind": "Command",
        "metadata": {"name": name, "namespace": "default"},
        "action": action,
    }
    if target is not None:
        cmd["target"] = target
    return cmd


def queue_ref(name: str) -> JSON:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "name": name,
        "uid": "u-" + name,
        "controller": True,
        "blockOwnerDeletion": True,
    }


class StatusClient(RecordingClient):
    """pg-controller's recording client, taking the ``subresource`` the status write names."""

    def patch(
        self, resource: Any, name: str, patch: Any, namespace: str | None = None, **kw: Any
    ) -> JSON:
        return super().patch(resource, name, patch, namespace)


class Harness:
    def __init__(self, *objects: JSON) -> None:
        self.ctrl = QueueController()
        self.client = StatusClient()
        self.recorder = FakeRecorder()
        self.ctrl.client = self.client  # type: ignore[assignment]
        self.ctrl.recorder = self.recorder
        for obj in objects:
            if "queue" in obj.get("spec", {}):
                self.ctrl.podgroups.put(key_of(obj), obj)
            elif obj.get("kind") == "Command":
                self.ctrl.commands.put(key_of(obj), obj)
            else:
                self.ctrl.queues.put(key_of(obj), obj)

    def drain(self) -> list[Request]:
        out = []
        while len(self.ctrl.queue):
            item = self.ctrl.queue.get()
            assert item is not None
            self.ctrl.queue.done(item)
            out.append(item)
        return out

    def writes(self) -> list[tuple[str, str, Any]]:
        return [(c.verb, c.name, c.body) for c in self.client.calls]


def test_close_of_an_empty_queue_writes_closed_once() -> None:
    h = Harness(queue("q1", state="Open"))
    h.ctrl.sync(Request("q1", CLOSE_QUEUE_ACTION))
    assert h.writes() == [("patch", "q1", {"status": {"state": "Closed"}})]


def test_closing_queue_closes_when_its_last_podgroup_goes() -> None:
    h = Harness(queue("q1", state="Open"), podgroup("pg", "q1"))
    h.ctrl.sync(Request("q1", CLOSE_QUEUE_ACTION))
    assert h.writes() == [("patch", "q1", {"status": {"state": "Closing"}})]
    h.ctrl.queues.put("q1", queue("q1", state="Closing"))
    h.ctrl.podgroups.remove("ns/pg")
    h.ctrl.sync(Request("q1"))
    assert h.writes()[-1] == ("patch", "q1", {"status": {"state": "Closed"}})


def test_sync_of_an_unchanged_queue_writes_nothing() -> None:
    h = Harness(queue("q1", state="Open"), podgroup("pg", "q1"))
    for _ in range(5):
        h.ctrl.sync(Request("q1"))
    assert h.writes() == []


def test_a_new_queue_is_put_under_root_and_written_open() -> None:
    h = Harness(queue("q1", parent=""))
    h.ctrl.sync(Request("q1"))
    assert h.writes() == [
        ("patch", "q1", {"spec": {"parent": "root"}}),
        ("patch", "q1", {"status": {"state": "Open"}}),
    ]


def test_command_as_vcctl_writes_it_is_deleted_then_runs() -> None:
    h = Harness(queue("q1", state="Open"), command("q1-closequeue-abcde", queue_ref("q1")))
    h.ctrl.sync(Request("default/q1-closequeue-abcde", command=True))
    assert h.writes() == [("delete", "q1-closequeue-abcde", None)]
    assert h.drain() == [Request("q1", CLOSE_QUEUE_ACTION)]


@pytest.mark.parametrize(
    ("target", "action", "reason", "needle"),
    [
        (queue_ref("missing"), CLOSE_QUEUE_ACTION, "QueueNotFound", "'missing' does not exist"),
        ({**queue_ref("q1"), "name": ""}, CLOSE_QUEUE_ACTION, "InvalidCommand", "target.name"),
        (queue_ref("q1"), "AbortJob", "InvalidCommand", "action: 'AbortJob'"),
        (queue_ref("q1"), 7, "InvalidCommand", "action: 7"),
    ],
    ids=["missing-queue", "no-name", "job-action", "not-a-string"],
)
def test_bad_command_is_consumed_with_a_warning_and_changes_nothing_else(
    target: JSON, action: Any, reason: str, needle: str
) -> None:
    h = Harness(queue("q1", state="Open"), command("bad", target, action))
    h.ctrl.sync(Request("default/bad", command=True))
    assert h.writes() == [("delete", "bad", None)]
    assert h.drain() == []
    [(kind, got_reason, message)] = h.recorder.events
    assert (kind, got_reason) == ("Warning", reason)
    assert needle in message
    assert h.recorder.references[0]["kind"] == "Command"


def test_command_for_a_job_is_not_taken() -> None:
    h = Harness()
    h.ctrl.command_added(command("c", {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job"}))
    h.ctrl.command_added(command("d", None))
    assert h.drain() == []


def test_deleted_builtin_queue_is_recreated_and_others_are_not() -> None:
    h = Harness()
    h.ctrl.queue_deleted(queue("default"))
    h.ctrl.queue_deleted(queue("team-a"))
    for request in h.drain():
        h.ctrl.sync(request)
    [(verb, name, body)] = h.writes()
    assert (verb, name, body["spec"]["parent"]) == ("create", "default", "root")


def test_closing_a_parent_closes_its_open_children_marked_closed_by_parent() -> None:
    h = Harness(
        queue("q1", state="Open", parent="root"),
        queue("q11", state="Open", parent="q1"),
        queue("q12", state="Closed", parent="q1"),
    )
    h.ctrl.sync(Request("q1", CLOSE_QUEUE_ACTION))
    patch = {"metadata": {"annotations": {CLOSED_BY_PARENT_ANNOTATION: "true"}}}
    assert ("patch", "q11", patch) in h.writes()
    assert all(name != "q12" for _, name, _ in h.writes())
    assert h.drain() == [Request("q11", CLOSE_QUEUE_ACTION)]


def test_root_is_never_closed() -> None:
    h = Harness(queue("root", state="Open"))
    h.ctrl.sync(Request("root", CLOSE_QUEUE_ACTION))
    assert h.writes() == []
    assert h.recorder.events[0][0] == "Warning"


def test_open_under_a_closed_parent_warns_once_and_retries_then_gives_up() -> None:
    h = Harness(
        queue("q1", state="Closed", parent="root"),
        queue("q11", state="Closed", parent="q1"),
    )
    request = Request("q11", OPEN_QUEUE_ACTION)
    for _ in range(MAX_OPEN_RETRIES):
        h.ctrl.sync(request)  # refused and put back after a growing delay; nothing raised
    assert request in h.ctrl.queue._waiting  # put back, to come again after its delay
    assert h.ctrl._open_tries[request] == MAX_OPEN_RETRIES
    h.ctrl.sync(request)  # out of retries: stays shut and is dropped
    assert request not in h.ctrl._open_tries
    assert h.writes() == []
    assert [e[:2] for e in h.recorder.events] == [("Warning", OPEN_QUEUE_ACTION)]


def test_opening_a_parent_reopens_the_children_it_closed() -> None:
    h = Harness(
        queue("q1", state="Closed", parent="root"),
        queue("q11", state="Closed", parent="q1", **{CLOSED_BY_PARENT_ANNOTATION: "true"}),
        queue("q12", state="Closed", parent="q1"),
    )
    h.ctrl.sync(Request("q1", OPEN_QUEUE_ACTION))
    assert h.writes() == [("patch", "q1", {"status": {"state": "Open"}})]
    assert h.drain() == [Request("q11", OPEN_QUEUE_ACTION, by_parent=True)]
    # the cache may not show the parent Open yet: retried, and no Warning Event
    h.ctrl.sync(Request("q11", OPEN_QUEUE_ACTION, by_parent=True))
    assert h.writes() == [("patch", "q1", {"status": {"state": "Open"}})]
    assert h.recorder.events == []
    h.ctrl.queues.put("q1", queue("q1", state="Open", parent="root"))
    h.ctrl.sync(Request("q11", OPEN_QUEUE_ACTION, by_parent=True))
    assert ("patch", "q11", {"status": {"state": "Open"}}) in h.writes()
    cleared = {"metadata": {"annotations": {CLOSED_BY_PARENT_ANNOTATION: "false"}}}
    assert ("patch", "q11", cleared) in h.writes()


def test_parent_cycle_is_a_warning_on_the_queue_and_nothing_is_written() -> None:
    h = Harness(queue("a", state="Open", parent="b"), queue("b", state="Closed", parent="a"))
    h.ctrl.sync(Request("a"))
    assert h.writes() == []
    [(kind, reason, message)] = h.recorder.events
    assert (kind, reason) == ("Warning", "HierarchyCycle")
    assert "a -> b -> a" in message
    assert parent_cycle(h.ctrl.queues.get, "b") == ["b", "a", "b"]
