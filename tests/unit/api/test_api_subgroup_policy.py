"""PodGroup ``spec.subGroupPolicy[]`` and ``spec.minTaskMember``: defaults, bounds, pod matching."""

from __future__ import annotations

from typing import Any

import pytest

from volcano_py.api.constants import NetworkTopologyMode
from volcano_py.api.errors import FieldError
from volcano_py.api.podgroup import (
    PodGroup,
    SubGroupPolicy,
    read_min_task_member,
    read_sub_group_policies,
)


def _pg(spec: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": "pg", "namespace": "ns"}, "spec": spec}


def test_sub_group_policy_defaults_follow_the_crd() -> None:
    policy = SubGroupPolicy.from_dict({"name": "tp", "networkTopology": {}}, "p")
    assert (policy.sub_group_size, policy.min_sub_groups, policy.match_label_keys) == (1, 0, ())
    assert policy.label_selector is None
    assert policy.network_topology is not None
    assert policy.network_topology.mode is NetworkTopologyMode.HARD


def test_podgroup_view_reads_every_sub_group_policy_field() -> None:
    pg = PodGroup.from_dict(
        _pg(
            {
                "minMember": 16,
                "minTaskMember": {"worker": 16},
                "subGroupPolicy": [
                    {
                        "name": "tp",
                        "subGroupSize": 4,
                        "minSubGroups": 2,
                        "labelSelector": {"matchLabels": {"role": "worker"}},
                        "matchLabelKeys": ["volcano.sh/partition-id"],
                        "networkTopology": {
                            "mode": "soft",
                            "highestTierAllowed": 1,
                            "highestTierName": "rack",
                        },
                    }
                ],
            }
        )
    )
    (policy,) = pg.sub_group_policy
    assert policy.name == "tp"
    assert (policy.sub_group_size, policy.min_sub_groups) == (4, 2)
    assert policy.match_label_keys == ("volcano.sh/partition-id",)
    assert policy.label_selector is not None
    assert policy.label_selector.matches({"role": "worker"})
    assert policy.network_topology is not None
    assert policy.network_topology.to_dict() == {
        "mode": "soft",
        "highestTierAllowed": 1,
        "highestTierName": "rack",
    }
    assert dict(pg.min_task_member) == {"worker": 16}


@pytest.mark.parametrize(
    ("policies", "field"),
    [
        ({"name": "a"}, r"spec\.subGroupPolicy: must be a list"),
        (["x"], r"spec\.subGroupPolicy\[0\]: must be an object"),
        ([{"name": "a", "subGroupSize": 0}], r"spec\.subGroupPolicy\[0\]\.subGroupSize"),
        ([{"name": "a", "subGroupSize": "8"}], r"spec\.subGroupPolicy\[0\]\.subGroupSize"),
        ([{"name": "a", "minSubGroups": -1}], r"spec\.subGroupPolicy\[0\]\.minSubGroups"),
        ([{"name": 3}], r"spec\.subGroupPolicy\[0\]\.name"),
        ([{"name": "a" * 254}], r"spec\.subGroupPolicy\[0\]\.name"),
        ([{"name": "a", "matchLabelKeys": "k"}], r"spec\.subGroupPolicy\[0\]\.matchLabelKeys"),
        ([{"name": "a", "matchLabelKeys": [""]}], r"\.matchLabelKeys\[0\]"),
        (
            [{"name": "a", "labelSelector": {"matchLabels": []}}],
            r"spec\.subGroupPolicy\[0\]\.labelSelector\.matchLabels",
        ),
        (
            [{"name": "a", "networkTopology": {"mode": "firm"}}],
            r"spec\.subGroupPolicy\[0\]\.networkTopology\.mode",
        ),
        (
            [{"name": "a", "networkTopology": {"highestTierAllowed": "1"}}],
            r"spec\.subGroupPolicy\[0\]\.networkTopology\.highestTierAllowed",
        ),
        ([{"name": "a"}, {"name": "a"}], r"spec\.subGroupPolicy\[1\]\.name: duplicate"),
    ],
    ids=[
        "not-a-list",
        "entry-not-object",
        "size-zero",
        "size-string",
        "min-negative",
        "name-number",
        "name-too-long",
        "keys-not-list",
        "key-empty",
        "selector-shape",
        "mode-unknown",
        "tier-string",
        "duplicate-name",
    ],
)
def test_sub_group_policy_errors_name_the_field(policies: Any, field: str) -> None:
    with pytest.raises(FieldError, match=field):
        read_sub_group_policies(policies, "spec.subGroupPolicy")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"worker": -1}, r"spec\.minTaskMember\[worker\]: must not be negative"),
        ({"worker": "2"}, r"spec\.minTaskMember\[worker\]: must be an integer"),
        (["worker"], r"spec\.minTaskMember: must be an object"),
    ],
    ids=["negative", "string", "list"],
)
def test_min_task_member_errors_name_the_field(data: Any, message: str) -> None:
    with pytest.raises(FieldError, match=message):
        read_min_task_member(data)


@pytest.mark.parametrize(
    ("policy", "labels", "expected"),
    [
        ({"matchLabelKeys": ["p"]}, {"p": "3"}, ("3",)),
        ({"matchLabelKeys": ["p", "q"]}, {"p": "3", "q": "x"}, ("3", "x")),
        ({"matchLabelKeys": ["p", "q"]}, {"p": "3"}, None),
        ({"matchLabelKeys": ["p"]}, {"p": ""}, None),
        (
            {"matchLabelKeys": ["p"], "labelSelector": {"matchLabels": {"role": "w"}}},
            {"p": "1", "role": "ps"},
            None,
        ),
        (
            {"matchLabelKeys": ["p"], "labelSelector": {"matchLabels": {"role": "w"}}},
            {"p": "1", "role": "w"},
            ("1",),
        ),
        ({"labelSelector": {"matchLabels": {"role": "w"}}}, {"role": "w"}, None),
    ],
    ids=[
        "one-key",
        "two-keys",
        "missing-key",
        "empty-value",
        "selector-rejects",
        "selector-accepts",
        "no-keys-takes-no-pod",
    ],
)
def test_sub_group_policy_match_values_as_volcano(
    policy: dict[str, Any], labels: dict[str, str], expected: tuple[str, ...] | None
) -> None:
    assert SubGroupPolicy.from_dict({"name": "tp", **policy}, "p").match_values(labels) == expected
