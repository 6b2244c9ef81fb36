"""bench_vs_kube_scheduler starts a timed run just after kwok's node-Lease renewals end."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

import bench.bench_vs_kube_scheduler as bench


class Leases:
    """A client whose node Leases were renewed at the times ``ages`` gives (seconds ago)."""

    def __init__(self, ages: Callable[[int], list[float]]) -> None:
        self.ages = ages
        self.calls = 0

    def list(self, resource: Any, namespace: str, *, limit: int) -> dict[str, Any]:
        assert (resource, namespace) == (bench.R.LEASES, "kube-node-lease")
        self.calls += 1
        now = time.time()
        return {
            "items": [
                {"spec": {"renewTime": datetime.fromtimestamp(now - age, UTC).isoformat()}}
                for age in self.ages(self.calls)[:limit]
            ]
        }


def test_starts_at_once_when_every_lease_was_renewed_in_the_burst_that_just_ended() -> None:
    client = Leases(lambda call: [0.5 + i / 100 for i in range(500)])  # 0.5-5.5 s ago
    assert bench.lease_lull(client)  # type: ignore[arg-type]
    assert client.calls == 1


def test_waits_while_a_burst_goes_on_and_starts_once_it_ends() -> None:
    # calls 1-2: half the Leases fresh, half a period old (mid-burst); then all renewed
    def ages(call: int) -> list[float]:
        if call <= 2:
            return [0.0] * 250 + [9.5] * 250
        return [0.4] * 250 + [3.0] * 250

    client = Leases(ages)
    assert bench.lease_lull(client)  # type: ignore[arg-type]
    assert client.calls == 3


def test_a_lull_long_under_way_is_not_taken_as_the_start_of_one() -> None:
    # the last renewal 3 s ago: most of the lull is gone, so the next one is waited for
    client = Leases(lambda call: [3.0] * 500 if call == 1 else [0.5] * 500)
    assert bench.lease_lull(client)  # type: ignore[arg-type]
    assert client.calls == 2


def test_gives_up_after_one_period_when_the_renewals_never_pause(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(bench, "LEASE_RENEW_S", 0.5)
    client = Leases(lambda call: [0.0, 5.0])  # renewed just now and long ago, always
    assert not bench.lease_lull(client)  # type: ignore[arg-type]
