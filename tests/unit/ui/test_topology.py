"""The topology view's JSON builder and its cache policy, on a scheduler cache (no sockets)."""

from __future__ import annotations

import gzip
from typing import Any

import orjson

from tests.unit.scheduler.objects import hypernode, node, pod, podgroup
from volcano_py.api.constants import (
    JOB_ALLOCATED_HYPERNODE_ANNOTATION,
    NETWORK_TOPOLOGY_SOURCE_LABEL,
)
from volcano_py.scheduler.cache import SchedulerCache
from volcano_py.scheduler.treeview import tree_report
from volcano_py.ui.topology import topology_json
from volcano_py.ui.view import TopologyView, page

JSON = dict[str, Any]
RACK_MESSAGE = "tier 1: no HyperNode has 4 free nvidia.com/gpu for the gang"


def _cluster() -> SchedulerCache:
    """Two racks of two GPU nodes under one spine; one gang placed in rack-a, one pending."""
    cache = SchedulerCache()
    for name in ("n-a1", "n-a2", "n-b1", "n-b2"):
        cache.update_node(node(name, {"nvidia.com/gpu": 8}))
    rack_a = hypernode("rack-a", 1, nodes=["n-a1", "n-a2"], tier_name="rack")
    rack_a["metadata"]["labels"] = {NETWORK_TOPOLOGY_SOURCE_LABEL: "label"}
    rack_b = hypernode("rack-b", 1, nodes=["n-b1", "n-b2"], tier_name="rack")
    rack_b["metadata"]["labels"] = {NETWORK_TOPOLOGY_SOURCE_LABEL: "label"}
    rack_b["status"] = {
        "conditions": [
            {
                "type": "DiscoveryStale",
                "status": "True",
                "reason": "SourceError",
                "message": "label: nodes unreadable",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            }
        ]
    }
    for hn in (rack_a, rack_b, hypernode("spine", 2, children=["rack-a", "rack-b"])):
        cache.update_hypernode(hn)
    running = podgroup(
        "train",
        2,
        phase="Running",
        annotations={JOB_ALLOCATED_HYPERNODE_ANNOTATION: "rack-a"},
    )
    cache.update_podgroup(running)
    for i, where in enumerate(("n-a1", "n-a2")):
        cache.update_pod(
            pod(f"train-{i}", "train", {"nvidia.com/gpu": 6}, node_name=where, phase="Running")
        )
    waiting = podgroup("big", 4, phase="Pending", mode="hard", highest_tier=1)
    waiting["status"]["conditions"] = [
        {
            "type": "Unschedulable",
            "status": "True",
            "reason": "NotEnoughResources",
            "message": RACK_MESSAGE,
        },
    ]
    cache.update_podgroup(waiting)
    for i in range(4):
        cache.update_pod(pod(f"big-{i}", "big", {"nvidia.com/gpu": 4}))
    return cache


def _json(cache: SchedulerCache) -> JSON:
    return topology_json(cache.snapshot(), cache.hypernodes.objects())


def test_topology_hypernodes_carry_tier_counts_and_free_over_total() -> None:
    hns = _json(_cluster())["hyperNodes"]
    assert hns["rack-a"]["tier"] == 1
    assert hns["rack-a"]["tierName"] == "rack"
    assert hns["rack-a"]["parent"] == "spine"
    assert hns["rack-a"]["nodes"] == ["n-a1", "n-a2"]
    assert hns["rack-a"]["gpu"] == [4, 16]
    assert hns["rack-b"]["gpu"] == [16, 16]
    assert hns["spine"]["gpu"] == [20, 32]
    assert hns["spine"]["cpu"] == [32000, 32000]
    assert hns["spine"]["memory"][1] == 4 * 32 * 2**30
    assert hns["spine"]["nodeCount"] == 4
    # a parent lists no node of its own: they all sit under its children
    assert hns["spine"]["nodes"] == []
    assert hns["spine"]["children"] == ["rack-a", "rack-b"]


def test_topology_figures_are_the_ones_volcano_py_tree_prints() -> None:
    cache = _cluster()
    data, report = _json(cache), tree_report(cache)
    for name, hn in report["hyperNodes"].items():
        assert data["hyperNodes"][name]["nodeCount"] == hn["nodeCount"]
        assert str(data["hyperNodes"][name]["gpu"][0]) == hn["free"]["gpu"]


def test_topology_running_gang_sits_in_its_allocated_hypernode() -> None:
    gangs = {g["name"]: g for g in _json(_cluster())["gangs"]}
    assert gangs["train"]["hyperNode"] == "rack-a"
    assert gangs["train"]["placed"] == 2
    assert gangs["train"]["message"] == ""


def test_topology_running_gang_without_annotation_sits_in_its_tasks_lowest_common_domain() -> None:
    cache = _cluster()
    cache.update_podgroup(podgroup("spread", 2, phase="Running"))
    for i, where in enumerate(("n-a1", "n-b1")):
        cache.update_pod(pod(f"spread-{i}", "spread", {"cpu": 1}, node_name=where, phase="Running"))
    gangs = {g["name"]: g for g in _json(cache)["gangs"]}
    assert gangs["spread"]["hyperNode"] == "spine"


def test_topology_pending_gang_carries_its_unschedulable_condition() -> None:
    data = _json(_cluster())
    big = next(g for g in data["gangs"] if g["name"] == "big")
    assert big["phase"] == "Pending"
    assert big["pending"] == 4
    assert big["hyperNode"] == ""
    assert big["reason"] == "NotEnoughResources"
    assert big["message"] == RACK_MESSAGE
    assert big["highestTierAllowed"] == 1
    assert data["summary"]["unschedulableGangs"] == 1
    assert data["summary"]["runningGangs"] == 1


def test_topology_discovery_counts_sources_and_lists_stale_hypernodes() -> None:
    discovery = _json(_cluster())["discovery"]
    assert discovery["sources"] == {"label": {"hyperNodes": 2, "stale": 1}}
    assert discovery["stale"] == [
        {
            "hyperNode": "rack-b",
            "source": "label",
            "reason": "SourceError",
            "message": "label: nodes unreadable",
            "since": "2026-01-01T00:00:00Z",
        }
    ]


def test_topology_tiers_report_the_largest_free_share_per_tier() -> None:
    tiers = {t["tier"]: t for t in _json(_cluster())["tiers"]}
    assert tiers[1]["hyperNodes"] == 2
    assert tiers[1]["tierName"] == "rack"
    assert tiers[1]["largestFree"]["gpu"] == [16, "rack-b"]
    assert tiers[2]["largestFree"]["gpu"] == [20, "spine"]


def test_topology_quarantined_hypernode_is_listed_with_its_reason() -> None:
    cache = _cluster()
    cache.update_hypernode(hypernode("rack-dup", 1, nodes=["n-a1"]))
    data = _json(cache)
    assert "rack-dup" in data["tree"]["quarantined"]
    assert data["tree"]["quarantined"]["rack-dup"]
    assert data["roots"] == ["spine"]


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_view_rebuilds_only_after_a_change_and_at_most_once_per_interval() -> None:
    cache, clock, key = _cluster(), _Clock(), ["rv-1"]
    view = TopologyView(cache, lambda: key[0], clock=clock, min_interval=1.0, settle=2.0)
    view.current()
    clock.now += 0.5
    view.current()
    assert view.builds == 1  # within the interval
    clock.now += 3.0
    view.current()  # still settling after the first sight of rv-1
    clock.now += 3.0
    view.current()
    view.current()
    assert view.builds == 2  # settled: no change, no build however often it is asked
    key[0] = "rv-2"
    view.current()
    assert view.builds == 3


def test_view_body_is_the_content_plus_its_stamp() -> None:
    view = TopologyView(_cluster(), lambda: "rv", clock=_Clock())
    data = orjson.loads(view.current()[1])
    assert data["generation"] == 1
    assert data["changedAt"].endswith("Z")
    assert data["buildSeconds"] >= 0
    assert data["summary"]["hyperNodes"] == 3


def test_view_serves_gzip_and_304_for_the_same_generation() -> None:
    view = TopologyView(_cluster(), lambda: "rv", clock=_Clock())
    plain = view.api_topology({})
    assert plain.status == 200
    assert orjson.loads(plain.body)["summary"]["hyperNodes"] == 3
    zipped = view.api_topology({"accept-encoding": "gzip, deflate"})
    assert zipped.headers["Content-Encoding"] == "gzip"
    assert gzip.decompress(zipped.body) == plain.body
    again = view.api_topology({"if-none-match": plain.headers["ETag"]})
    assert again.status == 304
    assert again.body == b""


def test_view_generation_moves_only_when_the_json_changes() -> None:
    cache, clock, key = _cluster(), _Clock(), ["rv-1"]
    view = TopologyView(cache, lambda: key[0], clock=clock, min_interval=1.0, settle=0.0)
    first = view.current()[0]
    cache.update_node(node("n-c1", {"nvidia.com/gpu": 8}))
    key[0], clock.now = "rv-2", clock.now + 2
    assert view.current()[0] == first + 1


def test_ui_page_is_shipped_and_polls_the_api() -> None:
    html = page().decode()
    assert "/api/topology" in html
    assert "<script" in html
    # nothing fetched from outside: the page must work on an offline cluster
    assert "http://" not in html
    assert "https://" not in html


def test_view_rebuilds_when_the_replica_changes_and_reports_it() -> None:
    replica = {"identity": "a", "leader": False, "cachesSynced": True}
    clock = _Clock()
    view = TopologyView(_cluster(), lambda: "rv", clock=clock, replica=lambda: dict(replica))
    generation, body, _ = view.current()
    assert orjson.loads(body)["replica"] == replica
    replica["leader"] = True
    clock.now += 2.5  # past the 2 s rebuild interval
    later, body, _ = view.current()
    assert later == generation + 1
    assert orjson.loads(body)["replica"]["leader"] is True


def test_topology_partitioned_gang_lists_each_sub_job_in_its_own_hypernode() -> None:
    cache = _cluster()
    policy = {"name": "tp", "subGroupSize": 1, "matchLabelKeys": ["part"]}
    cache.update_podgroup(podgroup("parts", 2, phase="Running", sub_group_policy=[policy]))
    for i, where in enumerate(("n-a2", "n-b2")):
        cache.update_pod(
            pod(
                f"parts-{i}",
                "parts",
                {"cpu": 1},
                node_name=where,
                phase="Running",
                labels={"part": str(i)},
            )
        )
    gangs = {g["name"]: g for g in _json(cache)["gangs"]}
    assert gangs["parts"]["hyperNode"] == "spine"
    sub_jobs = gangs["parts"]["subJobs"]
    assert sorted(v["hyperNode"] for v in sub_jobs.values()) == ["rack-a", "rack-b"]
    assert all(v["pods"] == 1 for v in sub_jobs.values())
    assert gangs["train"]["subJobs"] == {}  # a flat gang has none


def test_topology_queue_shows_the_deserved_share_proportion_computed_and_its_counts() -> None:
    from tests.unit.scheduler.objects import queue
    from volcano_py.scheduler.framework.framework import close_session
    from volcano_py.scheduler.simulator import Simulator

    objects = [node("n1", {"nvidia.com/gpu": 8}), queue("team", weight=1), queue("spec",
               deserved={"cpu": "2"})]  # fmt: skip
    objects.append(podgroup("run", 1, queue="team", phase="Running"))
    objects.append(pod("run-0", "run", {"nvidia.com/gpu": 2}, node_name="n1", phase="Running"))
    close_session(Simulator(objects).open_session())  # proportion exports what it dealt
    cache = SchedulerCache()
    for obj in objects:
        getattr(cache, f"update_{obj['kind'].lower()}")(obj)
    queues = {q["name"]: q for q in _json(cache)["queues"]}
    assert queues["team"]["deservedFrom"] == "computed"
    assert queues["team"]["deserved"]["gpu"] > 0
    assert queues["spec"]["deservedFrom"] == "spec"
    assert queues["spec"]["deserved"] == {"cpu": 2000}
    assert queues["team"]["podGroups"]["running"] == 1
    assert queues["team"]["state"] == "Open"
