"""Queue status is written only when it changed; root/default created only when missing."""

from __future__ import annotations

from typing import Any

from tests.unit.scheduler.objects import node, pod, podgroup, queue
from volcano_py.kube.errors import AlreadyExists
from volcano_py.scheduler.cache import SchedulerCache
from volcano_py.scheduler.queue_status import QueueStatusWriter, ensure_builtin_queues
from volcano_py.scheduler.simulator import fill_cache


class RecordingClient:
    """Our own boundary: records the writes the status writer makes."""

    def __init__(self, existing: set[str] = frozenset()) -> None:  # type: ignore[assignment]
        self.patches: list[tuple[str, dict[str, Any]]] = []
        self.created: list[str] = []
        self.existing = set(existing)

    def patch(
        self, resource: object, name: str, body: dict[str, Any], **_: object
    ) -> dict[str, Any]:
        self.patches.append((name, body))
        return body

    def create(self, resource: object, body: dict[str, Any], **_: object) -> dict[str, Any]:
        name = body["metadata"]["name"]
        if name in self.existing:
            raise AlreadyExists(409, "exists")
        self.created.append(name)
        return body


def _cache(q: dict[str, Any]) -> SchedulerCache:
    cache = SchedulerCache()
    fill_cache(
        cache,
        [
            node("n1", {"cpu": 8}),
            q,
            podgroup("run", 1, queue="q", phase="Running"),
            pod("r", "run", {"cpu": 2}, node_name="n1", phase="Running"),
        ],
    )
    return cache


def test_status_written_once_then_not_again_when_unchanged() -> None:
    client = RecordingClient()
    writer = QueueStatusWriter(client)  # type: ignore[arg-type]
    cache = _cache(queue("q"))
    assert writer.sync(cache.queue_infos()) == 1
    name, body = client.patches[0]
    assert name == "q"
    assert body["status"]["running"] == 1
    assert body["status"]["allocated"] == {"cpu": "2"}
    # the informer brings the written status back: nothing more to write
    written = dict(queue("q"), status=body["status"])
    cache.update_queue(written)
    assert writer.sync(cache.queue_infos()) == 0
    assert len(client.patches) == 1


def test_state_is_never_written_by_the_scheduler() -> None:
    client = RecordingClient()
    writer = QueueStatusWriter(client)  # type: ignore[arg-type]
    writer.sync(_cache(queue("q", state="Closed")).queue_infos())
    assert "state" not in client.patches[0][1]["status"]


def test_builtin_queues_created_only_when_missing() -> None:
    client = RecordingClient(existing={"root"})
    created = ensure_builtin_queues(client, set())  # type: ignore[arg-type]
    assert created == ["default"]
    assert ensure_builtin_queues(RecordingClient(), {"root", "default"}) == []  # type: ignore[arg-type]


def test_queue_events_once_per_message_on_the_podgroup() -> None:
    from volcano_py.kube.events import FakeRecorder
    from volcano_py.scheduler.queue_status import QueueEvents

    recorder = FakeRecorder()
    events = QueueEvents(recorder)
    pg = podgroup("lost", 1, queue="nowhere")
    lookup = {"default/lost": pg}.get
    fits = {"default/lost": ("QueueNotFound", "queue 'nowhere' of the PodGroup does not exist")}
    assert events.record(fits, lookup) == 1
    assert events.record(fits, lookup) == 0
    assert events.record({"default/x": ("NotEnoughResources", "short")}, lookup) == 0
    assert events.record(fits, lookup) == 1  # it was placed meanwhile: news again
    assert recorder.events[0] == ("Warning", "QueueNotFound", fits["default/lost"][1])
    assert recorder.references[0]["kind"] == "PodGroup"


def _merged(current: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch, as the API server applies it (null removes a key)."""
    if not isinstance(patch, dict):
        return patch
    out = dict(current) if isinstance(current, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = _merged(out.get(key), value)
    return out


def test_allocated_that_drops_to_zero_is_removed_and_then_left_alone() -> None:
    client = RecordingClient()
    writer = QueueStatusWriter(client)  # type: ignore[arg-type]
    cache = _cache(queue("q"))
    writer.sync(cache.queue_infos())
    stored = _merged({}, client.patches[0][1]["status"])
    cache.update_queue(dict(queue("q"), status=stored))
    cache.delete_pod(pod("r", "run", {"cpu": 2}, node_name="n1", phase="Running"))
    assert writer.sync(cache.queue_infos()) == 1
    patch = client.patches[1][1]["status"]
    assert patch["allocated"] == {"cpu": None}  # a merge patch must name the key to drop it
    stored = _merged(stored, patch)
    assert "cpu" not in stored["allocated"]
    cache.update_queue(dict(queue("q"), status=stored))
    assert writer.sync(cache.queue_infos()) == 0  # applied: nothing re-sent every cycle


def test_allocated_compared_as_quantities() -> None:
    client = RecordingClient()
    writer = QueueStatusWriter(client)  # type: ignore[arg-type]
    cache = _cache(queue("q"))
    writer.sync(cache.queue_infos())
    stored = dict(client.patches[0][1]["status"], allocated={"cpu": "2000m"})
    cache.update_queue(dict(queue("q"), status=stored))
    assert writer.sync(cache.queue_infos()) == 0
