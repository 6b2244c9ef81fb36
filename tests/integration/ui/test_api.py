"""``/api/topology`` and ``/ui`` served by a running manager on the real control plane."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest

from tests.integration.ui.conftest import GPUS_PER_NODE, UiCluster, wait_for
from volcano_py.manager import Manager, ManagerOptions


def test_api_topology_shows_the_racks_with_their_nodes_and_gpus(ui_cluster: UiCluster) -> None:
    c = ui_cluster
    hns = wait_for(lambda: c.spine in (d := c.topology())["hyperNodes"] and d)["hyperNodes"]
    rack = hns[c.racks[0]]
    assert rack["tier"] == 1
    assert rack["tierName"] == "rack"
    assert rack["parent"] == c.spine
    assert rack["nodes"] == c.nodes[c.racks[0]]
    assert rack["gpu"][1] == 2 * GPUS_PER_NODE
    assert hns[c.spine]["children"] == c.racks
    assert hns[c.spine]["nodeCount"] == 4


def test_api_topology_places_a_scheduled_gang_in_its_rack(ui_cluster: UiCluster) -> None:
    c = ui_cluster
    key = c.gang("fits", 2, GPUS_PER_NODE)  # two whole nodes: only one rack can hold it

    def placed() -> dict[str, object] | None:
        gang = c.gang_in_view(key)
        return gang if gang and gang["phase"] == "Running" and gang["hyperNode"] else None

    gang = wait_for(placed, timeout=30)
    assert gang["hyperNode"] in c.racks
    assert gang["placed"] == 2
    rack = c.topology()["hyperNodes"][gang["hyperNode"]]
    assert rack["gpu"][0] == 0


def test_api_topology_gives_a_pending_gang_its_reason(ui_cluster: UiCluster) -> None:
    c = ui_cluster
    key = c.gang("too-big", 3, GPUS_PER_NODE)  # three whole nodes: no rack has three
    gang = wait_for(lambda: (g := c.gang_in_view(key)) and g["message"] and g, timeout=30)
    assert gang["phase"] != "Running"
    assert gang["hyperNode"] == ""
    assert gang["reason"]
    assert "tier" in gang["message"].lower() or "hypernode" in gang["message"].lower()


def test_api_topology_answers_304_to_the_same_etag(ui_cluster: UiCluster) -> None:
    with urllib.request.urlopen(f"{ui_cluster.url}/api/topology", timeout=10) as resp:
        etag = resp.headers["ETag"]
    request = urllib.request.Request(
        f"{ui_cluster.url}/api/topology", headers={"If-None-Match": etag}
    )
    codes = []
    for _ in range(5):  # a pod may still be settling: one of a few tries must be a 304
        try:
            with urllib.request.urlopen(request, timeout=10) as resp:
                request.headers["If-none-match"] = resp.headers["ETag"]
                codes.append(resp.status)
        except urllib.error.HTTPError as e:
            codes.append(e.code)
    assert 304 in codes


def test_ui_page_is_served_and_writes_are_refused(ui_cluster: UiCluster) -> None:
    with urllib.request.urlopen(f"{ui_cluster.url}/ui", timeout=10) as resp:
        assert resp.status == 200
        assert resp.headers["Content-Type"].startswith("text/html")
        assert b"/api/topology" in resp.read()
    post = urllib.request.Request(f"{ui_cluster.url}/api/topology", data=b"{}", method="POST")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(post, timeout=10)
    assert refused.value.code == 501


def test_ui_false_serves_neither_page_nor_api(ui_cluster: UiCluster) -> None:
    options = ManagerOptions(
        controllers=[],
        scheduler_enabled=False,
        leader_elect=False,
        metrics_host="127.0.0.1",
        metrics_port=0,
        ui_enabled=False,
    )
    manager = Manager(options, client=ui_cluster.client, on_fatal=lambda reason: None)
    manager.ops.start()
    try:
        for path in ("/ui", "/api/topology"):
            with pytest.raises(urllib.error.HTTPError) as missing:
                urllib.request.urlopen(f"http://127.0.0.1:{manager.ops.port}{path}", timeout=10)
            assert missing.value.code == 404
    finally:
        manager.ops.stop()
