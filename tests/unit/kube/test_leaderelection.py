from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from tests.unit.kube.memclient import MemoryClient
from tests.unit.waits import WAIT_S
from volcano_py.api.resources import LEASES
from volcano_py.kube.clock import FakeClock
from volcano_py.kube.errors import Conflict, ServerError
from volcano_py.kube.events import FakeRecorder
from volcano_py.kube.leaderelection import LeaderElector

NS, NAME = "volcano-system", "volcano-py"
T0 = "2025-01-01T00:00:00.000000Z"


def elector(
    client: MemoryClient, clock: FakeClock, identity: str = "me", **kw: Any
) -> LeaderElector:
    return LeaderElector(client, NS, NAME, identity, clock=clock, rand=lambda: 0.0, **kw)


def lease_spec(client: MemoryClient) -> dict[str, Any]:
    return dict(client.stored(LEASES, NAME, NS)["spec"])


def existing_lease(
    client: MemoryClient, holder: str, renew: str = T0, transitions: int = 3
) -> None:
    client.create(
        LEASES,
        {
            "metadata": {"name": NAME, "namespace": NS},
            "spec": {
                "holderIdentity": holder,
                "leaseDurationSeconds": 15,
                "acquireTime": renew,
                "renewTime": renew,
                "leaseTransitions": transitions,
            },
        },
    )


def test_elector_creates_the_lease_when_absent() -> None:
    client, clock = MemoryClient(), FakeClock()
    assert elector(client, clock).try_acquire_or_renew()
    assert lease_spec(client) == {
        "holderIdentity": "me",
        "leaseDurationSeconds": 15,
        "acquireTime": T0,
        "renewTime": T0,
        "leaseTransitions": 0,
    }


def test_elector_waits_for_expiry_measured_from_its_own_observation() -> None:
    client, clock = MemoryClient(), FakeClock()
    # renewTime is decades old: a remote timestamp must not count, only our observation does
    existing_lease(client, "other", renew="2000-01-01T00:00:00.000000Z")
    me = elector(client, clock)
    assert not me.try_acquire_or_renew()
    clock.step(14.9)
    assert not me.try_acquire_or_renew()
    clock.step(0.2)
    assert me.try_acquire_or_renew()
    spec = lease_spec(client)
    assert spec["holderIdentity"] == "me"
    assert spec["leaseTransitions"] == 4
    assert spec["acquireTime"] == spec["renewTime"] == "2025-01-01T00:00:15.100000Z"


def test_elector_restarts_the_expiry_window_when_the_holder_renews() -> None:
    client, clock = MemoryClient(), FakeClock()
    existing_lease(client, "other")
    me = elector(client, clock)
    assert not me.try_acquire_or_renew()
    clock.step(10)
    client.bump(LEASES, NAME, NS, renewTime="2025-01-01T00:00:10.000000Z")
    assert not me.try_acquire_or_renew()
    clock.step(10)
    assert not me.try_acquire_or_renew(), "renewed 10 s ago by our clock"
    clock.step(5.1)
    assert me.try_acquire_or_renew()


def test_elector_takes_a_released_lease_at_once() -> None:
    client, clock = MemoryClient(), FakeClock()
    existing_lease(client, "")
    assert elector(client, clock).try_acquire_or_renew()
    assert lease_spec(client)["leaseTransitions"] == 4


def test_elector_keeps_acquire_time_and_transitions_when_the_lease_is_already_its_own() -> None:
    client, clock = MemoryClient(), FakeClock()
    existing_lease(client, "me", renew="2024-12-31T23:59:00.000000Z")
    assert elector(client, clock).try_acquire_or_renew()
    spec = lease_spec(client)
    assert spec["acquireTime"] == "2024-12-31T23:59:00.000000Z"
    assert spec["renewTime"] == T0
    assert spec["leaseTransitions"] == 3


def test_elector_renews_with_one_update_and_keeps_acquire_time() -> None:
    client, clock = MemoryClient(), FakeClock()
    me = elector(client, clock)
    assert me.try_acquire_or_renew()
    client.calls.clear()
    clock.step(2)
    assert me.try_acquire_or_renew()
    assert client.calls == [("update", "leases", NAME)]
    spec = lease_spec(client)
    assert spec["acquireTime"] == T0
    assert spec["renewTime"] == "2025-01-01T00:00:02.000000Z"


def test_elector_loses_the_race_on_conflict() -> None:
    client, clock = MemoryClient(), FakeClock()
    existing_lease(client, "")
    client.fail("update", Conflict(409, "Conflict", "the object has been modified"))
    me = elector(client, clock)
    assert not me.try_acquire_or_renew()
    assert lease_spec(client)["holderIdentity"] == ""
    assert me.try_acquire_or_renew(), "the next period tries again"


def test_elector_release_clears_the_holder_so_a_successor_takes_over_immediately() -> None:
    client, clock = MemoryClient(), FakeClock()
    me, successor = elector(client, clock), elector(client, clock, "successor")
    assert me.try_acquire_or_renew()
    assert not successor.try_acquire_or_renew()
    clock.step(1)
    assert me.release()
    spec = lease_spec(client)
    assert spec["holderIdentity"] == ""
    assert spec["leaseDurationSeconds"] == 1
    assert spec["leaseTransitions"] == 0
    assert successor.try_acquire_or_renew()
    assert lease_spec(client)["holderIdentity"] == "successor"


@pytest.mark.parametrize(
    "durations",
    [
        {"lease_duration": 10, "renew_deadline": 10},
        {"renew_deadline": 2.4, "retry_period": 2},
        {"retry_period": 0},
        {"lease_duration": 0.5, "renew_deadline": 0.4, "retry_period": 0.1},
    ],
    ids=[
        "lease-not-longer-than-deadline",
        "deadline-within-jittered-retry",
        "zero-retry",
        "sub-second-lease",
    ],
)
def test_elector_rejects_inconsistent_durations(durations: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="must"):
        elector(MemoryClient(), FakeClock(), **durations)


# -- run(): the loop on its thread, driven by the fake clock -------------------------------


class Callbacks:
    def __init__(self) -> None:
        self.started = threading.Event()
        self.stopped = threading.Event()
        self.leading_stop: threading.Event | None = None
        self.leaders: list[str] = []

    def kwargs(self) -> dict[str, Any]:
        return {
            "on_started_leading": self.on_started,
            "on_stopped_leading": self.stopped.set,
            "on_new_leader": self.leaders.append,
        }

    def on_started(self, leading_stop: threading.Event) -> None:
        self.leading_stop = leading_stop
        self.started.set()
        leading_stop.wait(WAIT_S)  # leader-only work runs until leadership ends


def step_until(clock: FakeClock, done: threading.Event, seconds: float) -> None:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if done.is_set():
            return
        if clock.block_until_waiters(1, timeout=0.05):
            clock.step(seconds)
    raise AssertionError("never happened")


def test_elector_run_leads_then_releases_on_stop() -> None:
    client, clock, cb = MemoryClient(), FakeClock(), Callbacks()
    recorder = FakeRecorder()
    me = elector(client, clock, recorder=recorder, **cb.kwargs())
    stop = threading.Event()
    thread = me.start(stop)
    assert thread.name == "leader-election"
    assert cb.started.wait(WAIT_S)
    assert me.is_leader()
    stop.set()
    thread.join(WAIT_S)
    assert cb.stopped.is_set()
    assert cb.leading_stop is not None
    assert cb.leading_stop.is_set()
    assert not me.is_leader()
    assert lease_spec(client)["holderIdentity"] == ""
    assert cb.leaders == ["me"]
    assert [e[2] for e in recorder.events] == ["me became leader", "me stopped leading"]


def test_elector_run_stops_leading_when_renewals_fail_past_the_deadline() -> None:
    client, clock, cb = MemoryClient(), FakeClock(), Callbacks()
    me = elector(client, clock, **cb.kwargs())
    stop = threading.Event()
    thread = me.start(stop)
    assert cb.started.wait(WAIT_S)
    broken = [ServerError(500, "InternalError", "etcd down") for _ in range(50)]
    client.fail("update", *broken)
    client.fail("get", *broken)
    start = clock.now()
    step_until(clock, cb.stopped, 2.0)
    thread.join(WAIT_S)
    assert not thread.is_alive(), "run returns once leadership is lost"
    assert not me.is_leader()
    assert cb.leading_stop is not None
    assert cb.leading_stop.is_set()
    # last success at t0, renewal rounds from t0+2 fail until the 10 s deadline passes
    assert clock.now() - start == pytest.approx(12.0)


def test_elector_run_stops_leading_at_once_when_another_holder_appears() -> None:
    client, clock, cb = MemoryClient(), FakeClock(), Callbacks()
    me = elector(client, clock, **cb.kwargs())
    stop = threading.Event()
    thread = me.start(stop)
    assert cb.started.wait(WAIT_S)
    assert clock.block_until_waiters(1)
    client.bump(LEASES, NAME, NS, holderIdentity="usurper")
    clock.step(2.0)
    assert cb.stopped.wait(WAIT_S)
    thread.join(WAIT_S)
    assert not me.is_leader()
    assert cb.leaders == ["me", "usurper"]
    assert lease_spec(client)["holderIdentity"] == "usurper", "a lost lease is not released"


def test_elector_fence_closes_renew_deadline_after_the_last_renewal_was_sent() -> None:
    client, clock, cb = MemoryClient(), FakeClock(), Callbacks()
    me = elector(client, clock, **cb.kwargs())
    assert not me.holds_lease()
    stop = threading.Event()
    thread = me.start(stop)
    assert cb.started.wait(WAIT_S)
    assert me.holds_lease()
    # The process is paused (no renewal runs) while time passes: the fence closes at the
    # renew deadline, before the election thread has noticed anything.
    clock.step(9.9)
    assert me.is_leader()
    assert me.holds_lease()
    clock.step(0.2)
    assert me.is_leader()
    assert not me.holds_lease()
    stop.set()
    thread.join(WAIT_S)
    assert not me.holds_lease()
