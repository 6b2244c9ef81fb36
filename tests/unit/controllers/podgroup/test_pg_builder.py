"""The PodGroup built for a pod, and update detection."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.unit.controllers.podgroup.pgfakes import owner_ref, pod, workload
from volcano_py.controllers.podgroup.builder import (
    REASON_INVALID_MIN_MEMBER,
    REASON_INVALID_TOPOLOGY_MODE,
    REASON_INVALID_TOPOLOGY_TIER,
    build_podgroup,
    min_member_from,
    network_topology_from,
    owner_references,
    podgroup_name,
    updated_podgroup,
)

JSON = dict[str, Any]
MIN = "scheduling.volcano.sh/group-min-member"
RS = workload("ReplicaSet", "web-abc")


def test_podgroup_name_uses_the_controller_uid() -> None:
    assert podgroup_name(pod("p", owner=RS)) == "podgroup-uid-web-abc"


def test_podgroup_name_uses_the_pod_uid_when_no_controller() -> None:
    bare = pod("p", uid="1234")
    bare["metadata"]["ownerReferences"] = [owner_ref(RS, controller=False)]
    assert podgroup_name(bare) == "podgroup-1234"


def test_owner_references_copy_the_pods_when_one_is_a_controller() -> None:
    owned = pod("p", owner=RS)
    assert owner_references(owned) == owned["metadata"]["ownerReferences"]


def test_owner_references_point_at_the_pod_when_it_has_no_controller() -> None:
    assert owner_references(pod("p", uid="u1")) == [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": "p",
            "uid": "u1",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]


@pytest.mark.parametrize(
    ("annotations", "expected", "warned"),
    [
        ({}, 1, False),
        ({MIN: "4"}, 4, False),
        ({MIN: "0"}, 1, True),  # issue 26: Volcano keeps 0 silently; a 0 gang is no gang
        ({MIN: "+3"}, 3, False),
        ({MIN: "-2"}, 1, True),
        ({MIN: "four"}, 1, True),
        ({MIN: " 4"}, 1, True),
        ({MIN: "1_000"}, 1, True),
        ({MIN: "2147483648"}, 1, True),
    ],
    ids=[
        "absent",
        "four",
        "zero",
        "plus-sign",
        "negative",
        "word",
        "space",
        "underscore",
        "int32-overflow",
    ],
)
def test_min_member_from_owner_annotation(
    annotations: dict[str, str], expected: int, warned: bool
) -> None:
    value, warning = min_member_from(annotations, "ns/p")
    assert value == expected
    assert (warning is not None) == warned
    if warning is not None:
        assert warning.reason == REASON_INVALID_MIN_MEMBER


MODE = "volcano.sh/network-topology-mode"
TIER = "volcano.sh/network-topology-highest-tier"


@pytest.mark.parametrize(
    ("annotations", "expected", "reasons"),
    [
        ({}, None, []),
        ({MODE: "soft"}, {"mode": "soft"}, []),
        ({MODE: "HARD"}, {"mode": "hard"}, []),
        ({TIER: "2"}, {"mode": "hard", "highestTierAllowed": 2}, []),
        ({MODE: "soft", TIER: "3"}, {"mode": "soft", "highestTierAllowed": 3}, []),
        (
            {MODE: "strict", TIER: "1"},
            {"mode": "hard", "highestTierAllowed": 1},
            [REASON_INVALID_TOPOLOGY_MODE],
        ),
        ({MODE: "soft", TIER: "two"}, {"mode": "soft"}, [REASON_INVALID_TOPOLOGY_TIER]),
        ({TIER: "-1"}, {"mode": "hard"}, [REASON_INVALID_TOPOLOGY_TIER]),
    ],
    ids=[
        "absent",
        "soft",
        "case-insensitive",
        "tier-only",
        "both",
        "bad-mode",
        "bad-tier",
        "negative-tier",
    ],
)
def test_network_topology_from_pod_annotations(
    annotations: dict[str, str], expected: JSON | None, reasons: list[str]
) -> None:
    topology, warnings = network_topology_from(pod("p", annotations=annotations))
    assert topology == expected
    assert [w.reason for w in warnings] == reasons


def test_network_topology_warning_names_the_pod_and_value() -> None:
    _, warnings = network_topology_from(pod("p", annotations={MODE: "strict"}))
    assert warnings[0].message == (
        "Invalid network topology mode \"strict\" in pod ns/p, using default 'hard' mode"
    )


def test_build_podgroup_full_body() -> None:
    p = pod(
        "web-abc-1",
        owner=RS,
        requests={"cpu": "500m", "memory": "1Gi", "nvidia.com/gpu": "1"},
        annotations={
            "scheduling.volcano.sh/queue-name": "gpu",
            MODE: "soft",
            TIER: "2",
        },
        spec={"priorityClassName": "high"},
    )
    built = build_podgroup(p, {MIN: "4", "volcano.sh/extra": "x", "other/key": "y"})
    assert built.warnings == ()
    assert built.body == {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {
            "name": "podgroup-uid-web-abc",
            "namespace": "ns",
            "ownerReferences": p["metadata"]["ownerReferences"],
            "annotations": {"volcano.sh/extra": "x"},
            "labels": {},
        },
        "spec": {
            "minMember": 4,
            "minResources": {
                "count/pods": "4",
                "cpu": "2",
                "memory": "4Gi",
                "nvidia.com/gpu": "4",
                "pods": "4",
                "requests.cpu": "2",
                "requests.memory": "4Gi",
                "requests.nvidia.com/gpu": "4",
            },
            "priorityClassName": "high",
            "queue": "gpu",
            "networkTopology": {"mode": "soft", "highestTierAllowed": 2},
        },
        "status": {"phase": "Pending"},
    }


def test_build_podgroup_pod_annotations_override_owner_ones() -> None:
    owner = {
        "volcano.sh/preemptable": "false",
        "volcano.sh/cooldown-time": "1m",
        "volcano.sh/revocable-zone": "a",
        "volcano.sh/jdb-max-unavailable": "1",
    }
    p = pod(
        "p",
        annotations={
            "volcano.sh/preemptable": "true",
            "volcano.sh/revocable-zone": "*",
            "volcano.sh/jdb-min-available": "2",
            "volcano.sh/jdb-max-unavailable": "3",
        },
        labels={"volcano.sh/preemptable": "true", "volcano.sh/cooldown-time": "5m", "app": "x"},
    )
    meta = build_podgroup(p, owner).body["metadata"]
    assert meta["annotations"] == {
        "volcano.sh/preemptable": "true",
        "volcano.sh/cooldown-time": "1m",
        "volcano.sh/revocable-zone": "*",
        "volcano.sh/jdb-min-available": "2",
        "volcano.sh/jdb-max-unavailable": "1",
    }
    assert meta["labels"] == {"volcano.sh/preemptable": "true", "volcano.sh/cooldown-time": "5m"}


def test_build_podgroup_takes_jdb_max_unavailable_when_no_min_available() -> None:
    p = pod("p", annotations={"volcano.sh/jdb-max-unavailable": "30%"})
    assert build_podgroup(p, {}).body["metadata"]["annotations"] == {
        "volcano.sh/jdb-max-unavailable": "30%"
    }


def test_build_podgroup_ignores_owners_when_inheritance_is_off() -> None:
    built = build_podgroup(
        pod("p", requests={"cpu": "1"}),
        {MIN: "5", "volcano.sh/extra": "x"},
        inherit_owner_annotations=False,
    )
    assert built.body["spec"]["minMember"] == 1
    assert built.body["spec"]["minResources"]["cpu"] == "1"
    assert built.body["metadata"]["annotations"] == {}


def test_build_podgroup_reports_an_invalid_min_member() -> None:
    built = build_podgroup(pod("p"), {MIN: "-3"})
    assert built.body["spec"]["minMember"] == 1
    assert [w.reason for w in built.warnings] == [REASON_INVALID_MIN_MEMBER]


def test_build_podgroup_omits_network_topology_without_annotations() -> None:
    assert "networkTopology" not in build_podgroup(pod("p"), {}).body["spec"]


# --- update detection ---------------------------------------------------------------------


def stored(body: JSON) -> JSON:
    """What the API server would hold: defaults applied, extra fields from others."""
    out = copy.deepcopy(body)
    out["metadata"]["resourceVersion"] = "7"
    out["metadata"]["annotations"]["volcano.sh/job-allocated-hypernode"] = "s0"
    out["metadata"]["annotations"]["kubectl.kubernetes.io/note"] = "mine"
    out["metadata"]["labels"]["team"] = "a"
    out["spec"].setdefault("queue", "default")
    if "networkTopology" in out["spec"]:
        out["spec"]["networkTopology"].setdefault("mode", "hard")
    out["status"] = {"phase": "Running", "running": 4}
    return out


def desired(**annotations: str) -> JSON:
    p = pod("p", owner=RS, requests={"cpu": "1"}, annotations={TIER: "1", **annotations})
    return build_podgroup(p, {MIN: "2"}).body


def test_updated_podgroup_is_none_when_nothing_managed_differs() -> None:
    body = desired()
    assert updated_podgroup(stored(body), body) is None


def test_updated_podgroup_compares_quantities_by_value() -> None:
    body = desired()
    existing = stored(body)
    existing["spec"]["minResources"]["cpu"] = "2000m"
    assert updated_podgroup(existing, body) is None


def test_updated_podgroup_rewrites_changed_spec_and_keeps_the_rest() -> None:
    before = desired()
    existing = stored(before)
    after = desired(**{"scheduling.volcano.sh/queue-name": "q2", MODE: "soft"})
    updated = updated_podgroup(existing, after)
    assert updated is not None
    assert updated["spec"]["queue"] == "q2"
    assert updated["spec"]["networkTopology"] == {"mode": "soft", "highestTierAllowed": 1}
    assert updated["metadata"]["resourceVersion"] == "7"
    assert updated["metadata"]["annotations"]["volcano.sh/job-allocated-hypernode"] == "s0"
    assert updated["metadata"]["annotations"]["kubectl.kubernetes.io/note"] == "mine"
    assert updated["metadata"]["labels"] == {"team": "a"}
    assert updated["status"] == {"phase": "Running", "running": 4}
    assert existing["spec"]["queue"] == "default"  # the cached object is untouched


def test_updated_podgroup_removes_an_inherited_annotation_the_owner_dropped() -> None:
    existing = stored(desired())
    existing["metadata"]["annotations"]["volcano.sh/preemptable"] = "true"
    updated = updated_podgroup(existing, desired())
    assert updated is not None
    assert "volcano.sh/preemptable" not in updated["metadata"]["annotations"]


def test_updated_podgroup_removes_network_topology_when_annotations_go() -> None:
    existing = stored(desired())
    plain = build_podgroup(pod("p", owner=RS, requests={"cpu": "1"}), {MIN: "2"}).body
    updated = updated_podgroup(existing, plain)
    assert updated is not None
    assert "networkTopology" not in updated["spec"]
