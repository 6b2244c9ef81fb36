"""HyperNodeIndex / HyperNodeTree: members, readiness, tiers, incremental re-evaluation."""

from __future__ import annotations

import pytest

from tests.unit.scheduler.objects import hypernode
from volcano_py.api.constants import MAX_HYPERNODE_TIER
from volcano_py.scheduler.api.hypernode_info import HyperNodeIndex

TOP = "<cluster-top-hypernode>"


def _index(hns: list[dict[str, object]], nodes: dict[str, dict[str, str]]) -> HyperNodeIndex:
    index = HyperNodeIndex()
    for name, labels in nodes.items():
        index.set_node(name, labels)
    for hn in hns:
        index.set_hypernode(hn)  # type: ignore[arg-type]
    return index


def test_tree_links_parents_children_and_virtual_top() -> None:
    tree = _index(
        [
            hypernode("tor-1", 1, nodes=["a", "b"]),
            hypernode("tor-2", 1, nodes=["c"]),
            hypernode("spine", 2, children=["tor-1", "tor-2"]),
        ],
        {"a": {}, "b": {}, "c": {}, "d": {}},
    ).build()
    assert tree.ready
    assert tree.hypernodes["tor-1"].parent == "spine"
    assert tree.hypernodes["spine"].parent == TOP
    assert tree.top.tier == 3
    assert tree.top.children == ("spine",)
    assert tree.real_nodes["spine"] == {"a", "b", "c"}
    assert tree.real_nodes[TOP] == {"a", "b", "c", "d"}
    assert tree.tiers == [1, 2, 3]
    assert tree.node_chain["a"] == ("tor-1", "spine", TOP)
    assert tree.node_chain["d"] == (TOP,)
    assert tree.lca("tor-1", "tor-2") == "spine"


@pytest.mark.parametrize(
    ("hns", "error"),
    [
        (
            [hypernode("a", 2, children=["b"]), hypernode("b", 2, children=["a"])],
            "HyperNode cycle: a -> b -> a",
        ),
        (
            [
                hypernode("leaf", 1, nodes=["n"]),
                hypernode("p1", 2, children=["leaf"]),
                hypernode("p2", 2, children=["leaf"]),
            ],
            "HyperNode leaf has more than one parent: p1, p2",
        ),
        (
            [hypernode("l1", 1, nodes=["n"]), hypernode("l2", 1, nodes=["n"])],
            "node n is a member of more than one HyperNode: l1, l2",
        ),
    ],
    ids=["cycle", "two-parents", "node-in-two"],
)
def test_broken_hypernodes_are_named_and_quarantined_not_the_tree(
    hns: list[dict[str, object]], error: str
) -> None:
    tree = _index(hns, {"n": {}}).build()
    assert tree.ready
    assert error in tree.errors
    assert tree.quarantined
    assert all(error in reason for reason in tree.quarantined.values())
    assert not set(tree.quarantined) & set(tree.hypernodes)


@pytest.mark.parametrize("tier", [17, 2**31, 2**63 - 1], ids=["max+1", "2^31", "int64-max"])
def test_a_tier_over_the_maximum_is_quarantined_with_its_reason(tier: int) -> None:
    hns = [
        hypernode("rack", 1, nodes=["n1"]),
        hypernode("spine", MAX_HYPERNODE_TIER, children=["rack"]),
        hypernode("huge", tier, nodes=["n2"]),
    ]
    tree = _index(hns, {"n1": {}, "n2": {}}).build()
    assert tree.quarantined == {
        "huge": f"HyperNode huge: spec.tier {tier} is over the maximum tier {MAX_HYPERNODE_TIER}"
    }
    assert tree.tiers == [1, MAX_HYPERNODE_TIER, MAX_HYPERNODE_TIER + 1]
    assert tree.top.children == ("spine",)
    assert tree.quarantined_nodes["huge"] == {"n2"}


def test_quarantine_keeps_the_first_claim_and_the_healthy_rest() -> None:
    first = hypernode("rack-a", 1, nodes=["n1", "n2"])
    first["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    late = hypernode("rack-bad", 1, nodes=["n2", "n3"])
    late["metadata"]["creationTimestamp"] = "2026-06-01T00:00:00Z"
    hns = [
        late,
        first,
        hypernode("rack-b", 1, nodes=["n4"]),
        hypernode("spine", 2, children=["rack-a", "rack-b", "rack-bad"]),
    ]
    tree = _index(hns, {f"n{i}": {} for i in range(1, 5)}).build()
    assert set(tree.quarantined) == {"rack-bad"}
    assert "rack-a claimed it first" in tree.quarantined["rack-bad"]
    assert tree.quarantined_nodes["rack-bad"] == {"n3"}  # n2 stays in rack-a
    assert tree.hypernodes["spine"].children == ("rack-a", "rack-b")
    assert tree.real_nodes["spine"] == {"n1", "n2", "n4"}
    assert tree.node_chain["n2"][0] == "rack-a"


def test_a_cycle_quarantines_only_its_members() -> None:
    hns = [
        hypernode("a", 3, children=["b"]),
        hypernode("b", 3, children=["a"]),
        hypernode("rack", 1, nodes=["n"]),
        hypernode("spine", 2, children=["rack"]),
    ]
    tree = _index(hns, {"n": {}}).build()
    assert set(tree.quarantined) == {"a", "b"}
    assert tree.real_nodes["spine"] == {"n"}


def test_tier_name_map_from_spec() -> None:
    tree = _index(
        [
            hypernode("t", 1, nodes=["n"], tier_name="tor"),
            hypernode("s", 2, children=["t"], tier_name="spine"),
        ],
        {"n": {}},
    ).build()
    assert tree.tier_names == {"tor": 1, "spine": 2}


def test_regex_and_label_members_follow_node_changes() -> None:
    index = _index(
        [hypernode("rx", 1, regex="^gpu-"), hypernode("lb", 1, labels={"rack": "r1"})],
        {"gpu-1": {}, "cpu-1": {"rack": "r1"}},
    )
    assert index.build().real_nodes["rx"] == {"gpu-1"}
    assert index.build().real_nodes["lb"] == {"cpu-1"}
    index.set_node("gpu-2", {})
    index.set_node("cpu-1", {"rack": "r2"})
    tree = index.build()
    assert tree.real_nodes["rx"] == {"gpu-1", "gpu-2"}
    assert tree.real_nodes["lb"] == frozenset()
    index.delete_node("gpu-1")
    assert index.build().real_nodes["rx"] == {"gpu-2"}


def test_build_is_cached_until_something_changes() -> None:
    index = _index([hypernode("t", 1, nodes=["n"])], {"n": {}})
    first = index.build()
    assert index.build() is first
    index.set_node("n", {})
    assert index.build() is first
    index.set_node("n", {"x": "y"})
    assert index.build() is not first


def test_unparseable_hypernode_is_reported_not_fatal() -> None:
    index = _index([hypernode("ok", 1, nodes=["n"])], {"n": {}})
    index.set_hypernode({"metadata": {"name": "bad"}, "spec": {"tier": "high", "members": []}})
    tree = index.build()
    assert tree.ready
    assert "ok" in tree.hypernodes
    assert "bad" not in tree.hypernodes
    assert any(e.startswith("HyperNode bad:") for e in tree.errors)


def test_node_added_after_exact_member_hypernodes_joins_only_its_own() -> None:
    index = HyperNodeIndex()
    index.set_hypernode(hypernode("a", 1, nodes=["n1"]))  # type: ignore[arg-type]
    index.set_hypernode(hypernode("b", 1, nodes=["n2"]))  # type: ignore[arg-type]
    index.set_node("n1", {})
    index.set_node("n2", {})
    tree = index.build()
    assert tree.ready, tree.errors
    assert tree.real_nodes["a"] == {"n1"}
    assert tree.real_nodes["b"] == {"n2"}


def test_a_node_event_resolves_only_regex_and_label_members(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from volcano_py.scheduler.api import hypernode_info

    index = HyperNodeIndex()
    for i in range(50):
        index.set_hypernode(hypernode(f"x{i}", 1, nodes=[f"n{i}"]))  # type: ignore[arg-type]
    index.set_hypernode(hypernode("lb", 1, labels={"rack": "r1"}))  # type: ignore[arg-type]
    resolved: list[object] = []
    real = hypernode_info.resolve_node_members

    def counting(member: object, nodes: object) -> set[str]:
        resolved.append(member)
        return real(member, nodes)  # type: ignore[arg-type]

    monkeypatch.setattr(hypernode_info, "resolve_node_members", counting)
    index.set_node("n3", {})
    index.set_node("m", {"rack": "r1"})
    assert len(resolved) == 2  # the label member, once a node; the 50 exact ones are not
    tree = index.build()
    assert tree.ready, tree.errors
    assert tree.real_nodes["x3"] == {"n3"}
    assert tree.real_nodes["lb"] == {"m"}


def test_a_hypernode_turned_exact_only_stops_following_labels() -> None:
    index = _index([hypernode("h", 1, labels={"rack": "r1"})], {"n1": {"rack": "r1"}})
    assert index.build().real_nodes["h"] == {"n1"}
    index.set_hypernode(hypernode("h", 1, nodes=["n1"]))  # type: ignore[arg-type]
    index.set_node("n2", {"rack": "r1"})
    assert index.build().real_nodes["h"] == {"n1"}
    index.delete_hypernode("h")
    index.set_node("n3", {"rack": "r1"})
    assert "h" not in index.build().hypernodes
