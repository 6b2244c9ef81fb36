"""PodGroup status writes leave the cycle: coalesced per PodGroup, flushed, closed in time."""

from __future__ import annotations

import threading
import time

from tests.unit.waits import WAIT_S
from volcano_py.scheduler.status_writes import StatusWrites


def _pg(name: str, phase: str) -> dict:
    return {"metadata": {"name": name, "namespace": "ns"}, "status": {"phase": phase}}


def test_a_newer_object_replaces_an_unsent_one_of_the_same_podgroup() -> None:
    gate = threading.Event()
    written: list[tuple[str, str]] = []

    def write(pg: dict) -> None:
        gate.wait(WAIT_S)
        written.append((pg["metadata"]["name"], pg["status"]["phase"]))

    writes = StatusWrites(write, workers=1)
    writes.put(_pg("first", "Pending"))  # taken by the worker, held at the gate
    deadline = time.monotonic() + WAIT_S
    while writes.pending() != 1 or writes._pending:
        assert time.monotonic() < deadline, "the worker never took the first write"
        time.sleep(0.001)
    writes.put(_pg("a", "Pending"))
    writes.put(_pg("b", "Inqueue"))
    writes.put(_pg("a", "Running"))  # replaces a/Pending, never sent
    assert writes.pending() == 3
    gate.set()
    assert writes.flush(WAIT_S)
    assert written == [("first", "Pending"), ("a", "Running"), ("b", "Inqueue")]
    writes.close()


def test_put_returns_at_once_while_the_writes_take_their_time() -> None:
    gate = threading.Event()
    written: list[str] = []

    def held(pg: dict) -> None:
        gate.wait(WAIT_S)  # every write is held until the puts are done
        written.append(pg["metadata"]["name"])

    writes = StatusWrites(held, workers=2)
    for i in range(20):
        writes.put(_pg(f"pg-{i}", "Pending"))  # would block here if put wrote in line
    assert writes.pending() == 20
    assert written == []
    gate.set()
    assert writes.flush(WAIT_S)
    assert writes.pending() == 0
    assert sorted(written) == sorted(f"pg-{i}" for i in range(20))
    writes.close()


def test_a_failing_write_does_not_stop_the_others() -> None:
    written: list[str] = []

    def write(pg: dict) -> None:
        if pg["metadata"]["name"] == "bad":
            raise RuntimeError("boom")
        written.append(pg["metadata"]["name"])

    writes = StatusWrites(write, workers=1)
    writes.put(_pg("bad", "Pending"))
    writes.put(_pg("good", "Pending"))
    assert writes.flush(WAIT_S)
    assert written == ["good"]
    writes.close()


def test_close_gives_up_on_a_stuck_write_within_its_timeout_and_drops_later_puts() -> None:
    stuck = threading.Event()
    written: list[str] = []

    def write(pg: dict) -> None:
        if pg["metadata"]["name"] == "stuck":
            stuck.wait(2 * WAIT_S)
        written.append(pg["metadata"]["name"])

    writes = StatusWrites(write, workers=1)
    writes.put(_pg("stuck", "Pending"))
    writes.put(_pg("behind", "Pending"))
    started = time.monotonic()
    writes.close(timeout=0.2)
    assert time.monotonic() - started < WAIT_S  # not held by the write stuck for 60 s
    writes.put(_pg("late", "Pending"))  # after close: ignored
    stuck.set()
    time.sleep(0.1)
    assert "late" not in written
    assert "behind" not in written
