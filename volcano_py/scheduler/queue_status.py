"""Queue bookkeeping the scheduler owns: the built-in queues and ``Queue.status``.

- ``ensure_builtin_queues``: ``root`` and ``default`` are created when the cache has not
  seen them (as Volcano's scheduler does at start); one that already exists is left alone.
- ``QueueStatusWriter.sync``: for every Queue object, the status Volcano's scheduler keeps
  (the PodGroup counts ``pending``/``running``/``inqueue``/``unknown``/
  ``completed``, ``allocated``) is merge-patched onto the ``status`` subresource only when
  it differs from what the object already says, so a quiet cluster writes nothing.
  ``allocated`` is compared as quantities (``"2"`` equals ``"2000m"``), and a resource that
  dropped to zero is removed: a JSON merge patch merges maps, so the patch names each
  vanished key with ``null`` (an empty ``allocated: {}`` would remove nothing, never match
  and be re-sent every cycle).
  ``state`` is not written here: the queue controller (``controllers/queue``) owns it.

- ``QueueEvents.record``: a PodGroup held back by its queue (missing, not Open, overused)
  gets a Warning Event on the PodGroup naming the queue, once per distinct message.

All run in the scheduler thread, after a cycle; a failed write is logged and retried at
the next sync, never raised into the loop.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from volcano_py.api.errors import FieldError
from volcano_py.api.queue import BUILTIN_QUEUES, ROOT_QUEUE, queue_manifest
from volcano_py.api.resources import PODGROUPS, QUEUES
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import AlreadyExists, ApiError
from volcano_py.kube.events import Recorder
from volcano_py.scheduler.api.queue_info import QueueInfo
from volcano_py.scheduler.api.resource import Resource

log = logging.getLogger(__name__)


def ensure_builtin_queues(client: KubeClient, existing: set[str]) -> list[str]:
    """Create ``root`` and ``default`` when missing; the names created."""
    created = []
    for name in BUILTIN_QUEUES:
        if name in existing:
            continue
        parent = "" if name == ROOT_QUEUE else ROOT_QUEUE
        try:
            client.create(QUEUES, queue_manifest(name, parent=parent))
        except AlreadyExists:
            continue
        except ApiError as e:
            log.warning("queue %s: cannot create it: %s", name, e)
            continue
        log.info("queue %s: created (it was missing)", name)
        created.append(name)
    return created


def status_differs(current: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    """Whether ``wanted`` changes any field of ``current`` (missing counts equal 0)."""
    for key, value in wanted.items():
        have = current.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            if (have or 0) != value:
                return True
        elif key == "allocated":
            if not _same_amounts(have, value):
                return True
        elif have != value:
            return True
    return False


def _same_amounts(have: Any, wanted: Mapping[str, str]) -> bool:
    """Whether two ResourceLists hold the same quantities (an unreadable one never does)."""
    if not isinstance(have, Mapping):
        return not wanted and not have
    try:
        return Resource.from_list(have) == Resource.from_list(wanted) and set(have) == set(wanted)
    except FieldError:
        return False


def status_patch(current: Mapping[str, Any], wanted: Mapping[str, Any]) -> dict[str, Any]:
    """The merge patch taking ``current`` to ``wanted``: vanished ``allocated`` keys as null."""
    patch = dict(wanted)
    have = current.get("allocated")
    if isinstance(have, Mapping):
        allocated: dict[str, Any] = {k: None for k in have if k not in wanted["allocated"]}
        allocated.update(wanted["allocated"])
        patch["allocated"] = allocated
    return patch


class QueueStatusWriter:
    """Writes ``Queue.status`` when it changed."""

    def __init__(self, client: KubeClient) -> None:
        """Write through ``client``."""
        self.client = client
        self.syncs = 0  # how many times ``sync`` ran (one per scheduling cycle)

    def sync(self, queues: Mapping[str, QueueInfo]) -> int:
        """Patch every real Queue whose status moved; how many were written."""
        self.syncs += 1
        written = 0
        for name, info in sorted(queues.items()):
            if info.implicit:
                continue
            wanted = info.status()
            if not status_differs(info.queue.status, wanted):
                continue
            try:
                body = {"status": status_patch(info.queue.status, wanted)}
                self.client.patch(QUEUES, name, body, subresource="status")
            except ApiError as e:
                log.warning("queue %s: status not written: %s", name, e)
                continue
            written += 1
        return written


QUEUE_REASONS = frozenset({"QueueNotFound", "QueueNotOpen", "QueueOverused"})


class QueueEvents:
    """Events on PodGroups that their queue holds back, once per message."""

    def __init__(self, recorder: Recorder | None) -> None:
        """Record through ``recorder`` (None: nothing is recorded)."""
        self.recorder = recorder
        self._last: dict[str, str] = {}

    def record(
        self,
        fits: Mapping[str, tuple[str, str]],
        podgroup: Any,
        waiting: Callable[[str], bool] = lambda uid: False,
    ) -> int:
        """Record a Warning Event for each job a queue newly refuses.

        ``fits``: job uid -> (reason, message); ``podgroup(uid)``: the cached PodGroup;
        ``waiting(uid)``: whether a job the cycle did not look at still waits (parked), so
        its refusal is not news when it is looked at again.
        """
        seen = 0
        for uid in [u for u in self._last if u not in fits and not waiting(u)]:
            del self._last[uid]  # placed or gone: a later refusal is news again
        for uid, (reason, message) in fits.items():
            if reason not in QUEUE_REASONS:
                self._last.pop(uid, None)
                continue
            if self._last.get(uid) == message or self.recorder is None:
                continue
            pg = podgroup(uid)
            if pg is None:
                continue
            self._last[uid] = message
            self.recorder.event(pg, "Warning", reason, message, resource=PODGROUPS)
            seen += 1
        if len(self._last) > 100_000:
            self._last.clear()
        return seen
