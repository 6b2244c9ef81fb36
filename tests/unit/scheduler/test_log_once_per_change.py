"""Lines about a job that hold for many cycles are logged once per change, not per cycle."""

from __future__ import annotations

import logging

import pytest

from tests.unit.scheduler.objects import hypernode, node, podgroup
from volcano_py.scheduler.simulator import Simulator


def _cluster(allocated: str) -> list[dict[str, object]]:
    return [
        node("n1"),
        node("n2"),
        hypernode("rack-1", 1, nodes=["n1"]),
        hypernode("rack-2", 1, nodes=["n2"]),
        podgroup(
            "no-pods",
            2,
            mode="hard",
            highest_tier=1,
            annotations={"volcano.sh/job-allocated-hypernode": allocated},
        ),
        podgroup("soft", 1, mode="soft", highest_tier_name="no-such-tier"),
    ]


def _lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "volcano_py.scheduler.topology"]


def test_podgroup_without_pods_logs_its_dropped_hypernode_once_over_many_cycles(
    caplog: pytest.LogCaptureFixture,
) -> None:
    sim = Simulator(_cluster("rack-1"))
    with caplog.at_level(logging.INFO, logger="volcano_py.scheduler.topology"):
        for _ in range(10):
            sim.cycle()
    assert sorted(_lines(caplog)) == [
        "job default/no-pods: dropping AllocatedHyperNode rack-1 (gone or nothing placed)",
        "job default/soft: highestTierName 'no-such-tier' is unknown; soft mode goes on without it",
    ]


def test_a_changed_fact_is_logged_again(caplog: pytest.LogCaptureFixture) -> None:
    sim = Simulator(_cluster("rack-1"))
    with caplog.at_level(logging.INFO, logger="volcano_py.scheduler.topology"):
        for _ in range(3):
            sim.cycle()
        sim.cache.update_podgroup(_cluster("rack-2")[4])  # the annotation now says rack-2
        for _ in range(3):
            sim.cycle()
    dropped = [line for line in _lines(caplog) if "dropping" in line]
    assert [line.split()[-5] for line in dropped] == ["rack-1", "rack-2"]
