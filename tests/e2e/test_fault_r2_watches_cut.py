"""R2: watches cut repeatedly and etcd compacted (410 Gone) while objects change.

kube-apiserver is SIGKILLed and restarted three times; right after each restart (before the
manager's informers have re-watched) Nodes and HyperNodes are created and deleted and etcd is
compacted, so the informers' next watch from their old resourceVersion gets 410 Gone and must
re-list. The caches are observed from outside, through behaviour:

- the hyperNode-controller's ``status.nodeCount`` and label discovery follow Node deletes and
  creates made in those windows (a missed delete leaves a count too high);
- the webhook's tree check, served from the HyperNode cache, sees the HyperNodes created in
  those windows (a second parent for their child is denied) and their deletes (a new parent
  for a child whose parent was deleted is allowed).
"""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest

from devcluster.harness import ControlPlane
from tests.builders import exact, hypernode_body
from tests.e2e.conftest import ManagerProcess, install_webhook, start_manager, stop_manager
from tests.e2e.faults import (
    RACK,
    SPINE,
    delete_quietly,
    discovered,
    label_source,
    node_count,
    put_controller_config,
    rack_node,
    wait_until,
)
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import ApiError

pytestmark = pytest.mark.timeout(240)

CYCLES = 3
RACKS = [("s0", "s0-r0"), ("s0", "s0-r1"), ("s1", "s1-r0"), ("s1", "s1-r1")]


@pytest.fixture(scope="module")
def manager(
    plane: ControlPlane, admin: KubeClient, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ManagerProcess]:
    work = tmp_path_factory.mktemp("r2")
    put_controller_config(admin, [label_source()])
    process = start_manager(plane, work)
    install_webhook(admin, work / "certs", process.webhook_port, "volcano-py-r2")
    yield process
    assert stop_manager(process) == 0, process.log()[-4000:]


def rack_counts(admin: KubeClient) -> dict[str, int | None]:
    counts: dict[str, int | None] = {}
    for _, rack in RACKS:
        found = discovered(admin, RACK, rack)
        counts[rack] = node_count(found[0]) if len(found) == 1 else -len(found)
    return counts


def spine_counts(admin: KubeClient) -> dict[str, int | None]:
    found = {s: discovered(admin, SPINE, s) for s in ("s0", "s1")}
    return {
        s: node_count(max(f, key=lambda h: h["spec"]["tier"])) if f else None
        for s, f in found.items()
    }


def test_caches_converge_and_miss_no_delete_through_killed_watches_and_compaction(
    plane: ControlPlane, admin: KubeClient, manager: ManagerProcess
) -> None:
    for spine, rack in RACKS:
        for i in range(3):
            rack_node(admin, f"{rack}-n{i}", spine, rack)
    wait_until(
        lambda: rack_counts(admin) == {rack: 3 for _, rack in RACKS},
        60,
        "label discovery makes one rack HyperNode per rack with nodeCount 3",
    )
    wait_until(
        lambda: spine_counts(admin) == {"s0": 6, "s1": 6},
        30,
        f"spine HyperNodes count the nodes of their racks (now {spine_counts(admin)})",
    )
    # hand-made parents, deleted later while the watch is down
    for i in range(CYCLES):
        admin.create(R.HYPERNODES, hypernode_body(f"orphan-{i}", 1, [exact(f"x-{i}")]))
        admin.create(
            R.HYPERNODES, hypernode_body(f"old-parent-{i}", 2, [exact(f"orphan-{i}", "HyperNode")])
        )
        admin.create(R.HYPERNODES, hypernode_body(f"child-{i}", 1, [exact(f"y-{i}")]))

    expected = {rack: 3 for _, rack in RACKS}
    for cycle in range(CYCLES):
        plane.stop_apiserver(signal.SIGKILL)
        plane.start_apiserver()
        # the window: the manager's watches are broken; change things, then compact
        spine, rack = RACKS[cycle]
        admin.delete(R.NODES, f"{rack}-n0")
        expected[rack] -= 1
        admin.delete(R.HYPERNODES, f"old-parent-{cycle}")
        admin.create(
            R.HYPERNODES,
            hypernode_body(f"new-parent-{cycle}", 2, [exact(f"child-{cycle}", "HyperNode")]),
        )
        rack_node(admin, f"{rack}-late", spine, rack)  # created and deleted in the window
        admin.delete(R.NODES, f"{rack}-late")
        plane.compact_etcd()
        wait_until(lambda: manager.get("/readyz")[0] == 200, 30, "manager ready again")

    wait_until(
        lambda: rack_counts(admin) == expected,
        60,
        f"nodeCount follows the deletes made while watches were down: want {expected}",
    )
    wait_until(
        lambda: spine_counts(admin) == {"s0": 6 - 2, "s1": 6 - 1},
        30,
        f"spine nodeCount follows too (now {spine_counts(admin)})",
    )

    for cycle in range(CYCLES):
        # created in a window: the cache has it, a second parent is denied
        with pytest.raises(ApiError) as info:
            admin.create(
                R.HYPERNODES,
                hypernode_body(f"second-parent-{cycle}", 2, [exact(f"child-{cycle}", "HyperNode")]),
            )
        assert f'already has the parent HyperNode "new-parent-{cycle}"' in info.value.message
        # deleted in a window: the cache dropped it, a new parent is allowed
        admin.create(
            R.HYPERNODES,
            hypernode_body(f"adopter-{cycle}", 2, [exact(f"orphan-{cycle}", "HyperNode")]),
        )
    log = manager.log()
    # the scenario really went through 410 Gone re-lists, not only resumed watches
    for informer in ("informer:nodes", "informer:hypernodes"):
        relists = [line for line in log.splitlines() if f"{informer}: resourceVersion" in line]
        assert any("is gone, re-listing" in line for line in relists), informer
    assert "Traceback" not in log
    for cycle in range(CYCLES):
        delete_quietly(admin, R.HYPERNODES, f"adopter-{cycle}")
