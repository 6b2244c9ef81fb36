from __future__ import annotations

from typing import Any

import pytest

from volcano_py.api.constants import NetworkTopologyMode, PodGroupPhase
from volcano_py.api.errors import FieldError
from volcano_py.api.podgroup import NetworkTopology, PodGroup


def podgroup(spec: dict[str, Any] | None = None, status: Any = None) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {
            "name": "podgroup-1234",
            "namespace": "team-a",
            "uid": "u-9",
            "resourceVersion": "42",
            "creationTimestamp": "2025-01-01T00:00:00Z",
            "annotations": {"volcano.sh/job-allocated-hypernode": "rack-1"},
            "labels": {"app": "train"},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": "rs",
                    "uid": "1234",
                    "controller": True,
                }
            ],
        },
        "spec": spec if spec is not None else {},
    }
    if status is not None:
        obj["status"] = status
    return obj


def test_podgroup_from_dict_reads_every_field() -> None:
    pg = PodGroup.from_dict(
        podgroup(
            {
                "minMember": 4,
                "minTaskMember": {"worker": 3, "ps": 1},
                "minResources": {"cpu": "2", "memory": "4Gi", "nvidia.com/gpu": "4"},
                "queue": "gpu-queue",
                "priorityClassName": "high",
                "networkTopology": {"mode": "hard", "highestTierAllowed": 2},
            },
            {
                "phase": "Running",
                "running": 4,
                "succeeded": 1,
                "failed": 2,
                "conditions": [{"type": "Scheduled", "status": "True", "transitionID": "t"}],
            },
        )
    )
    assert (pg.name, pg.namespace, pg.uid, pg.resource_version, pg.key) == (
        "podgroup-1234",
        "team-a",
        "u-9",
        "42",
        "team-a/podgroup-1234",
    )
    assert pg.creation_timestamp == "2025-01-01T00:00:00Z"
    assert pg.min_member == 4
    assert dict(pg.min_task_member) == {"worker": 3, "ps": 1}
    assert {k: str(v) for k, v in pg.min_resources.items()} == {
        "cpu": "2",
        "memory": "4Gi",
        "nvidia.com/gpu": "4",
    }
    assert (pg.queue, pg.effective_queue, pg.priority_class_name) == (
        "gpu-queue",
        "gpu-queue",
        "high",
    )
    assert pg.network_topology == NetworkTopology(NetworkTopologyMode.HARD, 2, None)
    assert pg.is_hard_topology_mode
    assert pg.phase is PodGroupPhase.RUNNING
    assert (pg.running, pg.succeeded, pg.failed) == (4, 1, 2)
    assert pg.conditions[0]["type"] == "Scheduled"
    assert pg.annotations["volcano.sh/job-allocated-hypernode"] == "rack-1"
    assert pg.labels == {"app": "train"}
    assert pg.owner_references[0]["uid"] == "1234"


def test_podgroup_from_dict_defaults_for_a_bare_object() -> None:
    pg = PodGroup.from_dict({"metadata": {"name": "pg", "namespace": "ns"}})
    assert pg.min_member == 0
    assert dict(pg.min_task_member) == {}
    assert dict(pg.min_resources) == {}
    assert (pg.queue, pg.effective_queue) == ("", "default")
    assert pg.network_topology is None
    assert not pg.has_network_topology
    assert not pg.is_hard_topology_mode
    assert pg.phase == ""
    assert (pg.running, pg.succeeded, pg.failed, pg.conditions) == (0, 0, 0, ())
    assert pg.owner_references == ()


@pytest.mark.parametrize(
    ("topology", "expected"),
    [
        ({}, NetworkTopology(NetworkTopologyMode.HARD, None, None)),
        ({"mode": "soft"}, NetworkTopology(NetworkTopologyMode.SOFT, None, None)),
        (
            {"mode": "hard", "highestTierAllowed": 1},
            NetworkTopology(NetworkTopologyMode.HARD, 1, None),
        ),
        ({"highestTierName": "spine"}, NetworkTopology(NetworkTopologyMode.HARD, None, "spine")),
        ({"highestTierAllowed": 0}, NetworkTopology(NetworkTopologyMode.HARD, 0, None)),
        ({"mode": ""}, NetworkTopology(NetworkTopologyMode.HARD, None, None)),
    ],
    ids=["defaults-hard", "soft", "tier", "tier-name", "tier-zero", "empty-mode"],
)
def test_podgroup_network_topology(topology: dict[str, Any], expected: NetworkTopology) -> None:
    pg = PodGroup.from_dict(podgroup({"networkTopology": topology}))
    assert pg.network_topology == expected
    assert pg.is_hard_topology_mode is (expected.mode is NetworkTopologyMode.HARD)


def test_podgroup_network_topology_round_trips() -> None:
    topology = NetworkTopology(NetworkTopologyMode.SOFT, 2, None)
    assert topology.to_dict() == {"mode": "soft", "highestTierAllowed": 2}
    assert NetworkTopology.from_dict(topology.to_dict(), "x") == topology


@pytest.mark.parametrize(
    ("phase", "expected"),
    [
        ("Pending", PodGroupPhase.PENDING),
        ("Inqueue", PodGroupPhase.INQUEUE),
        ("Completed", PodGroupPhase.COMPLETED),
        ("Unknown", PodGroupPhase.UNKNOWN),
        ("Draining", "Draining"),
    ],
    ids=["pending", "inqueue", "completed", "unknown", "unrecognised-kept"],
)
def test_podgroup_phase(phase: str, expected: str) -> None:
    assert PodGroup.from_dict(podgroup({}, {"phase": phase})).phase == expected


@pytest.mark.parametrize(
    ("spec", "status", "error"),
    [
        ({"minMember": "3"}, None, "spec.minMember: must be an integer"),
        ({"minMember": 2.5}, None, "spec.minMember: must be an integer"),
        ({"minTaskMember": []}, None, "spec.minTaskMember: must be an object"),
        (
            {"minTaskMember": {"worker": "x"}},
            None,
            "spec.minTaskMember[worker]: must be an integer",
        ),
        (
            {"minResources": {"cpu": "1", "memory": "1 Gi"}},
            None,
            'spec.minResources[memory]: Invalid value: "1 Gi": quantities must match the regular '
            "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
        (
            {"minResources": {"cpu": "1x"}},
            None,
            'spec.minResources[cpu]: Invalid value: "1x": quantities must match the regular '
            "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
        (
            {"minResources": {"cpu": "1Z"}},
            None,
            'spec.minResources[cpu]: Invalid value: "1Z": quantities must match the regular '
            "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
        (
            {"minResources": {"cpu": "1mi"}},
            None,
            'spec.minResources[cpu]: Invalid value: "1mi": unable to parse quantity\'s suffix',
        ),
        ({"queue": 1}, None, "spec.queue: must be a string"),
        ({"priorityClassName": ["a"]}, None, "spec.priorityClassName: must be a string"),
        ({"networkTopology": "hard"}, None, "spec.networkTopology: must be an object"),
        (
            {"networkTopology": {"mode": "strict"}},
            None,
            "spec.networkTopology.mode: must be one of hard, soft",
        ),
        (
            {"networkTopology": {"highestTierAllowed": "2"}},
            None,
            "spec.networkTopology.highestTierAllowed: must be an integer",
        ),
        (
            {"networkTopology": {"highestTierName": 2}},
            None,
            "spec.networkTopology.highestTierName: must be a string",
        ),
        ({}, {"phase": 3}, "status.phase: must be a string"),
        ({}, {"running": "1"}, "status.running: must be an integer"),
        ({}, {"conditions": {}}, "status.conditions: must be a list"),
        ({}, "Running", "status: must be an object"),
    ],
    ids=[
        "min-member-string",
        "min-member-fraction",
        "min-task-member-list",
        "min-task-member-value",
        "min-resources-space",
        "min-resources-garbage",
        "min-resources-unknown-suffix-letter",
        "min-resources-bad-suffix",
        "queue",
        "priority-class",
        "topology-string",
        "topology-mode",
        "topology-tier",
        "topology-tier-name",
        "phase",
        "running",
        "conditions",
        "status-string",
    ],
)
def test_podgroup_from_dict_names_the_bad_field(
    spec: dict[str, Any], status: Any, error: str
) -> None:
    with pytest.raises(FieldError) as info:
        PodGroup.from_dict(podgroup(spec, status))
    assert str(info.value) == error


def test_podgroup_view_is_frozen() -> None:
    pg = PodGroup.from_dict(podgroup({"minMember": 1}))
    with pytest.raises(AttributeError):
        pg.min_member = 2  # type: ignore[misc]


@pytest.mark.parametrize(
    ("resources", "message"),
    [
        ({"cpu": "-1"}, 'spec.minResources[cpu]: Invalid value: "-1": must be >= 0'),
        ({"nvidia.com/gpu": "-3"}, 'spec.minResources[nvidia.com/gpu]: Invalid value: "-3": '
         "must be >= 0"),
        ({"cpu": -1}, "spec.minResources[cpu]: Invalid value: -1: must be >= 0"),
    ],
    ids=["cpu-string", "gpu", "cpu-integer"],
)  # fmt: skip
def test_podgroup_min_resources_must_not_be_negative(
    resources: dict[str, Any], message: str
) -> None:
    with pytest.raises(FieldError) as err:
        PodGroup.from_dict(podgroup({"minResources": resources}))
    assert str(err.value) == message


def test_podgroup_min_resources_zero_is_fine() -> None:
    pg = PodGroup.from_dict(podgroup({"minResources": {"cpu": "0", "memory": "0Gi"}}))
    assert all(q.is_zero for q in pg.min_resources.values())
