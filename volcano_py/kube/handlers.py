"""Event handlers of an informer: each one's own queue and delivery thread.

client-go's ``processorListener``: an informer never calls a handler on its watch thread. It
pushes each notification onto the handler's unbounded queue, and the handler's thread
(``<informer>:handler-<n>``) delivers them in order, in batches, so a slow handler delays
only itself. A handler that raises is logged with the object key and the next notification
still comes. The informer pushes ``SYNCED`` after the adds of its first list (or, for a
handler registered late, after the adds of what the store already holds), and the
``HandlerRegistration`` returned to the caller reports it.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from volcano_py.api import JSON
from volcano_py.kube.store import key_of

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class EventHandler:
    """Callbacks for one consumer; any of them may be omitted."""

    on_add: Callable[[JSON], None] | None = None
    on_update: Callable[[JSON, JSON], None] | None = None
    on_delete: Callable[[JSON], None] | None = None


# what an informer pushes onto a handler's queue
ADD, UPDATE, DELETE, SYNCED = 0, 1, 2, 3


class Listener:
    """One handler's queue and delivery thread (the informer's; see the module docstring)."""

    def __init__(self, handler: EventHandler, name: str) -> None:
        self.handler = handler
        self.name = name
        self._queue: deque[tuple[int, JSON | None, JSON | None]] = deque()
        self._cond = threading.Condition(threading.Lock())
        self._synced = threading.Event()
        self._stopped = False
        self._thread: threading.Thread | None = None

    def has_synced(self) -> bool:
        """Whether the handler has processed the informer's first list."""
        return self._synced.is_set()

    def wait_synced(self, timeout: float | None) -> bool:
        """Block until ``has_synced``; False on timeout."""
        return self._synced.wait(timeout)

    def push(self, kind: int, old: JSON | None, new: JSON | None) -> None:
        """Queue one notification (never blocks on the handler)."""
        with self._cond:
            self._queue.append((kind, old, new))
            if len(self._queue) == 1:
                self._cond.notify()

    def start(self) -> None:
        """Start the delivery thread."""
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop delivering (what is queued is dropped)."""
        with self._cond:
            self._stopped = True
            self._cond.notify()

    def pending(self) -> int:
        """Notifications queued and not yet delivered."""
        return len(self._queue)

    def _run(self) -> None:
        handler = self.handler
        while True:
            with self._cond:
                while not self._queue and not self._stopped:
                    self._cond.wait()
                if self._stopped:
                    return
                batch = list(self._queue)
                self._queue.clear()
            for kind, old, new in batch:
                try:
                    if kind == ADD and handler.on_add and new is not None:
                        handler.on_add(new)
                    elif kind == UPDATE and handler.on_update and new is not None:
                        handler.on_update(old or new, new)
                    elif kind == DELETE and handler.on_delete and old is not None:
                        handler.on_delete(old)
                    elif kind == SYNCED:
                        self._synced.set()
                except Exception:
                    obj = new if new is not None else old
                    log.exception(
                        "%s: handler failed for %s", self.name, key_of(obj) if obj else "?"
                    )


class HandlerRegistration:
    """What ``add_event_handler`` returns: the handler's own sync state."""

    def __init__(self, listener: Listener) -> None:
        self._listener = listener

    def has_synced(self) -> bool:
        """True once the handler has processed the adds of the informer's first list."""
        return self._listener.has_synced()

    def wait_synced(self, timeout: float | None = None) -> bool:
        """Block until ``has_synced``; False on timeout."""
        return self._listener.wait_synced(timeout)
