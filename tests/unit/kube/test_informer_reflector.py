"""The reflector loop with a scripted client (our own boundary): no sockets, no sleeps."""

from __future__ import annotations

import sys
import threading
import time
from collections import deque
from typing import Any

import pytest

from tests.unit.waits import WAIT_S, wait_until
from volcano_py.api import resources as R
from volcano_py.kube.errors import ConnectionFailed
from volcano_py.kube.informer import EventHandler, Informer

JSON = dict[str, Any]


def cm(name: str, rv: str, value: str = "1") -> JSON:
    return {
        "metadata": {
            "name": name,
            "namespace": "ns",
            "resourceVersion": rv,
            "managedFields": [{"manager": "x"}],
        },
        "data": {"v": value},
    }


class ScriptedClient:
    """list() answers from ``lists``; watch() plays the next script from ``watches``."""

    def __init__(self, lists: list[list[JSON]], watches: list[Any], done: threading.Event):
        self.lists = deque(lists)
        self.watches = deque(watches)
        self.done = done
        self.list_calls = 0
        self.watch_rvs: list[str] = []

    def list(self, resource: Any, namespace: Any = None, **kwargs: Any) -> JSON:
        self.list_calls += 1
        items = self.lists.popleft() if len(self.lists) > 1 else self.lists[0]
        rv = max((int(i["metadata"]["resourceVersion"]) for i in items), default=0)
        return {"metadata": {"resourceVersion": str(rv)}, "items": items}

    def watch(self, resource: Any, namespace: Any = None, **kwargs: Any) -> Any:
        self.watch_rvs.append(kwargs["resource_version"])
        if not self.watches:
            self.done.set()
            raise ConnectionFailed("script finished")
        script = self.watches.popleft()
        if isinstance(script, Exception):
            raise script
        return Stream(script)


class Stream:
    def __init__(self, events: list[tuple[str, JSON]]) -> None:
        self.events = events

    def __iter__(self) -> Any:
        return iter(self.events)

    def close(self) -> None:
        pass


def run_script(
    lists: list[list[JSON]], watches: list[Any], expect: int = 0
) -> tuple[Informer, list[Any], Any]:
    done = threading.Event()
    client = ScriptedClient(lists, watches, done)
    informer = Informer(client, R.CONFIGMAPS, namespace="ns")  # type: ignore[arg-type]
    seen: list[Any] = []
    informer.add_event_handler(
        EventHandler(
            on_add=lambda o: seen.append(("add", o["metadata"]["name"])),
            on_update=lambda old, new: seen.append(("update", new["metadata"]["name"])),
            on_delete=lambda o: seen.append(("delete", o["metadata"]["name"])),
        )
    )
    thread = threading.Thread(target=informer.run, daemon=True)
    thread.start()
    assert done.wait(WAIT_S)
    deadline = time.monotonic() + WAIT_S
    while len(seen) < expect and time.monotonic() < deadline:
        time.sleep(0.005)
    informer.stop()
    thread.join(WAIT_S)
    return informer, seen, client


def test_reflector_relists_on_watch_error_410_and_emits_diff() -> None:
    informer, seen, client = run_script(
        lists=[
            [cm("a", "1"), cm("b", "2"), cm("c", "3")],
            [cm("a", "1"), cm("c", "7", "2"), cm("d", "8")],
            [cm("a", "1"), cm("c", "7", "2"), cm("d", "8")],
        ],
        watches=[
            [
                ("ADDED", cm("e", "4")),
                (
                    "ERROR",
                    {
                        "kind": "Status",
                        "code": 410,
                        "reason": "Expired",
                        "message": "too old resource version",
                    },
                ),
            ]
        ],
        expect=8,
    )
    # a: unchanged, no event; b: gone while away -> delete; c: changed -> update; d: new.
    assert seen[:3] == [("add", "a"), ("add", "b"), ("add", "c")]
    assert seen[3:] == [
        ("add", "e"),
        ("delete", "b"),
        ("delete", "e"),
        ("update", "c"),
        ("add", "d"),
    ]
    assert informer.relists >= 1
    assert client.watch_rvs[:2] == ["3", "8"]


def test_reflector_resumes_from_bookmark_resource_version() -> None:
    _, seen, client = run_script(
        lists=[[cm("a", "5")], [cm("a", "5")]],
        watches=[
            [("BOOKMARK", {"metadata": {"resourceVersion": "42"}})],
            [("MODIFIED", cm("a", "43", "2"))],
        ],
        expect=2,
    )
    assert client.watch_rvs[:3] == ["5", "42", "43"]
    assert seen == [("add", "a"), ("update", "a")]


def test_changes_count_objects_not_bookmarks() -> None:
    informer, seen, _ = run_script(
        lists=[[cm("a", "5")], [cm("a", "5")]],
        watches=[
            [("BOOKMARK", {"metadata": {"resourceVersion": "42"}})],
            [("BOOKMARK", {"metadata": {"resourceVersion": "44"}})],
            [("MODIFIED", cm("a", "45", "2"))],
        ],
        expect=2,
    )
    assert seen == [("add", "a"), ("update", "a")]
    assert informer.changes == 2  # two bookmarks moved the resourceVersion, not the count


def test_reflector_strips_managed_fields_and_marks_synced() -> None:
    informer, _, _ = run_script(lists=[[cm("a", "1")], [cm("a", "1")]], watches=[])
    assert informer.has_synced()
    assert "managedFields" not in informer.store.get("ns/a")["metadata"]


def test_reflector_delete_of_unknown_object_is_still_delivered() -> None:
    _, seen, _ = run_script(
        lists=[[], []],
        watches=[[("DELETED", cm("ghost", "9"))]],
        expect=1,
    )
    assert seen == [("delete", "ghost")]


def test_an_informer_started_by_many_threads_at_once_runs_one_reflector(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The manager's controllers and its settle step all call the factory's start at once."""
    started: list[str] = []
    release = threading.Event()

    def reflect(self: Informer) -> None:
        started.append(self.name)
        release.wait(5)

    monkeypatch.setattr(Informer, "run", reflect)
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter can
    try:
        for _ in range(50):
            client = ScriptedClient([], [], threading.Event())
            informer = Informer(client, R.CONFIGMAPS)  # type: ignore[arg-type]
            gate = threading.Barrier(8)

            def start(informer: Informer = informer, gate: threading.Barrier = gate) -> None:
                gate.wait()
                informer.start()

            callers = [threading.Thread(target=start) for _ in range(8)]
            for caller in callers:
                caller.start()
            for caller in callers:
                caller.join()
        wait_until(lambda: len(started) >= 50, "every informer started its reflector")
        time.sleep(0.3)  # an extra reflector thread, if any, has recorded itself
    finally:
        sys.setswitchinterval(previous)
        release.set()
    assert len(started) == 50, f"{len(started) - 50} extra reflector threads"
