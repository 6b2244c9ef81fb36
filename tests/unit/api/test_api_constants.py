from __future__ import annotations

import pytest

from volcano_py.api import constants as c
from volcano_py.api.constants import MemberType, NetworkTopologyMode, PodGroupPhase


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (c.NETWORK_TOPOLOGY_MODE_ANNOTATION, "volcano.sh/network-topology-mode"),
        (c.NETWORK_TOPOLOGY_HIGHEST_TIER_ANNOTATION, "volcano.sh/network-topology-highest-tier"),
        (c.NETWORK_TOPOLOGY_SOURCE_LABEL, "volcano.sh/network-topology-source"),
        (c.KUBE_GROUP_NAME_ANNOTATION, "scheduling.k8s.io/group-name"),
        (c.VOLCANO_GROUP_MIN_MEMBER_ANNOTATION, "scheduling.volcano.sh/group-min-member"),
        (c.QUEUE_NAME_ANNOTATION, "scheduling.volcano.sh/queue-name"),
        (c.ANNOTATION_PREFIX, "volcano.sh/"),
        (c.POD_PREEMPTABLE, "volcano.sh/preemptable"),
        (c.COOLDOWN_TIME, "volcano.sh/cooldown-time"),
        (c.REVOCABLE_ZONE, "volcano.sh/revocable-zone"),
        (c.JDB_MIN_AVAILABLE, "volcano.sh/jdb-min-available"),
        (c.JDB_MAX_UNAVAILABLE, "volcano.sh/jdb-max-unavailable"),
        (c.JOB_ALLOCATED_HYPERNODE_ANNOTATION, "volcano.sh/job-allocated-hypernode"),
        (c.CONTROLLER_REVISION_HASH_LABEL, "controller-revision-hash"),
        (c.DEFAULT_SCHEDULER_NAME, "volcano"),
        (c.HYPERNODE_CONTROLLER_NAME, "hyperNode-controller"),
        (c.PODGROUP_CONTROLLER_NAME, "pg-controller"),
        (c.NETWORK_TOPOLOGY_AWARE_PLUGIN, "network-topology-aware"),
        (c.GANG_PLUGIN, "gang"),
        (c.LABEL_DISCOVERER, "label"),
        (c.UFM_DISCOVERER, "ufm"),
        (c.CONTROLLER_CONFIG_KEY, "volcano-controller.conf"),
        (c.HYPERNODE_VALIDATE_PATH, "/hypernodes/validate"),
        (c.PODGROUP_NAME_PREFIX, "podgroup-"),
        (c.CLUSTER_TOP_HYPERNODE, "<cluster-top-hypernode>"),
        (c.DEFAULT_RELEASE_NAME + c.CONTROLLER_CONFIGMAP_SUFFIX, "volcano-controller-configmap"),
    ],
    ids=lambda v: str(v),
)
def test_constants_are_volcanos_names_byte_for_byte(value: str, expected: str) -> None:
    assert value == expected


def test_constants_inherited_annotations_share_the_prefix() -> None:
    inherited = [
        c.POD_PREEMPTABLE,
        c.COOLDOWN_TIME,
        c.REVOCABLE_ZONE,
        c.JDB_MIN_AVAILABLE,
        c.JDB_MAX_UNAVAILABLE,
        c.NETWORK_TOPOLOGY_MODE_ANNOTATION,
        c.NETWORK_TOPOLOGY_HIGHEST_TIER_ANNOTATION,
    ]
    assert all(k.startswith(c.ANNOTATION_PREFIX) for k in inherited)
    assert not c.VOLCANO_GROUP_MIN_MEMBER_ANNOTATION.startswith(c.ANNOTATION_PREFIX)


def test_constants_closed_sets() -> None:
    assert [p.value for p in PodGroupPhase] == [
        "Pending",
        "Inqueue",
        "Running",
        "Unknown",
        "Completed",
    ]
    assert [m.value for m in NetworkTopologyMode] == ["hard", "soft"]
    assert [t.value for t in MemberType] == ["Node", "HyperNode"]
    assert MemberType("HyperNode") is MemberType.HYPERNODE
    assert PodGroupPhase.RUNNING == "Running"
    assert f"{NetworkTopologyMode.SOFT}" == "soft"
    with pytest.raises(ValueError, match="is not a valid NetworkTopologyMode"):
        NetworkTopologyMode("Hard")
