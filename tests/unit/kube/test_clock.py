from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest

from tests.unit.waits import WAIT_S
from volcano_py.kube.clock import FakeClock, RealClock


def test_fake_clock_step_moves_now_and_wall_together() -> None:
    clock = FakeClock(start=10.0, wall_start=datetime(2025, 3, 1, tzinfo=UTC))
    clock.step(1.5)
    assert clock.now() == 11.5
    assert clock.wall() == datetime(2025, 3, 1, 0, 0, 1, 500000, tzinfo=UTC)
    clock.set(20.0)
    assert clock.now() == 20.0


@pytest.mark.parametrize("move", [lambda c: c.step(-1), lambda c: c.set(0.0)], ids=["step", "set"])
def test_fake_clock_refuses_to_go_backwards(move: object) -> None:
    clock = FakeClock(start=5.0)
    with pytest.raises(ValueError, match=r"backwards|go back"):
        move(clock)  # type: ignore[operator]


def test_fake_clock_sleep_returns_only_when_stepped_past_the_deadline() -> None:
    clock = FakeClock()
    woke = threading.Event()
    sleeper = threading.Thread(target=lambda: (clock.sleep(5), woke.set()))
    sleeper.start()
    assert clock.block_until_waiters(1)
    clock.step(4.9)
    assert not woke.wait(0.01)
    clock.step(0.1)
    assert woke.wait(WAIT_S)
    sleeper.join(WAIT_S)


def test_fake_clock_wait_event_times_out_on_step_and_returns_early_on_set() -> None:
    clock = FakeClock()
    stop = threading.Event()
    results: list[bool] = []

    def waiter() -> None:
        results.append(clock.wait_event(stop, 2.0))
        results.append(clock.wait_event(stop, 100.0))

    thread = threading.Thread(target=waiter)
    thread.start()
    assert clock.block_until_waiters(1)
    clock.step(2.0)
    assert clock.block_until_waiters(1)
    stop.set()
    thread.join(WAIT_S)
    assert results == [False, True]


def test_fake_clock_wait_wakes_condition_waiters_on_step() -> None:
    clock = FakeClock()
    cond = threading.Condition()
    woke = threading.Event()

    def waiter() -> None:
        with cond:
            clock.wait(cond, 3.0)
        woke.set()

    thread = threading.Thread(target=waiter)
    thread.start()
    assert clock.block_until_waiters(1)
    clock.step(3.0)
    assert woke.wait(WAIT_S)
    thread.join(WAIT_S)
    assert clock.waiters() == 0


def test_real_clock_wall_is_aware_utc_and_now_is_monotonic() -> None:
    clock = RealClock()
    assert clock.wall().tzinfo is UTC
    first = clock.now()
    assert clock.now() >= first
    assert clock.wait_event(threading.Event(), 0) is False
