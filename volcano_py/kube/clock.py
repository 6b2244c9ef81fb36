"""Time as a dependency: the ``Clock`` the queues, leader election and events are given.

Everything in ``volcano_py.kube`` that waits or measures time asks an injected ``Clock``
instead of calling ``time`` directly, so unit tests drive time by hand and never sleep
(client-go's workqueue and leader election take a clock for the same reason).

Contract:

- ``now()`` is monotonic seconds: use it for intervals, deadlines and expiry. It never goes
  backwards and means nothing across processes.
- ``wall()`` is the aware UTC ``datetime`` written into API objects (Lease times, Event
  timestamps). Never compare it with another host's times to decide anything.
- ``wait(cond, timeout)`` and ``wait_event(event, timeout)`` are the only ways code here
  blocks on time: both return early when woken, and their timeout is measured in clock
  seconds. Callers re-check their own state after every return (spurious wake-ups happen).
- ``FakeClock`` moves only when a test calls ``step()`` or ``set()``, and every thread blocked
  on it re-checks its deadline at once; ``block_until_waiters()`` lets a test step precisely
  after a worker has gone to sleep.
"""

from __future__ import annotations

import itertools
import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Protocol

# threading.Event cannot notify a third party when it is set, so a FakeClock checks the
# events it waits on this often (real seconds); a step() still wakes those waiters at once.
_FAKE_EVENT_POLL_S = 0.002


class Clock(Protocol):
    """The source of time for queues, leader election and the event recorder."""

    def now(self) -> float:
        """Monotonic seconds, for intervals and deadlines."""
        ...

    def wall(self) -> datetime:
        """The current UTC time, for timestamps written to the API server."""
        ...

    def sleep(self, seconds: float) -> None:
        """Block for ``seconds`` of clock time."""
        ...

    def wait(self, cond: threading.Condition, timeout: float | None) -> None:
        """``cond.wait`` with ``timeout`` in clock seconds; the caller holds ``cond``'s lock."""
        ...

    def wait_event(self, event: threading.Event, timeout: float | None) -> bool:
        """Wait until ``event`` is set or ``timeout`` clock seconds pass; ``event.is_set()``."""
        ...


class RealClock:
    """The process's own clocks: ``time.monotonic`` and ``datetime.now(UTC)``."""

    def now(self) -> float:
        """Monotonic seconds."""
        return time.monotonic()

    def wall(self) -> datetime:
        """The current UTC time."""
        return datetime.now(UTC)

    def sleep(self, seconds: float) -> None:
        """Sleep for real."""
        if seconds > 0:
            time.sleep(seconds)

    def wait(self, cond: threading.Condition, timeout: float | None) -> None:
        """Wait on ``cond`` for at most ``timeout`` real seconds."""
        cond.wait(timeout)

    def wait_event(self, event: threading.Event, timeout: float | None) -> bool:
        """Wait on ``event`` for at most ``timeout`` real seconds."""
        return event.wait(timeout)


class FakeClock:
    """A clock that moves only when told to; for tests. Thread-safe.

    ``wall()`` starts at ``wall_start`` and advances with ``now()``.
    """

    def __init__(
        self,
        start: float = 1000.0,
        wall_start: datetime = datetime(2025, 1, 1, tzinfo=UTC),
    ) -> None:
        self._start = start
        self._now = start
        self._wall_start = wall_start
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._tokens = itertools.count()
        self._deadlines: dict[int, float] = {}
        self._conds: dict[int, threading.Condition] = {}

    def now(self) -> float:
        """The fake monotonic time."""
        with self._lock:
            return self._now

    def wall(self) -> datetime:
        """``wall_start`` plus the time stepped so far."""
        with self._lock:
            return self._wall_start + timedelta(seconds=self._now - self._start)

    def step(self, seconds: float) -> None:
        """Move time forward by ``seconds`` and wake every waiter."""
        if seconds < 0:
            raise ValueError(f"a monotonic clock cannot step backwards ({seconds})")
        with self._lock:
            self._now += seconds
        self._wake_all()

    def set(self, now: float) -> None:
        """Move time forward to ``now`` and wake every waiter."""
        with self._lock:
            if now < self._now:
                raise ValueError(f"a monotonic clock cannot go back from {self._now} to {now}")
            self._now = now
        self._wake_all()

    def sleep(self, seconds: float) -> None:
        """Block until the clock has been stepped ``seconds`` forward."""
        with self._changed:
            deadline = self._now + seconds
            token = self._register(deadline)
            try:
                while self._now < deadline:
                    self._changed.wait()
            finally:
                self._unregister(token)

    def wait(self, cond: threading.Condition, timeout: float | None) -> None:
        """Wait on ``cond`` until notified or until a step passes the deadline."""
        with self._lock:
            deadline = float("inf") if timeout is None else self._now + timeout
            if deadline <= self._now:
                return
            token = self._register(deadline)
            self._conds[token] = cond
        try:
            cond.wait()
        finally:
            with self._lock:
                self._conds.pop(token, None)
                self._unregister(token)

    def wait_event(self, event: threading.Event, timeout: float | None) -> bool:
        """Wait until ``event`` is set or a step passes the deadline."""
        with self._changed:
            deadline = float("inf") if timeout is None else self._now + timeout
            token = self._register(deadline)
            try:
                while not event.is_set() and self._now < deadline:
                    self._changed.wait(_FAKE_EVENT_POLL_S)
            finally:
                self._unregister(token)
        return event.is_set()

    def waiters(self) -> int:
        """How many threads are blocked on this clock with a deadline still ahead."""
        with self._lock:
            return self._pending()

    def block_until_waiters(self, count: int = 1, timeout: float = 30.0) -> bool:
        """Wait (real time, at most ``timeout``) until ``count`` threads are blocked on us.

        The default is a hang guard for a test on a loaded machine: it returns as soon as the
        threads block.

        A thread whose deadline a step has already passed no longer counts, even before it
        wakes up, so ``step(); block_until_waiters()`` waits for the next sleep.
        """
        end = time.monotonic() + timeout
        with self._changed:
            while self._pending() < count:
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(left)
        return True

    # -- internals (called with self._lock held) ------------------------------------------

    def _pending(self) -> int:
        return sum(1 for deadline in self._deadlines.values() if deadline > self._now)

    def _register(self, deadline: float) -> int:
        token = next(self._tokens)
        self._deadlines[token] = deadline
        self._changed.notify_all()
        return token

    def _unregister(self, token: int) -> None:
        self._deadlines.pop(token, None)
        self._changed.notify_all()

    def _wake_all(self) -> None:
        with self._changed:
            self._changed.notify_all()
            conds = list(self._conds.values())
        for cond in conds:
            with cond:
                cond.notify_all()
