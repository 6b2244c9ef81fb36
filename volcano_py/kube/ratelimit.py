"""Rate limiters: how long a failing key waits, and an overall token bucket.

``RateLimiter`` is the role (``when``/``forget``/``num_requeues``); the implementations are
client-go's: ``ItemExponentialFailureRateLimiter`` (per key, doubling), ``BucketRateLimiter``
(one bucket for everything; also the API client's qps/burst limit) and ``MaxOfRateLimiter``
(the slowest of several). ``default_controller_rate_limiter`` is client-go's
``DefaultControllerRateLimiter``.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import Generic, Protocol, TypeVar

from volcano_py.kube.clock import Clock, RealClock

K = TypeVar("K", bound=Hashable)
K_contra = TypeVar("K_contra", bound=Hashable, contravariant=True)


class RateLimiter(Protocol[K_contra]):
    """Decides how long a failing key waits before its next attempt."""

    def when(self, key: K_contra) -> float:
        """Seconds to wait before retrying ``key`` (records one more failure)."""
        ...

    def forget(self, key: K_contra) -> None:
        """Stop tracking ``key``: it succeeded, or was given up on."""
        ...

    def num_requeues(self, key: K_contra) -> int:
        """How many failures of ``key`` are on record."""
        ...


class ItemExponentialFailureRateLimiter(Generic[K]):
    """Per key: ``base_delay * 2**failures``, capped at ``max_delay``."""

    def __init__(self, base_delay: float = 0.005, max_delay: float = 1000.0) -> None:
        self._base = base_delay
        self._max = max_delay
        self._failures: dict[K, int] = {}
        self._lock = threading.Lock()

    def when(self, key: K) -> float:
        """The backoff for this failure of ``key``."""
        with self._lock:
            exp = self._failures.get(key, 0)
            self._failures[key] = exp + 1
        if exp >= 1024:  # 2.0**1024 overflows; the cap applies long before
            return self._max
        return min(self._base * 2.0**exp, self._max)

    def forget(self, key: K) -> None:
        """Reset the failure count of ``key``."""
        with self._lock:
            self._failures.pop(key, None)

    def num_requeues(self, key: K) -> int:
        """Failures of ``key`` since the last ``forget``."""
        with self._lock:
            return self._failures.get(key, 0)


class BucketRateLimiter(Generic[K]):
    """An overall token bucket: ``qps`` sustained, ``burst`` at once, for all keys together.

    Like Go's ``rate.Limiter.Reserve``: every call takes a token, borrowing from the future
    when the bucket is empty, and returns how long until that token exists.
    """

    def __init__(self, qps: float = 10.0, burst: int = 100, *, clock: Clock | None = None):
        if qps <= 0 or burst < 1:
            raise ValueError(f"BucketRateLimiter needs qps > 0 and burst >= 1, got {qps}/{burst}")
        self._qps = qps
        self._burst = float(burst)
        self._clock: Clock = clock or RealClock()
        self._tokens = float(burst)
        self._last = self._clock.now()
        self._lock = threading.Lock()

    def when(self, key: K) -> float:
        """Seconds until the token reserved now becomes available."""
        with self._lock:
            now = self._clock.now()
            self._tokens = min(self._burst, self._tokens + (now - self._last) * self._qps)
            self._last = now
            self._tokens -= 1.0
            return -self._tokens / self._qps if self._tokens < 0 else 0.0

    def forget(self, key: K) -> None:
        """Nothing is tracked per key."""

    def num_requeues(self, key: K) -> int:
        """Nothing is tracked per key."""
        return 0


class MaxOfRateLimiter(Generic[K]):
    """Combines limiters: the longest wait wins, the highest requeue count is reported."""

    def __init__(self, *limiters: RateLimiter[K]) -> None:
        self._limiters = limiters

    def when(self, key: K) -> float:
        """Ask every limiter (each records the failure) and take the longest wait."""
        return max(limiter.when(key) for limiter in self._limiters)

    def forget(self, key: K) -> None:
        """Forget ``key`` in every limiter."""
        for limiter in self._limiters:
            limiter.forget(key)

    def num_requeues(self, key: K) -> int:
        """The highest count any limiter reports."""
        return max(limiter.num_requeues(key) for limiter in self._limiters)


def default_controller_rate_limiter(clock: Clock | None = None) -> MaxOfRateLimiter[K]:
    """client-go's ``DefaultControllerRateLimiter``: 5 ms..1000 s per key, 10 qps/100 burst."""
    return MaxOfRateLimiter(
        ItemExponentialFailureRateLimiter(0.005, 1000.0), BucketRateLimiter(10.0, 100, clock=clock)
    )
