from __future__ import annotations

import itertools
import logging
import re
import sys
import threading
from collections.abc import Callable, Iterator

import pytest

from tests.unit.waits import WAIT_S
from volcano_py.kube.clock import FakeClock
from volcano_py.kube.errors import Conflict, PermanentError, TemporaryError
from volcano_py.kube.ratelimit import BucketRateLimiter, ItemExponentialFailureRateLimiter
from volcano_py.kube.workqueue import (
    DelayingQueue,
    QueueCounters,
    RateLimitingQueue,
    WorkQueue,
    default_controller_rate_limiter,
    process_next_work_item,
    run_workers,
)


@pytest.fixture
def fast_thread_switching() -> Iterator[None]:
    """Switch threads every few microseconds, so races show up in a short test."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(previous)


def drain(queue: WorkQueue[str]) -> list[str]:
    """Take (and finish) every key queued right now."""
    keys = []
    for _ in range(len(queue)):
        key = queue.get()
        assert key is not None
        keys.append(key)
        queue.done(key)
    return keys


# -- WorkQueue ---------------------------------------------------------------------------


def test_workqueue_hands_out_keys_fifo_and_dedups_queued_keys() -> None:
    queue: WorkQueue[str] = WorkQueue("q", clock=FakeClock())
    for key in ["a", "b", "a", "c", "b"]:
        queue.add(key)
    assert len(queue) == 3
    assert drain(queue) == ["a", "b", "c"]


def test_workqueue_coalesces_adds_while_processing_into_one_requeue_on_done() -> None:
    queue: WorkQueue[str] = WorkQueue("q", clock=FakeClock())
    queue.add("a")
    assert queue.get() == "a"
    queue.add("a")
    queue.add("a")
    assert len(queue) == 0, "a key being processed must not be handed to another worker"
    queue.done("a")
    assert len(queue) == 1
    assert queue.get() == "a"
    queue.done("a")
    assert len(queue) == 0


def test_workqueue_holds_back_a_key_re_added_while_a_worker_has_it() -> None:
    clock = FakeClock()
    queue: WorkQueue[str] = WorkQueue("q", clock=clock)
    queue.add("a")
    assert queue.get() == "a"
    queue.add("a")
    got: list[str | None] = []
    second_worker = threading.Thread(target=lambda: got.append(queue.get()))
    second_worker.start()
    assert clock.block_until_waiters(1), "the second worker must wait, not take 'a'"
    assert got == []
    queue.done("a")
    second_worker.join(WAIT_S)
    assert got == ["a"]


def test_workqueue_never_gives_one_key_to_two_workers_and_processes_after_last_add(
    fast_thread_switching: None,
) -> None:
    queue: WorkQueue[str] = WorkQueue("q", clock=FakeClock())
    keys = [f"k{i}" for i in range(5)]
    tick = itertools.count()
    lock = threading.Lock()
    active: set[str] = set()
    overlaps: list[str] = []
    last_add: dict[str, int] = {}
    last_start: dict[str, int] = {}

    def worker() -> None:
        while (key := queue.get()) is not None:
            with lock:
                if key in active:
                    overlaps.append(key)
                active.add(key)
                last_start[key] = next(tick)
            sum(range(200))  # a little work, so adds land while keys are being processed
            with lock:
                active.discard(key)
            queue.done(key)

    workers = [threading.Thread(target=worker) for _ in range(4)]
    for thread in workers:
        thread.start()
    for i in range(400):
        key = keys[i % len(keys)]
        with lock:
            last_add[key] = next(tick)
        queue.add(key)
    queue.shut_down()
    for thread in workers:
        thread.join(WAIT_S)
    assert not any(thread.is_alive() for thread in workers)
    assert overlaps == []
    assert all(last_start[key] > last_add[key] for key in keys), (last_add, last_start)


def test_workqueue_shut_down_unblocks_every_getter() -> None:
    clock = FakeClock()
    queue: WorkQueue[str] = WorkQueue("q", clock=clock)
    results: list[str | None] = []
    getters = [threading.Thread(target=lambda: results.append(queue.get())) for _ in range(3)]
    for thread in getters:
        thread.start()
    assert clock.block_until_waiters(3)
    queue.shut_down()
    for thread in getters:
        thread.join(WAIT_S)
    assert results == [None, None, None]


def test_workqueue_after_shut_down_hands_out_queued_keys_then_none_and_ignores_adds() -> None:
    queue: WorkQueue[str] = WorkQueue("q", clock=FakeClock())
    queue.add("a")
    queue.shut_down()
    queue.add("b")
    assert queue.shutting_down
    assert queue.get() == "a"
    assert queue.get() is None


def test_workqueue_shut_down_with_drain_waits_for_keys_in_flight() -> None:
    queue: WorkQueue[str] = WorkQueue("q", clock=FakeClock())
    queue.add("a")
    assert queue.get() == "a"
    drainer = threading.Thread(target=queue.shut_down_with_drain)
    drainer.start()
    drainer.join(0.05)
    assert drainer.is_alive(), "drain must wait for done()"
    queue.add("late")
    queue.done("a")
    drainer.join(WAIT_S)
    assert not drainer.is_alive()
    assert queue.get() is None


def test_workqueue_reports_depth_adds_latency_and_work_duration() -> None:
    clock = FakeClock()
    metrics = QueueCounters()
    queue: WorkQueue[str] = WorkQueue("pg-controller", clock=clock, metrics=metrics)
    queue.add("a")
    queue.add("a")
    queue.add("b")
    assert metrics.adds["pg-controller"] == 2
    assert metrics.depths["pg-controller"] == 2
    clock.step(1.0)
    assert queue.get() == "a"
    assert metrics.depths["pg-controller"] == 1
    assert metrics.latency_seconds["pg-controller"] == pytest.approx(1.0)
    clock.step(3.0)
    queue.done("a")
    assert metrics.work_seconds["pg-controller"] == pytest.approx(3.0)
    assert metrics.work_count["pg-controller"] == 1


# -- DelayingQueue -----------------------------------------------------------------------


def test_delaying_queue_releases_keys_in_deadline_order_as_the_clock_steps() -> None:
    clock = FakeClock()
    queue: DelayingQueue[str] = DelayingQueue("q", clock=clock)
    queue.add_after("c", 3.0)
    queue.add_after("a", 1.0)
    queue.add_after("b", 2.0)
    queue.add_after("b2", 2.0)
    queue.add_after("now", 0)
    assert drain(queue) == ["now"]
    clock.step(0.999)
    assert len(queue) == 0
    clock.step(0.001)
    assert drain(queue) == ["a"]
    clock.step(1.0)
    assert drain(queue) == ["b", "b2"]
    clock.step(1.0)
    assert drain(queue) == ["c"]


def test_delaying_queue_keeps_the_earlier_deadline_for_a_parked_key() -> None:
    clock = FakeClock()
    queue: DelayingQueue[str] = DelayingQueue("q", clock=clock)
    queue.add_after("a", 5.0)
    queue.add_after("a", 1.0)
    queue.add_after("a", 10.0)
    clock.step(1.0)
    assert drain(queue) == ["a"]
    clock.step(20.0)
    assert len(queue) == 0, "superseded deadlines must not add the key again"


def test_delaying_queue_blocked_get_wakes_when_the_clock_reaches_the_deadline() -> None:
    clock = FakeClock()
    queue: DelayingQueue[str] = DelayingQueue("q", clock=clock)
    got: list[str | None] = []
    getter = threading.Thread(target=lambda: got.append(queue.get()))
    getter.start()
    assert clock.block_until_waiters(1)
    queue.add_after("a", 2.0)
    assert clock.block_until_waiters(1)
    clock.step(2.0)
    getter.join(WAIT_S)
    assert got == ["a"]


def test_delaying_queue_drops_parked_keys_on_shut_down() -> None:
    clock = FakeClock()
    queue: DelayingQueue[str] = DelayingQueue("q", clock=clock)
    queue.add_after("a", 1.0)
    queue.shut_down()
    queue.add_after("b", 0)
    clock.step(5.0)
    assert queue.get() is None


# -- rate limiters -----------------------------------------------------------------------


def test_exponential_limiter_doubles_from_5ms_and_caps_at_1000s() -> None:
    limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter()
    delays = [limiter.when("a") for _ in range(25)]
    assert delays[:5] == pytest.approx([0.005, 0.01, 0.02, 0.04, 0.08])
    assert delays[17] == pytest.approx(0.005 * 2**17)  # 655.36 s, still under the cap
    assert delays[18:] == [1000.0] * 7
    assert limiter.num_requeues("a") == 25
    assert limiter.when("b") == 0.005, "keys back off independently"


def test_exponential_limiter_forget_resets_the_backoff() -> None:
    limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter()
    limiter.when("a")
    limiter.when("a")
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0
    assert limiter.when("a") == 0.005


def test_exponential_limiter_survives_huge_failure_counts() -> None:
    limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter()
    for _ in range(1100):
        delay = limiter.when("a")
    assert delay == 1000.0


def test_bucket_limiter_allows_burst_then_spaces_at_qps_and_refills() -> None:
    clock = FakeClock()
    limiter: BucketRateLimiter[str] = BucketRateLimiter(10.0, 100, clock=clock)
    assert [limiter.when(f"k{i}") for i in range(100)] == [0.0] * 100
    assert limiter.when("x") == pytest.approx(0.1)
    assert limiter.when("y") == pytest.approx(0.2)
    clock.step(1.0)  # +10 tokens, 2 were borrowed
    assert [limiter.when(f"z{i}") for i in range(8)] == [0.0] * 8
    assert limiter.when("w") == pytest.approx(0.1)


def test_default_controller_limiter_is_the_slower_of_backoff_and_bucket() -> None:
    clock = FakeClock()
    limiter = default_controller_rate_limiter(clock)
    assert [limiter.when(f"k{i}") for i in range(100)] == [0.005] * 100
    assert limiter.when("k100") == pytest.approx(0.1), "the bucket kicks in after 100"
    clock.step(100.0)
    for _ in range(14):
        limiter.when("a")
    assert limiter.when("a") == pytest.approx(0.005 * 2**14)
    assert limiter.num_requeues("a") == 15
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0


def test_rate_limiting_queue_parks_failures_and_forget_resets() -> None:
    clock = FakeClock()
    metrics = QueueCounters()
    queue: RateLimitingQueue[str] = RateLimitingQueue("q", clock=clock, metrics=metrics)
    queue.add_rate_limited("a")
    queue.add_rate_limited("a")
    assert queue.num_requeues("a") == 2
    assert len(queue) == 0
    clock.step(0.005)
    assert drain(queue) == ["a"]
    assert metrics.retries["q"] == 2
    queue.forget("a")
    assert queue.num_requeues("a") == 0


# -- the worker loop ---------------------------------------------------------------------


def raises(error: Exception) -> Callable[[str], float | None]:
    def sync(key: str) -> float | None:
        raise error

    return sync


@pytest.mark.parametrize(
    ("sync", "parked_for", "requeues_after"),
    [
        (lambda key: None, None, 0),
        (lambda key: 5.0, 5.0, 0),
        (raises(TemporaryError("not yet", delay=3.0)), 3.0, 0),
        (raises(PermanentError("bad spec")), None, 0),
        (raises(RuntimeError("boom")), 0.005 * 2**2, 3),
        (raises(Conflict(409, "Conflict", "stale")), 0.005 * 2**2, 3),
    ],
    ids=["success", "requeue-after", "temporary", "permanent", "exception", "api-error"],
)
def test_process_next_work_item_decides_the_keys_future(
    sync: Callable[[str], float | None], parked_for: float | None, requeues_after: int
) -> None:
    clock = FakeClock()
    queue: RateLimitingQueue[str] = RateLimitingQueue("q", clock=clock)
    queue.rate_limiter.when("ns/a")  # two earlier failures on record
    queue.rate_limiter.when("ns/a")
    queue.add("ns/a")
    assert process_next_work_item(queue, sync) is True
    assert queue.num_requeues("ns/a") == requeues_after
    clock.step(1000.0 if parked_for is None else parked_for - 1e-9)
    assert len(queue) == 0
    if parked_for is not None:
        clock.step(1e-9)
        assert drain(queue) == ["ns/a"]


def test_process_next_work_item_logs_errors_with_the_key(caplog: pytest.LogCaptureFixture) -> None:
    queue: RateLimitingQueue[str] = RateLimitingQueue("pg-controller", clock=FakeClock())
    queue.add("ns/a")
    queue.add("ns/b")
    with caplog.at_level(logging.INFO, logger="volcano_py.kube.workqueue"):
        process_next_work_item(queue, raises(PermanentError("bad spec")))
        process_next_work_item(queue, raises(ValueError("boom")))
    permanent, failed = caplog.records
    assert permanent.levelno == logging.ERROR
    assert "'ns/a'" in permanent.getMessage()
    assert "bad spec" in permanent.getMessage()
    assert failed.levelno == logging.ERROR
    assert "'ns/b'" in failed.getMessage()
    assert failed.exc_info is not None


def test_process_next_work_item_returns_false_once_shut_down() -> None:
    queue: RateLimitingQueue[str] = RateLimitingQueue("q", clock=FakeClock())
    queue.shut_down()
    assert process_next_work_item(queue, lambda key: None) is False


def test_run_workers_uses_named_threads_and_returns_after_stop() -> None:
    queue: RateLimitingQueue[str] = RateLimitingQueue("pg-controller", clock=FakeClock())
    stop = threading.Event()
    seen: dict[str, str] = {}
    all_seen = threading.Event()

    def sync(key: str) -> float | None:
        seen[key] = threading.current_thread().name
        if len(seen) == 3:
            all_seen.set()
        return None

    for key in ["a", "b", "c"]:
        queue.add(key)
    runner = threading.Thread(target=run_workers, args=(queue, 2, sync, stop, "pg-controller"))
    runner.start()
    assert all_seen.wait(WAIT_S)
    stop.set()
    runner.join(WAIT_S)
    assert not runner.is_alive()
    assert queue.shutting_down
    assert all(re.fullmatch(r"controller:pg-controller:worker-[01]", n) for n in seen.values())
