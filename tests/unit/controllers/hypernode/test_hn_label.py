from __future__ import annotations

import pytest

from tests.unit.controllers.hypernode.hnfakes import hypernode, members_of, node, node_store
from volcano_py.api.selectors import is_dns1123_subdomain
from volcano_py.controllers.hypernode.config import ConfigError, DiscoveryConfig
from volcano_py.controllers.hypernode.discovery import DiscoveryContext
from volcano_py.controllers.hypernode.label import (
    LabelDiscoverer,
    TopologyType,
    discover_label_hypernodes,
    parse_types,
)
from volcano_py.controllers.hypernode.label_paths import relabelled
from volcano_py.kube.store import Store

SOURCE = "volcano.sh/network-topology-source"
THREE = TopologyType("a3", ("rack", "spine", "zone"))  # tier 1 = rack


def by_label(hypernodes: list[dict], key: str, value: str) -> list[dict]:
    return [
        h
        for h in hypernodes
        if h["metadata"]["labels"].get(key) == value and h["spec"]["tierName"] == key
    ]


def test_parse_types_drops_the_node_level_and_orders_tiers_bottom_up() -> None:
    types, problems = parse_types(
        {
            "networkTopologyTypes": {
                "topologyA3": [
                    {"nodeLabel": "volcano.sh/hypercluster"},
                    {"nodeLabel": "volcano.sh/hypernode"},
                    {"nodeLabel": "kubernetes.io/hostname"},
                ]
            }
        }
    )
    assert problems == []
    assert types == [
        TopologyType("topologyA3", ("volcano.sh/hypernode", "volcano.sh/hypercluster"))
    ]


@pytest.mark.parametrize(
    ("name", "labels", "fragment"),
    [
        ("a-type-name-longer-than-20", ["x", "h"], "longer than 20"),
        ("dup", ["x", "x", "h"], "duplicate labels: x"),
        ("short", ["h"], "at least two"),
        ("badkey", ["not a key!", "h"], "is not a label key"),
    ],
    ids=["too-long", "duplicates", "one-label", "bad-key"],
)
def test_parse_types_skips_a_bad_type_with_an_error_and_keeps_the_others(
    name: str, labels: list[str], fragment: str
) -> None:
    types, problems = parse_types(
        {
            "networkTopologyTypes": {
                name: [{"nodeLabel": k} for k in labels],
                "good": [{"nodeLabel": "rack"}, {"nodeLabel": "h"}],
            }
        }
    )
    assert [t.name for t in types] == ["good"]
    assert len(problems) == 1
    assert problems[0].startswith(f"config.networkTopologyTypes.{name}:")
    assert fragment in problems[0]


def test_label_discovery_builds_tiers_members_and_tier_names() -> None:
    nodes = [
        node("n1", rack="r1", spine="s1", zone="z"),
        node("n2", rack="r1", spine="s1", zone="z"),
        node("n3", rack="r2", spine="s1", zone="z"),
        node("n4", rack="r3", spine="s2", zone="z"),
        node("other"),
    ]
    result = discover_label_hypernodes(nodes, [], [THREE])
    tiers = sorted((h["spec"]["tier"], h["spec"]["tierName"]) for h in result)
    assert tiers == [(1, "rack")] * 3 + [(2, "spine")] * 2 + [(3, "zone")]
    r1 = by_label(result, "rack", "r1")[0]
    assert members_of(r1) == ["n1", "n2"]
    assert {m["type"] for m in r1["spec"]["members"]} == {"Node"}
    assert r1["metadata"]["labels"] == {"rack": "r1", "spine": "s1", "zone": "z", SOURCE: "label"}
    assert r1["metadata"]["name"] == "hypernode-a3-tier1-z.s1.r1"  # the path, top down
    assert by_label(result, "zone", "z")[0]["metadata"]["name"] == "hypernode-a3-tier3-z"
    s1 = by_label(result, "spine", "s1")[0]
    names = {h["metadata"]["name"]: h for h in result}
    assert sorted(members_of(s1)) == members_of(s1)
    assert sorted(members_of(names[m])[0] for m in members_of(s1)) == ["n1", "n3"]
    zone = by_label(result, "zone", "z")[0]
    assert {m["type"] for m in zone["spec"]["members"]} == {"HyperNode"}
    assert len(members_of(zone)) == 2


def test_label_discovery_stops_a_node_at_its_first_missing_level() -> None:
    result = discover_label_hypernodes([node("n1", rack="r1", zone="z")], [], [THREE])
    assert [(h["spec"]["tier"], h["metadata"]["labels"]) for h in result] == [
        (1, {"rack": "r1", SOURCE: "label"})
    ]


def test_label_discovery_keeps_one_hypernode_per_parent_for_a_repeated_value() -> None:
    nodes = [node("n1", rack="r1", spine="s1"), node("n2", rack="r1", spine="s2")]
    result = discover_label_hypernodes(nodes, [], [TopologyType("t", ("rack", "spine"))])
    racks = by_label(result, "rack", "r1")
    assert len(racks) == 2
    assert sorted(members_of(r)[0] for r in racks) == ["n1", "n2"]
    parents = [h for h in result if h["spec"]["tier"] == 2]
    children = [c for p in parents for c in members_of(p)]
    assert sorted(children) == sorted(r["metadata"]["name"] for r in racks)


def test_label_discovery_keeps_a_rack_whole_when_one_node_lacks_the_upper_label() -> None:
    nodes = [node("node0", rack="s0"), node("node1", rack="s0", spine="s2")]
    result = discover_label_hypernodes(nodes, [], [TopologyType("t", ("rack", "spine"))])
    racks = by_label(result, "rack", "s0")
    assert len(racks) == 1
    assert members_of(racks[0]) == ["node0", "node1"]
    assert racks[0]["metadata"]["labels"]["spine"] == "s2"
    (spine,) = [h for h in result if h["spec"]["tier"] == 2]
    assert members_of(spine) == [racks[0]["metadata"]["name"]]


def test_label_discovery_completes_a_short_path_along_one_chain_only() -> None:
    chain = [
        node("a", rack="r"),
        node("b", rack="r", spine="s"),
        node("c", rack="r", spine="s", zone="z"),
    ]
    result = discover_label_hypernodes(chain, [], [THREE])
    (rack,) = by_label(result, "rack", "r")
    assert members_of(rack) == ["a", "b", "c"]
    # Two labelled parents conflict: the rack splits, the unlabelled node stays on its own.
    conflict = [
        node("a", rack="r"),
        node("b", rack="r", spine="s1"),
        node("c", rack="r", spine="s2"),
    ]
    racks = by_label(discover_label_hypernodes(conflict, [], [THREE]), "rack", "r")
    assert sorted(members_of(r)[0] for r in racks) == ["a", "b", "c"]
    assert len(racks) == 3


def test_label_discovery_reuses_names_so_a_restart_renames_nothing() -> None:
    nodes = [node(f"n{i}", rack=f"r{i % 3}", spine=f"s{i % 2}", zone="z") for i in range(12)]
    first = discover_label_hypernodes(nodes, [], [THREE])
    second = discover_label_hypernodes(nodes, first, [THREE])
    assert sorted(h["metadata"]["name"] for h in first) == sorted(
        h["metadata"]["name"] for h in second
    )
    assert first == second


def test_label_discovery_adopts_a_volcano_named_hypernode_with_only_its_own_label() -> None:
    existing = hypernode(
        "hypernode-a3-tier1-abcde", 1, [], labels={"rack": "r1", SOURCE: "label"}, tier_name="rack"
    )
    handmade = hypernode("hypernode-a3-tier1-zzzzz", 1, [], labels={"rack": "r1"})
    result = discover_label_hypernodes(
        [node("n1", rack="r1", spine="s1", zone="z")],
        [existing, handmade],
        [THREE],
    )
    rack = by_label(result, "rack", "r1")[0]
    assert rack["metadata"]["name"] == "hypernode-a3-tier1-abcde"


def test_label_discovery_does_not_reuse_a_name_whose_path_contradicts() -> None:
    existing = hypernode(
        "hypernode-a3-tier1-abcde", 1, [], labels={"rack": "r1", "spine": "s9", SOURCE: "label"}
    )
    result = discover_label_hypernodes(
        [node("n1", rack="r1", spine="s1", zone="z")], [existing], [THREE]
    )
    names = {h["metadata"]["name"] for h in result}
    assert "hypernode-a3-tier1-abcde" not in names


def test_label_discovery_never_generates_a_taken_name() -> None:
    first = discover_label_hypernodes([node("n1", rack="r1")], [], [THREE])
    taken = hypernode(first[0]["metadata"]["name"], 1, [], labels={})  # hand-made, same name
    second = discover_label_hypernodes([node("n1", rack="r1")], [taken], [THREE])
    assert second[0]["metadata"]["name"] != first[0]["metadata"]["name"]


def discoverer(nodes: Store | None = None) -> LabelDiscoverer:
    config = DiscoveryConfig(
        "label",
        enabled=True,
        config={
            "networkTopologyTypes": {
                "t": [{"nodeLabel": "spine"}, {"nodeLabel": "rack"}, {"nodeLabel": "h"}]
            }
        },
    )
    return LabelDiscoverer(config, DiscoveryContext(nodes or Store(), Store()))


@pytest.mark.parametrize(
    ("old", "new", "wakes"),
    [
        ({"rack": "r1"}, {"rack": "r2"}, True),
        ({"rack": "r1"}, {"rack": "r1", "color": "blue"}, False),
        ({}, {"spine": "s1"}, True),
        ({"spine": "s1"}, {}, True),
    ],
    ids=["watched-changed", "unwatched-changed", "watched-added", "watched-removed"],
)
def test_label_discoverer_rediscovers_only_on_watched_label_changes(
    old: dict[str, str], new: dict[str, str], wakes: bool
) -> None:
    d = discoverer()
    d.on_node_update(node("n", **old), node("n", **new))
    assert d._wake.is_set() is wakes


def test_label_discoverer_wakes_on_its_own_hypernode_deletion_only() -> None:
    d = discoverer()
    d.on_hypernode_delete(hypernode("x", 1, [], labels={SOURCE: "ufm"}))
    d.on_node_add(node("plain", color="red"))
    assert not d._wake.is_set()
    d.on_hypernode_delete(hypernode("y", 1, [], labels={SOURCE: "label"}))
    assert d._wake.is_set()


def test_label_discoverer_refuses_a_config_without_usable_types() -> None:
    config = DiscoveryConfig("label", config={"networkTopologyTypes": {"x": [{"nodeLabel": "h"}]}})
    reported: list[str] = []
    with pytest.raises(ConfigError, match="no usable topology type"):
        LabelDiscoverer(config, DiscoveryContext(Store(), Store(), report=reported.append))
    assert "at least two" in reported[0]


def test_label_discoverer_discovers_from_the_node_cache() -> None:
    d = discoverer(node_store(node("n1", rack="r1", spine="s1"), node("n2", rack="r1", spine="s1")))
    result = d.discover()
    assert [
        (h["spec"]["tier"], h["spec"]["tierName"])
        for h in sorted(result, key=lambda h: h["spec"]["tier"])
    ] == [
        (1, "rack"),
        (2, "spine"),
    ]


def test_label_discoverer_keeps_its_last_names_while_the_cache_lags() -> None:
    d = discoverer(node_store(node("n1", rack="r1", spine="s1")))
    first = sorted(h["metadata"]["name"] for h in d.discover())
    # The HyperNodes were created, but the HyperNode cache has not seen them yet.
    second = sorted(h["metadata"]["name"] for h in d.discover())
    assert second == first


def test_label_discovery_names_a_recreated_hypernode_as_before() -> None:
    nodes = [node(f"n{i}", rack=f"r{i % 3}", spine="s", zone="z") for i in range(6)]
    first = discover_label_hypernodes(nodes, [], [THREE])
    without = [h for h in first if h["metadata"]["labels"].get("rack") != "r1"]
    again = discover_label_hypernodes(nodes, without, [THREE])  # r1 was deleted meanwhile
    assert [h["metadata"]["name"] for h in again] == [h["metadata"]["name"] for h in first]


def test_label_discovery_hashes_values_that_are_not_name_safe() -> None:
    nodes = [node("n1", rack="Rack_1", spine="s", zone="z"), node("n2", rack="rack-1", spine="s")]
    result = discover_label_hypernodes(nodes, [], [THREE])
    names = sorted(h["metadata"]["name"] for h in result if h["spec"]["tier"] == 1)
    assert names[0] == "hypernode-a3-tier1-s.rack-1"
    assert names[1].startswith("hypernode-a3-tier1-z.s.rack-1-")  # cleaned, then hashed
    long = [node("n1", rack="r" * 63, spine="s" * 63, zone="z" * 63)]
    for h in discover_label_hypernodes(long, [], [THREE]):
        assert len(h["metadata"]["name"]) <= 63
        assert is_dns1123_subdomain(h["metadata"]["name"]) == []


def test_relabelled_names_the_racks_whose_nodes_are_still_listed_and_parents_left_empty() -> None:
    def hn(name: str, tier: int, *members: str) -> dict:
        kind = "Node" if tier == 1 else "HyperNode"
        items = [{"type": kind, "selector": {"exactMatch": {"name": m}}} for m in members]
        return {"metadata": {"name": name}, "spec": {"tier": tier, "members": items}}

    owned = [
        hn("relabelled", 1, "n1", "n2"),
        hn("lost", 1, "n3"),
        hn("kept", 1, "n4"),
        hn("spine-a", 2, "relabelled"),
        hn("spine-b", 2, "lost", "kept"),
        hn("spine-c", 2, "kept", "gone-before"),
    ]
    result = [hn("kept", 1, "n4")]
    assert relabelled(owned, result, {"n1", "n2", "n4"}) == {"relabelled", "spine-a", "spine-c"}
    assert relabelled(owned, result, set()) == {"spine-c"}  # a cache that lists no node
