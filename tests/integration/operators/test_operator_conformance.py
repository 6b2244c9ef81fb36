"""Operators written for Volcano, played against volcano-py on the real control plane.

Each module next to this one is one operator: it writes the PodGroup and pods exactly as that
operator's source does (its docstring names the files), in its order — training-operator
waits for ``Inqueue`` before any pod, LWS creates the leader before its PodGroup and the
workers once the leader runs, Spark's driver creates the executors. The cluster: 8 nodes of 2
GPUs (a test-unique resource), 2 per rack, 2 racks per spine. Every gang that asks for tier 1
(through whichever path its operator has: spec, PodGroup annotations, subGroupPolicy) must
bind inside one rack; one that no rack can hold must wait and say why, per pod.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest

from tests.integration.operators import (
    grove,
    kthena,
    kuberay,
    lws,
    spark,
    trainer_v2,
    training_operator,
)
from tests.integration.operators.common import node_of, phase, waits
from tests.integration.scheduler.conftest import Topology, two_spines_of_two_racks, wait_for
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient

pytestmark = pytest.mark.timeout(240)

OPERATORS = [kuberay, training_operator, trainer_v2, lws, spark, grove, kthena]
TOPOLOGY_OPERATORS = [op for op in OPERATORS if op not in (spark, grove)]


def _bound(client: KubeClient, ns: str, names: list[str]) -> dict[str, str]:
    nodes = {n: node_of(client, ns, n) for n in names}
    return nodes if all(nodes.values()) else {}


@pytest.mark.parametrize("operator", OPERATORS, ids=[op.NAME for op in OPERATORS])
def test_operator_gang_binds_and_stays_in_one_rack_when_asked(
    operator: ModuleType,
    client: KubeClient,
    namespace: str,
    topology: Topology,
    run_scheduler: Callable[..., Callable[[], Any]],
) -> None:
    racks = two_spines_of_two_racks(topology)
    run_scheduler()
    played = operator.play(client, namespace, topology, 4, wait_for)
    nodes = wait_for(lambda: _bound(client, namespace, played.pods), timeout=60)
    if played.tier1:
        assert any(set(nodes.values()) <= set(members) for members in racks.values()), nodes
    wait_for(lambda: phase(client, namespace, played.podgroup) == "Running")


def _pending_reasons(client: KubeClient, ns: str, names: list[str]) -> list[str]:
    return [m for m in (waits(client, ns, n) for n in names if not node_of(client, ns, n)) if m]


@pytest.mark.parametrize("operator", TOPOLOGY_OPERATORS, ids=[op.NAME for op in TOPOLOGY_OPERATORS])
def test_operator_gang_no_rack_holds_waits_and_says_why(
    operator: ModuleType,
    client: KubeClient,
    namespace: str,
    topology: Topology,
    run_scheduler: Callable[..., Callable[[], Any]],
) -> None:
    racks = two_spines_of_two_racks(topology)
    run_scheduler()
    played = operator.play(client, namespace, topology, 6, wait_for)  # a rack has 4 GPUs
    reasons = wait_for(
        lambda: [r for r in _pending_reasons(client, namespace, played.pods) if "tier 1" in r],
        timeout=60,
    )
    assert reasons
    placed = {n for n in (node_of(client, namespace, p) for p in played.pods) if n}
    assert len(placed) < len(played.pods)
    if placed:  # LWS: the leader (minMember 1) and the workers its rack holds
        assert any(placed <= set(members) for members in racks.values()), placed


def test_podgroup_crd_has_sub_group_policy(client: KubeClient) -> None:
    """What Grove checks before it starts (``podGroupCRDHasSubGroupPolicy``), and the fields
    Grove and kthena write in it."""
    crd = client.get(R.CRDS, "podgroups.scheduling.volcano.sh")
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1beta1"]
    assert version["served"]
    spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    policy = spec["subGroupPolicy"]["items"]["properties"]
    for field in ("name", "labelSelector", "matchLabelKeys", "subGroupSize", "minSubGroups"):
        assert field in policy, field
    assert "networkTopology" in policy
