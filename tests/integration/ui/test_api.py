"""``/api/topology`` and ``/ui`` served by a running manager on the real control plane."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from datetime import UTC, datetime

import pytest

from tests.integration.ui.conftest import GPUS_PER_NODE, UiCluster, wait_for
from volcano_py.api import resources as R
from volcano_py.manager import Manager, ManagerOptions
from volcano_py.ops import OpsServer, Reply


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


def test_a_follower_shows_the_gangs_and_reasons_the_leader_wrote(ui_cluster: UiCluster) -> None:
    """A replica that never leads (the Lease is held elsewhere) serves the same view."""
    c = ui_cluster
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "ui-follower", "namespace": c.namespace},
        "spec": {
            "holderIdentity": "someone-else",
            "leaseDurationSeconds": 3600,
            "acquireTime": now,
            "renewTime": now,
        },
    }
    c.client.create(R.LEASES, lease, c.namespace)
    placed = c.gang("leader-placed", 1, GPUS_PER_NODE)
    waiting = c.gang("leader-refused", 3, GPUS_PER_NODE)
    options = ManagerOptions(
        controllers=[],
        leader_elect=True,
        lease_name="ui-follower",
        namespace=c.namespace,
        metrics_host="127.0.0.1",
        metrics_port=0,
        identity="follower",
    )
    follower = Manager(options, client=c.client, on_fatal=lambda reason: None)
    follower.start()
    try:
        url = f"http://127.0.0.1:{follower.ops.port}/api/topology"

        replicas = []

        def gangs() -> dict[str, dict[str, object]]:
            with urllib.request.urlopen(url, timeout=10) as resp:
                data = json.loads(resp.read())
            replicas.append(data["replica"])
            return {f"{g['namespace']}/{g['name']}": g for g in data["gangs"]}

        seen = wait_for(
            lambda: (
                (g := gangs()).get(placed, {}).get("hyperNode")
                and g.get(waiting, {}).get("message")
                # the view is rebuilt at most every 2 s: the sync may show one build later
                and replicas[-1]["cachesSynced"]
                and g
            ),
            timeout=40,
        )
        assert not follower.is_leader()
        assert replicas[-1] == {"identity": "follower", "leader": False, "cachesSynced": True}
        assert seen[placed]["hyperNode"] in c.racks
        assert seen[waiting]["reason"]
    finally:
        follower.stop()


def test_ops_route_that_raises_is_a_500_and_the_server_keeps_serving() -> None:
    def broken(headers: object) -> Reply:
        raise RuntimeError("boom")

    ops = OpsServer("127.0.0.1", 0, healthy=list, ready=list, routes={"/api/broken": broken})
    ops.start()
    try:
        with pytest.raises(urllib.error.HTTPError) as failed:
            urllib.request.urlopen(f"http://127.0.0.1:{ops.port}/api/broken", timeout=10)
        assert failed.value.code == 500
        assert b"boom" not in failed.value.read()  # no internals to the client
        with urllib.request.urlopen(f"http://127.0.0.1:{ops.port}/healthz", timeout=10) as r:
            assert r.status == 200
    finally:
        ops.stop()
