"""Idle rounds cost identity checks, and anything that changed still gets a full round.

Label discovery hands back its last result when the node paths and the HyperNode objects
are the same; the reconcile skips a round that repeats one which found nothing to do. Each
test changes one input (a node label, a HyperNode edited by hand, a HyperNode deleted, a
failing source, a new configuration fingerprint) and checks the round acts on it.
"""

from __future__ import annotations

import copy

from tests.unit.controllers.hypernode.hnfakes import FakeApi, exact, hypernode, node
from tests.unit.controllers.hypernode.test_hn_reconcile import SOURCE, owned, setup
from volcano_py.controllers.hypernode.discovery import DiscoveryResult
from volcano_py.controllers.hypernode.idle import DiscoveryMemo
from volcano_py.controllers.hypernode.label import TopologyType, discover_label_hypernodes
from volcano_py.controllers.hypernode.reconcile import Reconciler

TYPE = TopologyType("t", ("rack", "spine"))


def _nodes() -> list[dict]:
    return [node(f"n{i}", rack=f"r{i // 2}", spine="s0") for i in range(6)]


def test_label_discovery_returns_the_last_result_for_the_same_input() -> None:
    nodes = _nodes()
    memo = DiscoveryMemo()
    first = discover_label_hypernodes(nodes, [], [TYPE], memo)
    again = discover_label_hypernodes(nodes, [], [TYPE], memo)
    assert again == first
    assert all(a is b for a, b in zip(again, first, strict=True))  # not rebuilt


def test_label_discovery_rebuilds_when_a_node_moves() -> None:
    nodes = _nodes()
    memo = DiscoveryMemo()
    first = discover_label_hypernodes(nodes, [], [TYPE], memo)
    moved = [*nodes[:5], node("n5", rack="r9", spine="s0")]
    again = discover_label_hypernodes(moved, [], [TYPE], memo)
    racks = {h["metadata"]["labels"]["rack"] for h in again if h["spec"]["tier"] == 1}
    assert racks == {"r0", "r1", "r2", "r9"}
    assert again != first


def test_label_discovery_rebuilds_when_a_hypernode_object_is_replaced() -> None:
    nodes = _nodes()
    memo = DiscoveryMemo()
    first = discover_label_hypernodes(nodes, [], [TYPE], memo)
    existing = [copy.deepcopy(h) for h in first]
    named = discover_label_hypernodes(nodes, existing, [TYPE], memo)
    # a foreign HyperNode takes a discovered name: the next round must not reuse the result
    foreign = hypernode(first[0]["metadata"]["name"], 1, [exact("x")])
    renamed = discover_label_hypernodes(nodes, [foreign, *existing[1:]], [TYPE], memo)
    assert first[0]["metadata"]["name"] not in {h["metadata"]["name"] for h in renamed}
    assert [h["metadata"]["name"] for h in named] == [h["metadata"]["name"] for h in first]


def _idle(api: FakeApi, reconciler: Reconciler, result: DiscoveryResult) -> None:
    """Three rounds of ``result``: the first settles, the others repeat the second's plan
    (skipped: the very same plan object comes back) and call nothing."""
    reconciler.reconcile(result, 50, grace=0)
    second = reconciler.reconcile(result, 50, grace=0)
    api.calls.clear()
    third = reconciler.reconcile(result, 50, grace=0)
    assert api.calls == []
    assert third.writes == 0
    assert third.plan is not None
    assert third.plan is second.plan


def test_a_repeated_idle_round_does_nothing_and_a_hand_edit_is_still_repaired() -> None:
    api, reconciler, _ = setup(owned("a"), owned("b"))
    result = DiscoveryResult("ufm", (owned("a"), owned("b")))
    _idle(api, reconciler, result)
    edited = copy.deepcopy(api.store.get("a"))
    assert edited is not None
    edited["spec"]["members"] = [exact("intruder")]
    api.store.put("a", edited)  # the informer delivers a new object
    outcome = reconciler.reconcile(result, 50, grace=0)
    assert outcome.updated == ["a"]
    repaired = api.store.get("a")
    assert repaired is not None
    assert repaired["spec"]["members"] == [exact("a-node")]


def test_an_idle_round_recreates_a_hypernode_deleted_by_hand() -> None:
    api, reconciler, _ = setup(owned("a"), owned("b"))
    result = DiscoveryResult("ufm", (owned("a"), owned("b")))
    _idle(api, reconciler, result)
    api.store.remove("b")
    assert reconciler.reconcile(result, 50, grace=0).created == ["b"]


def test_a_failing_source_after_idle_rounds_is_still_held_back() -> None:
    api, reconciler, _ = setup()
    empty = DiscoveryResult("ufm", ())
    _idle(api, reconciler, empty)  # a source that legitimately found nothing, twice
    api.put(owned("a"))
    _idle(api, reconciler, DiscoveryResult("ufm", (api.store.get("a") or {},)))
    failed = DiscoveryResult("ufm", (), error="UFM unreachable")
    outcome = reconciler.reconcile(failed, 50, grace=0)
    assert outcome.held_back is not None
    assert api.names() == ["a"]


def test_a_new_configuration_fingerprint_is_a_full_round() -> None:
    api, reconciler, _ = setup(owned("a"))
    hypernodes = (owned("a"),)
    _idle(api, reconciler, DiscoveryResult("ufm", hypernodes, fingerprint="one"))
    api.calls.clear()
    outcome = reconciler.reconcile(
        DiscoveryResult("ufm", hypernodes, fingerprint="two"), 50, grace=0
    )
    assert outcome.updated == ["a"]  # the new fingerprint is stamped
    current = api.store.get("a")
    assert current is not None
    assert current["metadata"]["labels"][SOURCE] == "ufm"
