"""Retrying API calls: ``retry_on_conflict`` for read-modify-write, ``Backoff`` for loops.

A controller that updates an object it read from the cache races every other writer; the API
server rejects the loser with 409 Conflict and the loser re-reads and tries again. That is
client-go's ``retry.RetryOnConflict(retry.DefaultRetry, fn)``, here ``retry_on_conflict(fn)``.

Contract:

- ``fn`` is called at most ``backoff.steps`` times, with ``backoff``'s sleeps in between;
  its result is returned as soon as it succeeds.
- Only errors the predicate accepts are retried; any other error propagates at once.
  ``retry_on_conflict`` retries ``Conflict`` but not ``AlreadyExists`` (a 409 too, but a
  create that found the name taken will not succeed by trying again).
- When the attempts run out, the last retried error is raised unchanged.
- ``fn`` must re-read what it modifies on every call (from the API server, or from a cache
  it has reason to believe is newer); retrying a stale body only loses again.

``Backoff`` is the same value as apimachinery's ``wait.Backoff``: each delay is the previous
one times ``factor``, up to ``cap``, plus up to ``jitter`` of itself at random. The informer's
reconnect loop reuses it through ``delays()``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from volcano_py.kube.errors import AlreadyExists, Conflict

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Backoff:
    """How long to wait between attempts, and how many attempts to make.

    Attributes:
        duration: the first delay, in seconds.
        factor: each delay is the previous one times this (``1.0``: constant).
        jitter: each delay gets up to ``jitter * delay`` added at random (``0``: none).
        steps: how many attempts ``retry_on`` makes (so ``steps - 1`` sleeps).
        cap: no delay before jitter exceeds this (``0``: no cap).
    """

    duration: float
    factor: float = 1.0
    jitter: float = 0.0
    steps: int = 1
    cap: float = 0.0

    def delays(self, rand: Callable[[], float] = random.random) -> Iterator[float]:
        """The successive delays, endlessly.

        After ``steps`` delays, or once ``cap`` is reached, the delay stays where it is (like
        ``wait.Backoff.Step``), so a reconnect loop can keep drawing from one iterator.
        """
        duration = self.duration
        steps = self.steps
        while True:
            delay = duration
            if steps > 0:
                steps -= 1
                if self.factor:
                    duration = duration * self.factor
                    if self.cap > 0 and duration > self.cap:
                        duration = self.cap
                        steps = 0
            if self.jitter > 0:
                delay += rand() * self.jitter * delay
            yield delay


"""client-go's ``retry.DefaultRetry``: 5 attempts, 10 ms apart (+10% jitter)."""

DEFAULT_BACKOFF = Backoff(duration=0.01, factor=5.0, jitter=0.1, steps=4)
"""client-go's ``retry.DefaultBackoff``: 4 attempts, 10 ms, 50 ms, 250 ms apart."""


def retry_on(
    predicate: Callable[[BaseException], bool],
    fn: Callable[[], T],
    backoff: Backoff = DEFAULT_BACKOFF,
    *,
    sleep: Callable[[float], None] = time.sleep,
    rand: Callable[[], float] = random.random,
) -> T:
    """Call ``fn`` until it returns, retrying the errors ``predicate`` accepts.

    Raises:
        Exception: the last retried error when ``backoff.steps`` attempts failed, or the
            first error ``predicate`` rejects.
    """
    delays = backoff.delays(rand)
    attempts = max(1, backoff.steps)
    for attempt in range(1, attempts + 1):
        try:
            return fn()
        except Exception as e:
            if attempt == attempts or not predicate(e):
                raise
        sleep(next(delays))
    raise AssertionError("unreachable")  # pragma: no cover


def is_conflict(error: BaseException) -> bool:
    """A 409 Conflict from a stale resourceVersion (not ``AlreadyExists``)."""
    return isinstance(error, Conflict) and not isinstance(error, AlreadyExists)


def retry_on_conflict(
    fn: Callable[[], T],
    *,
    steps: int = 5,
    duration: float = 0.01,
    factor: float = 1.0,
    jitter: float = 0.1,
    sleep: Callable[[float], None] = time.sleep,
    rand: Callable[[], float] = random.random,
) -> T:
    """Call ``fn`` (a fresh read-modify-write) until it does not hit a Conflict.

    The defaults are client-go's ``retry.DefaultRetry``. Returns what ``fn`` returns; after
    ``steps`` conflicts the last ``Conflict`` is raised.
    """
    backoff = Backoff(duration=duration, factor=factor, jitter=jitter, steps=steps)
    return retry_on(is_conflict, fn, backoff, sleep=sleep, rand=rand)
