"""Work queues for controllers: client-go's workqueue contract, in Python, thread-safe.

Event handlers turn informer notifications into keys (``"namespace/name"``) and ``add`` them;
``run_workers`` hands each key to a sync function on N named worker threads. The queue
promises, as client-go's ``workqueue`` does:

- **Fair:** keys are handed out in the order they were added (FIFO).
- **Stingy:** a key is queued at most once however often it is added before a worker takes
  it, and is never held by two workers at once: a key added while it is being processed is
  queued again once, when its worker calls ``done()``.
- **Many producers and consumers:** ``add`` from any thread, ``get`` from any number of
  workers; a key may be re-added while it is being processed.
- **Shutdown:** after ``shut_down()`` adds are ignored, ``get`` hands out what is already
  queued and then returns ``None`` to every caller, at once; ``shut_down_with_drain()`` also
  waits until every key handed out has been ``done()``.

``DelayingQueue.add_after`` parks a key until a deadline on the injected ``Clock``; there is
no background thread: ``get`` and ``len`` promote keys whose time has come, and a blocked
``get`` sleeps on the clock until the earliest deadline. ``RateLimitingQueue`` asks a
``RateLimiter`` how long to park a failing key; ``forget`` resets its history. The default
limiter is client-go's ``DefaultControllerRateLimiter``: per key 5 ms doubling up to 1000 s,
and overall a 10 qps / 100 burst token bucket, whichever is slower.

Metrics go to a ``QueueMetrics`` sink (``QueueCounters`` keeps them in memory); the manager
exports them to Prometheus. Sinks are called with the queue's lock held: keep them cheap.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from volcano_py.kube.clock import Clock, RealClock
from volcano_py.kube.errors import ApiError, PermanentError, TemporaryError
from volcano_py.kube.ratelimit import RateLimiter, default_controller_rate_limiter

log = logging.getLogger(__name__)

_default_metrics: QueueMetrics | None = None


def set_default_metrics(metrics: QueueMetrics | None) -> None:
    """The sink for queues created without ``metrics=`` (the manager sets Prometheus's)."""
    global _default_metrics  # one process-wide setting, set at start
    _default_metrics = metrics


K = TypeVar("K", bound=Hashable)


class QueueMetrics(Protocol):
    """Where a queue reports what it does; every call names the queue."""

    def depth(self, queue: str, depth: int) -> None:
        """The number of keys waiting to be handed out changed."""
        ...

    def added(self, queue: str) -> None:
        """A key was added that was not already queued."""
        ...

    def retried(self, queue: str) -> None:
        """A key was parked by ``add_after`` / ``add_rate_limited``."""
        ...

    def latency(self, queue: str, seconds: float) -> None:
        """A key waited ``seconds`` in the queue before a worker took it."""
        ...

    def work_duration(self, queue: str, seconds: float) -> None:
        """A worker held a key for ``seconds`` (from ``get`` to ``done``)."""
        ...


@dataclass(slots=True)
class QueueCounters:
    """A ``QueueMetrics`` that keeps running totals per queue in memory (tests, debugging)."""

    depths: dict[str, int] = field(default_factory=dict)
    adds: Counter[str] = field(default_factory=Counter)
    retries: Counter[str] = field(default_factory=Counter)
    latency_seconds: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    work_seconds: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    work_count: Counter[str] = field(default_factory=Counter)

    def depth(self, queue: str, depth: int) -> None:  # noqa: D102 - see QueueMetrics
        self.depths[queue] = depth

    def added(self, queue: str) -> None:  # noqa: D102
        self.adds[queue] += 1

    def retried(self, queue: str) -> None:  # noqa: D102
        self.retries[queue] += 1

    def latency(self, queue: str, seconds: float) -> None:  # noqa: D102
        self.latency_seconds[queue] += seconds

    def work_duration(self, queue: str, seconds: float) -> None:  # noqa: D102
        self.work_seconds[queue] += seconds
        self.work_count[queue] += 1


class WorkQueue(Generic[K]):
    """A FIFO of deduplicated keys with processing tracking. See the module docstring."""

    def __init__(
        self, name: str, *, clock: Clock | None = None, metrics: QueueMetrics | None = None
    ) -> None:
        self.name = name
        self._clock: Clock = clock or RealClock()
        self._metrics = metrics if metrics is not None else _default_metrics
        self._cond = threading.Condition()
        self._queue: deque[K] = deque()
        self._dirty: set[K] = set()
        self._processing: set[K] = set()
        self._queued_at: dict[K, float] = {}
        self._started_at: dict[K, float] = {}
        self._shutting_down = False
        self._draining = False

    def add(self, key: K) -> None:
        """Queue ``key`` unless it is already queued; ignored after shutdown."""
        with self._cond:
            self._add_locked(key)

    def get(self) -> K | None:
        """Block until a key is available and take it; ``None`` means shut down: exit."""
        with self._cond:
            while True:
                self._promote_ready()
                if self._queue:
                    break
                if self._shutting_down:
                    return None
                self._clock.wait(self._cond, self._next_ready_in())
            key = self._queue.popleft()
            now = self._clock.now()
            self._processing.add(key)
            self._dirty.discard(key)
            self._started_at[key] = now
            if self._metrics is not None:
                self._metrics.depth(self.name, len(self._queue))
                self._metrics.latency(self.name, now - self._queued_at.pop(key, now))
            return key

    def done(self, key: K) -> None:
        """Finish processing ``key``; queue it again if it was added meanwhile."""
        with self._cond:
            self._processing.discard(key)
            started = self._started_at.pop(key, None)
            if self._metrics is not None and started is not None:
                self._metrics.work_duration(self.name, self._clock.now() - started)
            if key in self._dirty:
                self._enqueue(key)
            elif self._draining and not self._processing:
                self._cond.notify_all()

    def __len__(self) -> int:
        """The number of keys waiting to be handed out (not those being processed)."""
        with self._cond:
            self._promote_ready()
            return len(self._queue)

    def shut_down(self) -> None:
        """Ignore further adds; ``get`` returns ``None`` once the queue is empty."""
        with self._cond:
            self._shutting_down = True
            self._on_shut_down()
            self._cond.notify_all()

    def shut_down_with_drain(self) -> None:
        """``shut_down`` and wait until every key handed out has been ``done()``."""
        with self._cond:
            self._shutting_down = True
            self._draining = True
            self._on_shut_down()
            self._cond.notify_all()
            while self._processing:
                self._cond.wait()

    @property
    def shutting_down(self) -> bool:
        """Whether ``shut_down`` has been called."""
        with self._cond:
            return self._shutting_down

    # -- internals (self._cond held) -----------------------------------------------------

    def _add_locked(self, key: K) -> None:
        if self._shutting_down:
            return
        if key in self._dirty:
            return
        if self._metrics is not None:
            self._metrics.added(self.name)
        self._dirty.add(key)
        if key not in self._processing:
            self._enqueue(key)

    def _enqueue(self, key: K) -> None:
        self._queue.append(key)
        self._queued_at[key] = self._clock.now()
        if self._metrics is not None:
            self._metrics.depth(self.name, len(self._queue))
        self._cond.notify_all()

    def _promote_ready(self) -> None:
        """Move parked keys whose time has come into the queue (delaying queues)."""

    def _next_ready_in(self) -> float | None:
        """Clock seconds until the next parked key is due; ``None`` when nothing is parked."""
        return None

    def _on_shut_down(self) -> None:
        """Drop state that must not outlive shutdown (parked keys)."""


class DelayingQueue(WorkQueue[K]):
    """A ``WorkQueue`` whose keys can be parked until a deadline on the clock."""

    def __init__(
        self, name: str, *, clock: Clock | None = None, metrics: QueueMetrics | None = None
    ) -> None:
        super().__init__(name, clock=clock, metrics=metrics)
        self._waiting: dict[K, float] = {}
        self._heap: list[tuple[float, int, K]] = []
        self._seq = itertools.count()

    def add_after(self, key: K, delay: float) -> None:
        """Add ``key`` after ``delay`` clock seconds (at once if ``delay <= 0``).

        A key already parked keeps the earlier of its two deadlines.
        """
        with self._cond:
            if self._shutting_down:
                return
            if self._metrics is not None:
                self._metrics.retried(self.name)
            if delay <= 0:
                self._add_locked(key)
                return
            ready_at = self._clock.now() + delay
            current = self._waiting.get(key)
            if current is not None and current <= ready_at:
                return
            self._waiting[key] = ready_at
            heapq.heappush(self._heap, (ready_at, next(self._seq), key))
            self._cond.notify_all()  # a blocked get() may need an earlier wake-up

    def _promote_ready(self) -> None:
        now = self._clock.now()
        while self._heap and self._heap[0][0] <= now:
            ready_at, _, key = heapq.heappop(self._heap)
            if self._waiting.get(key) == ready_at:
                del self._waiting[key]
                self._add_locked(key)

    def _next_ready_in(self) -> float | None:
        while self._heap and self._waiting.get(self._heap[0][2]) != self._heap[0][0]:
            heapq.heappop(self._heap)  # superseded by an earlier deadline
        if not self._heap:
            return None
        return max(0.0, self._heap[0][0] - self._clock.now())

    def _on_shut_down(self) -> None:
        self._waiting.clear()
        self._heap.clear()


class RateLimitingQueue(DelayingQueue[K]):
    """A ``DelayingQueue`` that parks failing keys for as long as its limiter says."""

    def __init__(
        self,
        name: str,
        rate_limiter: RateLimiter[K] | None = None,
        *,
        clock: Clock | None = None,
        metrics: QueueMetrics | None = None,
    ) -> None:
        super().__init__(name, clock=clock, metrics=metrics)
        self.rate_limiter: RateLimiter[K] = rate_limiter or default_controller_rate_limiter(
            self._clock
        )

    def add_rate_limited(self, key: K) -> None:
        """Add ``key`` once the rate limiter allows (one more failure on its record)."""
        self.add_after(key, self.rate_limiter.when(key))

    def forget(self, key: K) -> None:
        """Clear ``key``'s failure history (call it when a sync succeeds)."""
        self.rate_limiter.forget(key)

    def num_requeues(self, key: K) -> int:
        """How many times ``key`` has been rate-limited since the last ``forget``."""
        return self.rate_limiter.num_requeues(key)


SyncFunc = Callable[[K], float | None]


def process_next_work_item(
    queue: RateLimitingQueue[K], sync: SyncFunc[K], stop: threading.Event | None = None
) -> bool:
    """Take one key, sync it and decide its future; ``False`` when the worker should exit.

    What ``sync(key)`` does decides what happens to the key:

    - returns ``None``: done; its failure history is forgotten.
    - returns a delay: forgotten, then re-added after the delay (a planned requeue is not a
      failure, as with controller-runtime's ``RequeueAfter``).
    - raises ``TemporaryError(delay)``: like returning ``delay``; the reconcile chose the
      wait, so the backoff history is reset rather than grown.
    - raises ``PermanentError``: logged at ERROR, forgotten, not requeued; a later change to
      the object adds the key again.
    - raises anything else: logged with the key, re-added through the rate limiter.
    """
    key = queue.get()
    if key is None:
        return False
    try:
        if stop is not None and stop.is_set():
            return False
        _sync_one(queue, sync, key)
    finally:
        queue.done(key)
    return True


def _sync_one(queue: RateLimitingQueue[K], sync: SyncFunc[K], key: K) -> None:
    name = queue.name
    try:
        delay = sync(key)
    except TemporaryError as e:
        log.info("%s: %r: %s; retrying in %.3gs", name, key, e, e.delay)
        queue.forget(key)
        queue.add_after(key, e.delay)
    except PermanentError as e:
        log.error("%s: %r: %s; giving up until it changes", name, key, e)
        queue.forget(key)
    except ApiError as e:
        log.warning(
            "%s: error syncing %r: %s; requeued (%d)", name, key, e, queue.num_requeues(key) + 1
        )
        queue.add_rate_limited(key)
    except Exception:
        log.exception("%s: error syncing %r; requeued (%d)", name, key, queue.num_requeues(key) + 1)
        queue.add_rate_limited(key)
    else:
        queue.forget(key)
        if delay is not None:
            log.debug("%s: %r: requeue after %.3gs", name, key, delay)
            queue.add_after(key, delay)


def run_workers(
    queue: RateLimitingQueue[K],
    workers: int,
    sync: SyncFunc[K],
    stop: threading.Event,
    name: str | None = None,
    *,
    join_timeout: float | None = None,
) -> None:
    """Run ``workers`` threads ``controller:<name>:worker-<i>`` until ``stop`` is set.

    Blocks. Each worker loops ``process_next_work_item``. When ``stop`` is set the queue is
    shut down, no new key is started, and this returns once every in-flight sync has
    finished (or ``join_timeout`` real seconds have passed).
    """
    name = name or queue.name

    def loop() -> None:
        try:
            while process_next_work_item(queue, sync, stop):
                pass
        except BaseException:
            log.exception("%s: worker exited unexpectedly", name)
            raise

    threads = [
        threading.Thread(target=loop, name=f"controller:{name}:worker-{i}", daemon=True)
        for i in range(workers)
    ]
    for thread in threads:
        thread.start()
    log.info("%s: started %d workers", name, workers)
    stop.wait()
    queue.shut_down()
    for thread in threads:
        thread.join(join_timeout)
    log.info("%s: workers stopped", name)
