"""``StatusWrites``: PodGroup status writes off the scheduling cycle, coalesced per PodGroup.

A cycle that tells 1,700 new PodGroups why they wait used to write them one by one before it
ended, so it took 3-4 s and a gang that fit, created meanwhile, waited for it. Now the cycle
hands each new PodGroup object to ``put`` and goes on; a few threads write them:

- **Coalesced**: one pending write per PodGroup; a newer object replaces one not yet sent, so
  a PodGroup is written at most once per round of the workers however many cycles computed
  it.
- **One writer of the status**: a Volcano PodGroup's status goes as a merge patch of
  ``status`` (and the scheduler's own annotations) without a ``resourceVersion``
  (``writer.podgroup_status_patch``), so the controllers' spec and annotation writes never
  make it conflict; a key is never written by two threads at once and the newest object wins,
  so the last write is the newest decision. A failed write is logged and left to the next
  cycle, which computes the status again from the object the watch delivers. A job whose
  write is still pending is not settled or parked: the next cycle looks at it again and puts
  the same object (coalesced).
- **Order**: binds are still sent inside the cycle, before any status of that cycle.
- ``flush`` waits until everything put so far is written (tests, shutdown); ``close`` flushes
  for at most ``timeout`` seconds and stops the threads (a deposed leader's writes fail with
  NotLeader anyway, and the next leader recomputes every status).

The pending pods' ``PodScheduled=False`` conditions go the same way, in a second instance
with its own queue (``KubeWriter.pod_conditions``): a gang of 5,000 pods told why it waits
was 5,000 PATCHes inside the cycle. Their Events are still recorded from the cycle (the
recorder sends them off it).

The keys wait in the one work queue the controllers use (``kube/workqueue.py``: FIFO, a key
queued once however often it is put, never written by two threads at once); the newest
object of each key waits beside it, so a worker writes what is newest when it takes the key.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from volcano_py.api import JSON
from volcano_py.api.meta import object_key
from volcano_py.kube.workqueue import WorkQueue

log = logging.getLogger(__name__)

DEFAULT_STATUS_WORKERS = 2
QUEUE_NAME = "scheduler-podgroup-status"


class StatusWrites:
    """Pending PodGroup writes, keyed ``namespace/name``, and the threads that send them."""

    def __init__(
        self,
        write: Callable[[JSON], None],
        workers: int = DEFAULT_STATUS_WORKERS,
        name: str = QUEUE_NAME,
    ) -> None:
        """``write(pg)`` sends one object (never raises); ``workers`` threads, started lazily.

        ``name``: the work queue's (its metrics); the pods' conditions use their own.
        """
        self._write = write
        self._workers = workers
        self._queue: WorkQueue[str] = WorkQueue(name)
        self._pending: dict[str, JSON] = {}  # key -> the newest object not yet taken
        self._in_flight = 0
        self._closed = False
        self._changed = threading.Condition()
        self._threads: list[threading.Thread] = []

    def put(self, pg: JSON) -> None:
        """Write ``pg`` soon (replacing an unsent older object of the same PodGroup)."""
        key = object_key(pg)
        with self._changed:
            if self._closed:
                return
            self._pending[key] = pg
            if len(self._threads) < self._workers:
                thread = threading.Thread(
                    target=self._run,
                    name=f"scheduler:status-{len(self._threads)}",
                    daemon=True,
                )
                self._threads.append(thread)
                thread.start()
        self._queue.add(key)

    def pending(self) -> int:
        """Writes put and not yet done."""
        with self._changed:
            return len(self._pending) + self._in_flight

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every write put so far is done; False on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._changed:
            while self._pending or self._in_flight:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._changed.wait(left)
        return True

    def close(self, timeout: float = 5.0) -> None:
        """Write what is pending for at most ``timeout`` seconds, then stop the threads."""
        if not self.flush(timeout):
            log.info("%d PodGroup status writes dropped at shutdown", self.pending())
        with self._changed:
            self._closed = True
            self._pending.clear()
            self._changed.notify_all()
        self._queue.shut_down()
        for thread in self._threads:
            thread.join(timeout)

    def _run(self) -> None:
        while (key := self._queue.get()) is not None:
            with self._changed:
                pg = self._pending.pop(key, None)
                if pg is not None:
                    self._in_flight += 1
            try:
                if pg is not None:
                    self._write(pg)
            except Exception:
                log.exception("podgroup %s: status write failed", key)
            finally:
                self._queue.done(key)
                if pg is not None:
                    with self._changed:
                        self._in_flight -= 1
                        self._changed.notify_all()
