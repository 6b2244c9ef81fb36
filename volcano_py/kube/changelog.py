"""``ChangeLog``: say a thing about an object once per change, not once per cycle.

The scheduler looks at every job every cycle (about once a second), and some facts about a
job hold for many cycles: "dropping AllocatedHyperNode rack-1 (nothing placed)" for a
PodGroup whose pods are gone was written 54 times in 52 seconds. Logging through a
``ChangeLog`` writes such a line when it is new or its text changed, and stays quiet while
it repeats.

Contract:

- A line is identified by ``(key, msg)``: the object it is about (e.g. the job's
  ``namespace/name``) and the unformatted message (``"job %s: dropping ..."``); its value
  is the formatted text. ``log`` writes the line when that identity is new or its text
  differs from the last one written, and returns whether it wrote.
- Cycles: a caller that works in cycles calls ``new_cycle()`` at the start of each. An
  object nothing was said about during a whole cycle is forgotten, so a condition that clears
  and later comes back is said again, and deleted objects (never mentioned again) cost
  nothing after two cycles. A caller without cycles relies on ``forget(key)`` and the cap.
- Memory is bounded: at most ``capacity`` objects are remembered (the oldest go first;
  forgetting one only means its next line is written again).
- Thread-safe; the logging call happens outside the lock.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

DEFAULT_CAPACITY = 10_000


class ChangeLog:
    """Remembers the last line written per ``(key, msg)``; see the module docstring."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self.capacity = capacity
        self._lock = threading.Lock()
        self._current: dict[str, dict[str, str]] = {}
        self._previous: dict[str, dict[str, str]] = {}

    def log(self, logger: logging.Logger, level: int, key: str, msg: str, *args: Any) -> bool:
        """Write ``msg % args`` to ``logger`` unless it repeats the last line for ``key``."""
        if not logger.isEnabledFor(level):
            return False
        text = msg % args if args else msg
        with self._lock:
            lines = self._current.get(key)
            if lines is None:
                lines = self._previous.pop(key, None) or {}
                self._current[key] = lines
                while len(self._current) > self.capacity:
                    del self._current[next(iter(self._current))]
            if lines.get(msg) == text:
                return False
            lines[msg] = text
        logger.log(level, msg, *args)
        return True

    def info(self, logger: logging.Logger, key: str, msg: str, *args: Any) -> bool:
        """``log`` at INFO."""
        return self.log(logger, logging.INFO, key, msg, *args)

    def warning(self, logger: logging.Logger, key: str, msg: str, *args: Any) -> bool:
        """``log`` at WARNING."""
        return self.log(logger, logging.WARNING, key, msg, *args)

    def error(self, logger: logging.Logger, key: str, msg: str, *args: Any) -> bool:
        """``log`` at ERROR."""
        return self.log(logger, logging.ERROR, key, msg, *args)

    def new_cycle(self) -> None:
        """Start a cycle: what the last cycle did not repeat is forgotten at the next one."""
        with self._lock:
            self._previous = self._current
            self._current = {}

    def forget(self, key: str) -> None:
        """Forget every line about ``key`` (the object was deleted)."""
        with self._lock:
            self._current.pop(key, None)
            self._previous.pop(key, None)

    def __len__(self) -> int:
        """How many objects are remembered."""
        with self._lock:
            return len(self._current) + len(self._previous)
