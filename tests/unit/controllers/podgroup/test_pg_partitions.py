"""Partitions for plain workloads: the PodGroup's policy and each pod's partition label."""

from __future__ import annotations

import pytest

from tests.unit.controllers.podgroup.pgfakes import harness, pod, workload
from volcano_py.api.podgroup import PodGroup
from volcano_py.controllers.podgroup.builder import build_podgroup
from volcano_py.controllers.podgroup.partitions import (
    REASON_INVALID_PARTITIONS,
    partition_labels,
    partition_policy,
    pod_index,
)

MIN = "scheduling.volcano.sh/group-min-member"
SIZE = "volcano.sh/partition-size"
PART = "volcano.sh/partition-id"
STS_INDEX = "apps.kubernetes.io/pod-index"
JOB_INDEX = "batch.kubernetes.io/job-completion-index"
STS = workload(
    "StatefulSet",
    "train",
    replicas=16,
    annotations={
        MIN: "16",
        SIZE: "4",
        "volcano.sh/min-partitions": "3",
        "volcano.sh/partition-network-topology-mode": "hard",
        "volcano.sh/partition-network-topology-highest-tier": "1",
    },
)


def _sts_pod(i: int) -> dict:
    return pod(f"train-{i}", owner=STS, labels={STS_INDEX: str(i)}, requests={"cpu": "1"})


def test_statefulset_gets_one_partition_policy_that_the_podgroup_view_reads() -> None:
    built = build_podgroup(_sts_pod(0), STS["metadata"]["annotations"])
    assert built.warnings == ()
    assert built.body["spec"]["subGroupPolicy"] == [
        {
            "name": "partition",
            "subGroupSize": 4,
            "minSubGroups": 3,
            "matchLabelKeys": [PART],
            "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
        }
    ]
    view = PodGroup.from_dict(built.body)  # what the scheduler reads
    assert view.sub_group_policy[0].sub_group_size == 4


@pytest.mark.parametrize(
    ("labels", "annotations", "index"),
    [
        ({STS_INDEX: "7"}, {}, 7),
        ({JOB_INDEX: "12"}, {}, 12),
        ({}, {JOB_INDEX: "3"}, 3),
        ({}, {}, None),
        ({STS_INDEX: "x"}, {}, None),
    ],
)
def test_pod_index_from_statefulset_or_indexed_job(
    labels: dict, annotations: dict, index: int | None
) -> None:
    assert pod_index(pod("p", labels=labels, annotations=annotations)) == index


def test_each_pod_is_labelled_with_index_over_size_in_the_patch_that_groups_it() -> None:
    pods = tuple(_sts_pod(i) for i in range(6))
    h = harness(pods=pods, statefulsets=(STS,))
    for i in range(6):
        h.sync.sync_pod(f"ns/train-{i}")
    patches = [c.body["metadata"] for c in h.client.calls if c.verb == "patch"]
    assert [p["labels"][PART] for p in patches] == ["0", "0", "0", "0", "1", "1"]
    assert all("scheduling.k8s.io/group-name" in p["annotations"] for p in patches)


@pytest.mark.parametrize(
    ("annotations", "named"),
    [
        ({SIZE: "0"}, SIZE),
        ({SIZE: "four"}, SIZE),
        ({SIZE: "4", "volcano.sh/min-partitions": "-1"}, "volcano.sh/min-partitions"),
        (
            {SIZE: "4", "volcano.sh/partition-network-topology-mode": "strict"},
            "volcano.sh/partition-network-topology-mode",
        ),
        (
            {SIZE: "4", "volcano.sh/partition-network-topology-highest-tier": "top"},
            "volcano.sh/partition-network-topology-highest-tier",
        ),
    ],
)
def test_a_bad_value_is_a_warning_naming_the_annotation_and_no_partitions(
    annotations: dict, named: str
) -> None:
    owner = workload("StatefulSet", "train", annotations={MIN: "4", **annotations})
    p = pod("train-0", owner=owner, labels={STS_INDEX: "0"})
    built = build_podgroup(p, owner["metadata"]["annotations"])
    assert "subGroupPolicy" not in built.body["spec"]
    assert built.body["spec"]["minMember"] == 4  # the gang itself is unchanged
    assert [w.reason for w in built.warnings] == [REASON_INVALID_PARTITIONS]
    assert named in built.warnings[0].message
    h = harness(pods=(p,), statefulsets=(owner,))
    h.sync.sync_pod("ns/train-0")
    assert "labels" not in h.client.calls[-1].body["metadata"]
    assert any(named in e[2] for e in h.recorder.events)


def test_pods_without_an_index_get_no_partitions_and_say_why() -> None:
    policy, problem = partition_policy({SIZE: "4"}, pod("web-1"))
    assert policy is None
    assert "index" in problem


def test_a_hand_written_policy_is_not_taken_for_ours() -> None:
    podgroup = {
        "spec": {"subGroupPolicy": [{"name": "mine", "subGroupSize": 4, "matchLabelKeys": [PART]}]}
    }
    assert partition_labels(_sts_pod(5), podgroup) == {}
