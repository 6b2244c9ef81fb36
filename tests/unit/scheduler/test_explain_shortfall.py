"""``explain``'s shortfall: per tier, per SubJob, per predicate, in the condition's words."""

from __future__ import annotations

from typing import Any

from tests.unit.scheduler.objects import expand
from volcano_py.commands.explain_shortfall import shortfall, shortfall_lines
from volcano_py.scheduler.simulator import Simulator

JSON = dict[str, Any]
GPU = "nvidia.com/gpu"


def _racks(pods: JSON, podgroup: JSON, nodes: int = 4) -> list[JSON]:
    return expand(
        {
            "nodes": [{"name": f"node-{i}", "allocatable": {GPU: 4}} for i in range(1, nodes + 1)],
            "hypernodes": [
                {"name": "tor-1", "tier": 1, "nodes": ["node-1", "node-2"]},
                {"name": "tor-2", "tier": 1, "nodes": ["node-3", "node-4"]},
                {"name": "spine-1", "tier": 2, "children": ["tor-1", "tor-2"]},
            ],
            "podgroups": [podgroup],
            "pods": [pods],
        }
    )


def _condition_written(sim: Simulator, key: str) -> str:
    """The Unschedulable condition message one real cycle writes into the PodGroup."""
    sim.cycle()
    pg = sim.cache.podgroup(key) or {}
    return " ".join(
        c.get("message", "")
        for c in (pg.get("status") or {}).get("conditions") or []
        if c.get("type") == "Unschedulable"
    )


def test_a_gang_too_big_for_any_rack_is_short_per_tier_as_the_condition_says() -> None:
    objects = _racks(
        {"name": "big", "count": 10, "group": "big", "requests": {GPU: 1}},
        {"name": "big", "minMember": 10, "mode": "hard", "highest_tier": 1},
    )
    report = shortfall(Simulator(objects), "default/big")
    assert report["tiers"] == [
        {
            "tier": 1,
            "hyperNodes": 2,
            "fit": 0,
            "short": {GPU: "2"},
            "text": f"tier 1: 0/2 fit ({GPU} short by 2)",
        }
    ]
    assert f"tier 1: 0/2 fit ({GPU} short by 2)" in report["condition"]
    # the condition explain reports is the one the scheduler writes
    assert _condition_written(Simulator(objects), "default/big") == report["condition"]
    lines = shortfall_lines(report)
    assert lines[0] == f"condition: {report['condition']}"
    assert f"short: tier 1: 0/2 fit ({GPU} short by 2)" in lines


def test_a_predicate_that_fails_is_named_with_its_node_count() -> None:
    objects = _racks(
        {
            "name": "sel",
            "count": 2,
            "group": "sel",
            "requests": {GPU: 1},
            "node_selector": {"zone": "nowhere"},
        },
        {"name": "sel", "minMember": 2},
    )
    report = shortfall(Simulator(objects), "default/sel")
    assert report["condition"]
    assert set(report["predicates"]) == {"default/sel-0", "default/sel-1"}
    text = report["predicates"]["default/sel-0"]
    assert text.startswith("0/4 nodes are available: 4 ")
    assert "affinity/selector" in text
    assert f"unfit: task default/sel-0: {text}" in shortfall_lines(report)


def test_a_gang_that_fits_has_no_shortfall() -> None:
    objects = _racks(
        {"name": "small", "count": 4, "group": "small", "requests": {GPU: 1}},
        {"name": "small", "minMember": 4, "mode": "hard", "highest_tier": 1},
    )
    report = shortfall(Simulator(objects), "default/small")
    assert report == {"condition": "", "tiers": [], "subJobs": [], "predicates": {}}
    assert shortfall_lines(report) == ["shortfall: none, this cycle places the gang"]


def test_each_sub_job_says_what_it_lacks() -> None:
    objects = _racks(
        {
            "name": "part",
            "count": 10,
            "group": "part",
            "requests": {GPU: 1},
            "partition": {"label": "volcano.sh/partition-id", "size": 10},
        },
        {
            "name": "part",
            "minMember": 10,
            "mode": "hard",
            "highest_tier": 2,
            "sub_group_policy": [
                {
                    "name": "tp",
                    "subGroupSize": 10,
                    "matchLabelKeys": ["volcano.sh/partition-id"],
                    "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
                }
            ],
        },
    )
    sim = Simulator(objects)
    report = shortfall(sim, "default/part")
    assert report["condition"]
    # the gang (10 GPUs) fits the spine (16), its one SubJob not a rack (8)
    assert [s["subJob"] for s in report["subJobs"]] == ["tp/0"]
    for sub in report["subJobs"]:
        assert f"tier 1: 0/2 fit ({GPU} short by 2)" in sub["text"]
        assert sub["text"].startswith(f"SubJob {sub['subJob']} could not be placed in ")
    assert _condition_written(Simulator(objects), "default/part") == report["condition"]


def test_the_unfit_line_counts_every_node_when_each_pod_fits_somewhere() -> None:
    # 8 nodes, 2 tainted; a gang of 8 pods each needing a whole node: every pod fits on 6
    # nodes, the gang does not. The line must agree with the per-node list (6 feasible).
    taint = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
    objects = expand(
        {
            "nodes": [{"name": "n", "count": 6}, {"name": "t", "count": 2, "taints": taint}],
            "podgroups": [{"name": "g", "minMember": 8}],
            "pods": [{"name": "g", "count": 8, "group": "g", "requests": {"cpu": 8}}],
        }
    )
    report = shortfall(Simulator(objects), "default/g")
    assert report["predicates"]["default/g-0"] == (
        "6/8 nodes are available: 2 node(s) had untolerated taint {dedicated: x}."
    )
