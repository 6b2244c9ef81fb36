"""``Foreground``: the API calls the process's background writes give way to.

One process runs the scheduler and the controllers, and they share one API server. The
scheduler's binds are what a user waits for; some controller writes only report (a
HyperNode's ``status.nodeCount``), and a burst of them (a thousand HyperNodes created at
once) competed with a gang's binds for the API server: P3 at 5,000 nodes bound its 2,000
pods 6.1-6.6 s from the first bind to the last with the 550 HyperNodes' counts being
written beside them, 4.9 s without (the bind floor, which only binds: 3.5-3.9 s).

- ``queued(n)`` marks ``n`` foreground calls from when they are due and ``done(n)`` ends them
  (the scheduler's binds, from their submission to the bind pool to their answer);
- ``pause(max_s)`` waits until no foreground call runs, for at most ``max_s``: a background
  writer calls it before each write, so it goes at full speed on a quiet API server and
  never starves under a constant stream of binds (it waits ``max_s`` at worst per write).
  The leader's controllers start after it too (``manager.py``, step 5).

Every view of one ``KubeClient`` (``gated``) shares its ``Foreground``.
"""

from __future__ import annotations

import threading

# How long a background write waits for the binds to pause, at most.
PAUSE_MAX_S = 1.0


class Foreground:
    """A count of foreground calls in flight and a way to wait for none."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._running = 0

    def queued(self, calls: int) -> None:
        """``calls`` foreground calls are due (each one ends with ``done``)."""
        with self._changed:
            self._running += calls

    def done(self, calls: int = 1) -> None:
        """``calls`` foreground calls (``queued``) ended."""
        with self._changed:
            self._running -= calls
            if not self._running:
                self._changed.notify_all()

    def pause(self, max_s: float = PAUSE_MAX_S) -> bool:
        """Wait until no foreground call runs, ``max_s`` at most; whether none runs."""
        with self._changed:
            return self._changed.wait_for(lambda: not self._running, timeout=max_s)
