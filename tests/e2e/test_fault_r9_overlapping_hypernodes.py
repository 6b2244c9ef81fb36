"""R9: one bad HyperNode must not stop the cluster.

1. Through the API server with the webhook installed (the session manager): a hand-made leaf
   whose exactMatch Node member another leaf already holds is denied, naming both.
2. With the webhook bypassed (a manager whose webhook is not registered, as before install):
   the overlapping leaf reaches the cache. The scheduler quarantines only it: the hard gangs
   that do not need it are placed inside single racks, one gang running on the quarantined
   leaf's own node waits with a condition naming it; deleting the bad leaf lets it go on.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from devcluster.harness import ControlPlane
from tests.builders import create_node, exact, hypernode_body, pod_body, podgroup_body
from tests.e2e.conftest import ManagerProcess, start_manager, stop_manager
from tests.e2e.faults import delete_quietly, wait_until
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import ApiError

pytestmark = pytest.mark.timeout(240)

NS = "r9"
GPU = {"cpu": "8", "memory": "16Gi", "pods": "110", "nvidia.com/gpu": "4"}


def test_webhook_denies_a_leaf_claiming_another_leafs_node(
    manager: ManagerProcess, e2e_plane: ControlPlane
) -> None:
    client = KubeClient(e2e_plane.admin_config())
    client.create(R.HYPERNODES, hypernode_body("r9-first", 1, [exact("r9-node-x")]))
    try:
        with pytest.raises(ApiError) as info:
            client.create(
                R.HYPERNODES,
                hypernode_body("r9-second", 1, [exact("r9-node-y"), exact("r9-node-x")]),
            )
        assert info.value.status == 403  # the API server's answer for a webhook denial
        assert 'Node "r9-node-x" is already a member of HyperNode "r9-first"' in info.value.message
        assert 'HyperNode "r9-second" cannot select it too' in info.value.message
    finally:
        delete_quietly(client, R.HYPERNODES, "r9-first")


@pytest.fixture(scope="module")
def bypassed(
    plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ManagerProcess]:
    """A manager on the module's own control plane; its webhook is never registered."""
    process = start_manager(plane, tmp_path_factory.mktemp("r9"))
    yield process
    assert stop_manager(process) == 0, process.log()[-4000:]


def _gang(client: KubeClient, name: str, size: int, bound_to: str | None = None) -> list[str]:
    """A hard tier-1 gang of ``size`` 1-GPU pods; with ``bound_to``, its first pod runs there."""
    client.create(
        R.PODGROUPS,
        podgroup_body(name, NS, size, network_topology={"mode": "hard", "highestTierAllowed": 1}),
    )
    names = [f"{name}-{i}" for i in range(size)]
    for i, pod_name in enumerate(names):
        body = pod_body(
            pod_name,
            NS,
            requests={"nvidia.com/gpu": "1"},
            annotations={"scheduling.k8s.io/group-name": name},
            node_name=bound_to if i == 0 else None,
        )
        client.create(R.PODS, body)
    return names


def _node_of(client: KubeClient, pod: str) -> str:
    return str(client.get(R.PODS, pod, NS)["spec"].get("nodeName") or "")


def test_an_overlapping_leaf_is_quarantined_and_the_rest_schedules(
    bypassed: ManagerProcess, admin: KubeClient
) -> None:
    admin.create(R.NAMESPACES, {"metadata": {"name": NS}})
    racks = {"rack-a": ["n1", "n2"], "rack-b": ["n3", "n4"]}
    for node in ["n1", "n2", "n3", "n4", "n5"]:
        create_node(admin, node, allocatable=GPU)
    for rack, nodes in racks.items():
        admin.create(R.HYPERNODES, hypernode_body(rack, 1, [exact(n) for n in nodes]))
    time.sleep(1.1)  # a later creationTimestamp (second resolution) for the bad leaf
    # n2 is rack-a's already: rack-bad is the later claimant and is quarantined.
    admin.create(R.HYPERNODES, hypernode_body("rack-bad", 1, [exact("n2"), exact("n5")]))
    admin.create(
        R.HYPERNODES,
        hypernode_body("spine", 2, [exact(r, "HyperNode") for r in [*racks, "rack-bad"]]),
    )

    # A gang already running on n5, which only the quarantined leaf holds: it needs rack-bad.
    needy = _gang(admin, "needy", 2, bound_to="n5")
    healthy = {name: _gang(admin, name, 4) for name in ("g1", "g2", "g3")}

    def placed() -> dict[str, list[str]]:
        return {g: [_node_of(admin, p) for p in pods] for g, pods in healthy.items()}

    started = time.monotonic()
    result = wait_until(
        lambda: (lambda got: all(all(v) for v in got.values()) and got)(placed()),
        60,
        "the gangs that do not need rack-bad are placed",
    )
    seconds = time.monotonic() - started
    rack_of = {n: r for r, ns in racks.items() for n in ns}
    for gang, nodes in result.items():
        assert len({rack_of[n] for n in nodes}) == 1, (gang, nodes)
    assert [_node_of(admin, p) for p in needy] == ["n5", ""]

    def needy_condition() -> str:
        pg = admin.get(R.PODGROUPS, "needy", NS)
        for cond in (pg.get("status") or {}).get("conditions") or ():
            if cond["type"] == "Unschedulable" and cond["status"] == "True":
                return str(cond["message"])
        return ""

    message = wait_until(needy_condition, 30, "the needy gang's condition")
    assert "HyperNode rack-bad is quarantined" in message
    assert "node n2 is a member of more than one HyperNode: rack-a, rack-bad" in message
    print(f"R9: 3 healthy hard gangs (12 pods) placed in {seconds:.1f}s; 1 gang waits on rack-bad")

    # Fixing the bad object releases the job that needed it: n5 gets a rack of its own.
    admin.delete(R.HYPERNODES, "rack-bad")
    admin.patch(
        R.HYPERNODES,
        "spine",
        {"spec": {"members": [exact(r, "HyperNode") for r in racks]}},
    )
    admin.create(R.HYPERNODES, hypernode_body("rack-c", 1, [exact("n5")]))
    admin.patch(
        R.HYPERNODES,
        "spine",
        {"spec": {"members": [exact(r, "HyperNode") for r in [*racks, "rack-c"]]}},
    )
    wait_until(
        lambda: all(_node_of(admin, p) == "n5" for p in needy), 60, "the needy gang binds on n5"
    )
