from __future__ import annotations

import time
from typing import Any

import pytest

from volcano_py.api.constants import MemberType
from volcano_py.api.errors import FieldError
from volcano_py.api.hypernode import (
    HyperNode,
    Member,
    MemberSelector,
    resolve_hypernode_members,
    resolve_node_members,
)

NODES = {
    "node-1": {"rack": "r1", "gpu": "a100"},
    "node-2": {"rack": "r1"},
    "node-10": {"rack": "r2"},
    "gpu-node-3": {"rack": "r2", "gpu": "h100"},
}


def member(type_: str, selector: dict[str, Any]) -> Member:
    return Member.from_dict({"type": type_, "selector": selector}, "spec.members[0]")


def hypernode(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {
            "name": "rack-1",
            "uid": "u-1",
            "resourceVersion": "7",
            "labels": {"volcano.sh/network-topology-source": "label"},
        },
        "spec": spec,
    }


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ({"exactMatch": {"name": "node-1"}}, {"node-1"}),
        ({"exactMatch": {"name": "node-404"}}, {"node-404"}),
        ({"exactMatch": {"name": ""}}, set()),
        ({"regexMatch": {"pattern": "ode-1"}}, {"node-1", "node-10"}),
        ({"regexMatch": {"pattern": "^node-[0-9]$"}}, {"node-1", "node-2"}),
        ({"regexMatch": {"pattern": "^gpu-"}}, {"gpu-node-3"}),
        ({"regexMatch": {"pattern": "(node"}}, set()),
        ({"regexMatch": {"pattern": "x"}}, set()),
        ({"labelMatch": {"matchLabels": {"rack": "r1"}}}, {"node-1", "node-2"}),
        (
            {"labelMatch": {"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}},
            {"node-1", "gpu-node-3"},
        ),
        (
            {"labelMatch": {"matchExpressions": [{"key": "gpu", "operator": "DoesNotExist"}]}},
            {"node-2", "node-10"},
        ),
        ({"labelMatch": {}}, set()),
        ({"labelMatch": {"matchLabels": {}, "matchExpressions": []}}, set()),
        (
            {"labelMatch": {"matchExpressions": [{"key": "gpu", "operator": "Has"}]}},
            set(),
        ),
        ({}, set()),
    ],
    ids=[
        "exact",
        "exact-missing-node-still-selected",
        "exact-empty-name",
        "regex-unanchored",
        "regex-anchored",
        "regex-prefix",
        "regex-invalid",
        "regex-no-match",
        "label-match-labels",
        "label-exists",
        "label-does-not-exist",
        "label-empty-selects-none",
        "label-empty-lists-select-none",
        "label-invalid-operator",
        "no-selector",
    ],
)
def test_resolve_node_members(selector: dict[str, Any], expected: set[str]) -> None:
    assert resolve_node_members(member("Node", selector), NODES) == expected


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        (
            {"exactMatch": {"name": "node-1"}, "regexMatch": {"pattern": "^gpu"}},
            {"node-1", "gpu-node-3"},
        ),
        ({"exactMatch": {"name": ""}, "regexMatch": {"pattern": "^gpu"}}, set()),
        ({"exactMatch": {"name": "node-1"}, "regexMatch": {"pattern": "("}}, set()),
        ({"exactMatch": {"name": "node-1"}, "labelMatch": {}}, {"node-1"}),
    ],
    ids=["union", "empty-exact-stops", "invalid-regex-empties", "empty-label-keeps-earlier"],
)
def test_resolve_node_members_with_several_selectors_follows_volcano(
    selector: dict[str, Any], expected: set[str]
) -> None:
    assert resolve_node_members(member("Node", selector), NODES) == expected


def test_resolve_node_members_ignores_hypernode_members() -> None:
    assert (
        resolve_node_members(member("HyperNode", {"regexMatch": {"pattern": "."}}), NODES) == set()
    )


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ({"exactMatch": {"name": "rack-1"}}, {"rack-1"}),
        ({"exactMatch": {"name": "rack-9"}}, {"rack-9"}),
        ({"regexMatch": {"pattern": "rack-[12]"}}, {"rack-1", "rack-2"}),
        ({"regexMatch": {"pattern": "[z-a]"}}, set()),
        ({"labelMatch": {"matchLabels": {"tier": "1"}}}, set()),
    ],
    ids=["exact", "exact-unknown", "regex", "regex-invalid", "label-selects-nothing"],
)
def test_resolve_hypernode_members(selector: dict[str, Any], expected: set[str]) -> None:
    names = ["rack-1", "rack-2", "rack-3", "spine-1"]
    assert resolve_hypernode_members(member("HyperNode", selector), names) == expected
    assert resolve_hypernode_members(member("Node", selector), names) == set()


@pytest.mark.parametrize(
    ("type_", "selector", "name", "expected"),
    [
        ("Node", {"exactMatch": {"name": "node-1"}}, "node-1", True),
        ("Node", {"exactMatch": {"name": "node-1"}}, "node-2", False),
        ("Node", {"regexMatch": {"pattern": "ode"}}, "node-1", True),
        ("Node", {"labelMatch": {"matchLabels": {"gpu": "a100"}}}, "node-1", True),
        ("Node", {"labelMatch": {"matchLabels": {"gpu": "a100"}}}, "node-2", False),
        ("Node", {"labelMatch": {}}, "node-1", False),
        ("HyperNode", {"exactMatch": {"name": "node-1"}}, "node-1", False),
    ],
    ids=["exact", "exact-other", "regex", "label", "label-other", "empty-label", "hypernode"],
)
def test_member_matches_node(
    type_: str, selector: dict[str, Any], name: str, expected: bool
) -> None:
    assert member(type_, selector).matches_node(name, NODES[name]) is expected


def test_resolution_over_ten_thousand_nodes_is_fast() -> None:
    nodes = {f"node-{i}": {"rack": f"r{i % 100}"} for i in range(10_000)}
    regex = member("Node", {"regexMatch": {"pattern": "^node-1[0-9]*$"}})
    labels = member(
        "Node",
        {"labelMatch": {"matchExpressions": [{"key": "rack", "operator": "In", "values": ["r7"]}]}},
    )
    start = time.process_time()  # CPU time: other processes' load does not count
    assert len(resolve_node_members(regex, nodes)) == 1111
    assert len(resolve_node_members(labels, nodes)) == 100
    # a guard against a quadratic resolution, not a figure (bench_hypernode measures it)
    assert time.process_time() - start < 5.0


def test_hypernode_from_dict_reads_every_field() -> None:
    obj = hypernode(
        tier=1,
        tierName="rack",
        members=[
            {"type": "Node", "selector": {"exactMatch": {"name": "node-1"}}},
            {"type": "Node", "selector": {"regexMatch": {"pattern": "^gpu-"}}},
            {"type": "HyperNode", "selector": {"exactMatch": {"name": "leaf-1"}}},
        ],
    )
    obj["metadata"]["annotations"] = {"note": "x"}
    obj["status"] = {
        "nodeCount": 3,
        "conditions": [{"type": "Ready", "status": "True", "reason": "Synced"}],
    }
    hn = HyperNode.from_dict(obj)
    assert (hn.name, hn.tier, hn.tier_name, hn.uid, hn.resource_version) == (
        "rack-1",
        1,
        "rack",
        "u-1",
        "7",
    )
    assert hn.members[0] == Member(MemberType.NODE, MemberSelector(exact_match="node-1"))
    assert hn.members[1].selector.regex_match == "^gpu-"
    assert hn.labels == {"volcano.sh/network-topology-source": "label"}
    assert hn.annotations == {"note": "x"}
    assert hn.node_count == 3
    assert hn.conditions[0]["reason"] == "Synced"
    assert [m.type for m in hn.node_members] == [MemberType.NODE, MemberType.NODE]
    assert hn.exact_children() == ["leaf-1"]
    assert [m.to_dict() for m in hn.members] == obj["spec"]["members"]


def test_hypernode_from_dict_defaults_for_missing_fields() -> None:
    hn = HyperNode.from_dict({"metadata": {"name": "leaf"}, "spec": {}})
    assert (hn.tier, hn.tier_name, hn.members, hn.node_count, hn.conditions) == (
        0,
        "",
        (),
        None,
        (),
    )
    assert dict(hn.labels) == {}
    assert HyperNode.from_dict(hypernode(tier=2.0)).tier == 2


def test_hypernode_labels_are_read_only() -> None:
    hn = HyperNode.from_dict(hypernode(tier=1))
    with pytest.raises(TypeError):
        hn.labels["x"] = "y"  # type: ignore[index]


@pytest.mark.parametrize(
    ("spec", "status", "error"),
    [
        ({"tier": -1}, None, "spec.tier: must be an integer >= 0"),
        ({"tier": "1"}, None, "spec.tier: must be an integer >= 0"),
        ({"tier": True}, None, "spec.tier: must be an integer >= 0"),
        ({"tier": 1.5}, None, "spec.tier: must be an integer >= 0"),
        ({"tierName": 3}, None, "spec.tierName: must be a string"),
        ({"members": {}}, None, "spec.members: must be a list"),
        ({"members": ["Node"]}, None, "spec.members[0]: must be an object"),
        (
            {
                "members": [
                    {"type": "Node", "selector": {"exactMatch": {"name": "n"}}},
                    {"type": "Rack"},
                ]
            },
            None,
            "spec.members[1].type: must be one of Node, HyperNode",
        ),
        (
            {"members": [{"selector": {}}]},
            None,
            "spec.members[0].type: must be one of Node, HyperNode",
        ),
        (
            {"members": [{"type": "Node", "selector": []}]},
            None,
            "spec.members[0].selector: must be an object",
        ),
        (
            {"members": [{"type": "Node", "selector": {"exactMatch": {"name": 1}}}]},
            None,
            "spec.members[0].selector.exactMatch.name: must be a string",
        ),
        (
            {"members": [{"type": "Node", "selector": {"regexMatch": "^n"}}]},
            None,
            "spec.members[0].selector.regexMatch: must be an object",
        ),
        (
            {"members": [{"type": "Node", "selector": {"regexMatch": {"pattern": 7}}}]},
            None,
            "spec.members[0].selector.regexMatch.pattern: must be a string",
        ),
        (
            {"members": [{"type": "Node", "selector": {"labelMatch": {"matchLabels": ["a"]}}}]},
            None,
            'spec.members[0].selector.labelMatch.matchLabels: Invalid value: ["a"]: '
            "must be an object of label keys to values",
        ),
        ({}, {"nodeCount": "3"}, "status.nodeCount: must be an integer >= 0"),
        ({}, {"conditions": [1]}, "status.conditions[0]: must be an object"),
        ({}, [], "status: must be an object"),
    ],
    ids=[
        "negative-tier",
        "string-tier",
        "bool-tier",
        "fractional-tier",
        "tier-name",
        "members-object",
        "member-string",
        "member-type-unknown",
        "member-type-missing",
        "selector-list",
        "exact-name-int",
        "regex-string",
        "pattern-int",
        "label-shape",
        "node-count",
        "condition",
        "status-list",
    ],
)
def test_hypernode_from_dict_names_the_bad_field(
    spec: dict[str, Any], status: Any, error: str
) -> None:
    obj = hypernode(**spec)
    if status is not None:
        obj["status"] = status
    with pytest.raises(FieldError) as info:
        HyperNode.from_dict(obj)
    assert str(info.value) == error


def test_hypernode_from_dict_keeps_invalid_selectors_it_cannot_use() -> None:
    hn = HyperNode.from_dict(
        hypernode(
            tier=1,
            members=[
                {"type": "Node", "selector": {"regexMatch": {"pattern": "(("}}},
                {
                    "type": "Node",
                    "selector": {
                        "labelMatch": {"matchExpressions": [{"key": "a", "operator": "Bad"}]}
                    },
                },
                {
                    "type": "Node",
                    "selector": {"exactMatch": {"name": "n"}, "regexMatch": {"pattern": "m"}},
                },
            ],
        )
    )
    assert hn.members[0].selector.regex_match == "(("
    label_match = hn.members[1].selector.label_match
    assert label_match is not None
    assert not label_match.is_valid
    assert hn.members[2].selector.exact_match == "n"
    assert all(resolve_node_members(m, NODES) == set() for m in hn.members[:2])
