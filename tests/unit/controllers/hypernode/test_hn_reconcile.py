from __future__ import annotations

import pytest

from tests.unit.controllers.hypernode.hnfakes import FakeApi, exact, hypernode
from volcano_py.controllers.hypernode.discovery import DiscoveryResult
from volcano_py.controllers.hypernode.plan import (
    CONFIG_ANNOTATION,
    REASON_CONFIG_HELD_BACK,
    REASON_DELETION_LIMIT,
)
from volcano_py.controllers.hypernode.reconcile import (
    REASON_SOURCE_ERROR,
    STALE_CONDITION,
    Reconciler,
)
from volcano_py.kube.clock import FakeClock
from volcano_py.kube.errors import Conflict, Invalid
from volcano_py.kube.events import FakeRecorder

SOURCE = "volcano.sh/network-topology-source"
CONFIGMAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "vs"}}


def owned(
    name: str, tier: int = 1, members: list[str] | None = None, source: str = "ufm", **labels: str
) -> dict:
    member_type = "Node" if tier == 1 else "HyperNode"
    return hypernode(
        name,
        tier,
        [exact(m, member_type) for m in members or [f"{name}-node"]],
        labels={SOURCE: source, **labels},
    )


def setup(*existing: dict) -> tuple[FakeApi, Reconciler, FakeRecorder]:
    api = FakeApi()
    for obj in existing:
        api.put(obj)
    recorder = FakeRecorder()
    reconciler = Reconciler(
        api,
        api.store,
        recorder=recorder,
        clock=FakeClock(),
        event_target=lambda: CONFIGMAP,
        sleep=lambda s: None,
    )
    return api, reconciler, recorder


def good(*hypernodes: dict, source: str = "ufm") -> DiscoveryResult:
    return DiscoveryResult(source, tuple(hypernodes))


def stale_condition(api: FakeApi, name: str) -> dict | None:
    obj = api.store.get(name)
    assert obj is not None
    return next(
        (
            c
            for c in (obj.get("status") or {}).get("conditions", [])
            if c["type"] == STALE_CONDITION
        ),
        None,
    )


def test_reconcile_creates_updates_and_deletes_to_match_the_result() -> None:
    api, reconciler, _ = setup(owned("keep"), owned("change"), owned("gone"), owned("also-kept"))
    outcome = reconciler.reconcile(
        good(owned("keep"), owned("change", members=["x", "y"]), owned("new"), owned("also-kept")),
        50,
        grace=0,
    )
    assert (outcome.created, outcome.updated, outcome.deleted) == (["new"], ["change"], ["gone"])
    assert api.names() == ["also-kept", "change", "keep", "new"]
    change = api.store.get("change")
    assert change is not None
    assert [m["selector"]["exactMatch"]["name"] for m in change["spec"]["members"]] == ["x", "y"]
    new = api.store.get("new")
    assert new is not None
    assert new["metadata"]["labels"][SOURCE] == "ufm"


def test_reconcile_writes_nothing_when_nothing_changed() -> None:
    api, reconciler, _ = setup(owned("a"), owned("b", tier=2, members=["a"]))
    outcome = reconciler.reconcile(good(owned("a"), owned("b", tier=2, members=["a"])), 50)
    assert api.writes() == []
    assert outcome.writes == 0


def test_reconcile_never_touches_hand_made_or_other_sources_hypernodes() -> None:
    handmade = hypernode("rack-1", 1, [exact("n1")])
    other = owned("leaf-hn-0", source="label")
    api, reconciler, recorder = setup(handmade, other)
    outcome = reconciler.reconcile(good(owned("rack-1"), owned("leaf-hn-0"), owned("mine")), 50)
    assert outcome.skipped == ["rack-1", "leaf-hn-0"]
    assert api.writes() == [("create", "mine", None)]
    assert api.store.get("rack-1")["metadata"]["labels"] == {}
    assert [reason for _, reason, _ in recorder.events] == ["HyperNodeNameTaken"] * 2


def test_reconcile_merges_labels_and_annotations_and_replaces_the_spec() -> None:
    current = owned("a", extra="kept", tier_label="old")
    current["metadata"]["annotations"] = {"note": "mine"}
    current["spec"]["tierName"] = "stale"
    api, reconciler, _ = setup(current)
    desired = owned("a", tier_label="new")
    desired["metadata"]["annotations"] = {"added": "yes"}
    reconciler.reconcile(good(desired), 50)
    obj = api.store.get("a")
    assert obj["metadata"]["labels"] == {SOURCE: "ufm", "extra": "kept", "tier_label": "new"}
    assert obj["metadata"]["annotations"] == {"note": "mine", "added": "yes"}
    assert "tierName" not in obj["spec"]


def test_reconcile_retries_an_update_on_conflict_from_a_fresh_read() -> None:
    api, reconciler, _ = setup(owned("a"))
    api.fail("patch", Conflict(409, "Conflict", "modified"))
    reconciler.reconcile(good(owned("a", members=["z"])), 50)
    assert [c for c in api.calls if c[0] in ("get", "patch")] == [
        ("patch", "a", None),
        ("get", "a", None),
        ("patch", "a", None),
    ]
    assert api.store.get("a")["spec"]["members"] == [exact("z")]


def test_reconcile_creates_children_before_parents_and_deletes_parents_first() -> None:
    api, reconciler, _ = setup(owned("old-leaf"), owned("old-spine", tier=2, members=["old-leaf"]))
    reconciler.reconcile(
        good(owned("leaf"), owned("spine", tier=2, members=["leaf"])), 100, grace=0
    )
    assert api.writes() == [
        ("delete", "old-spine", None),
        ("delete", "old-leaf", None),
        ("create", "leaf", None),
        ("create", "spine", None),
    ]


def test_reconcile_of_a_failed_round_deletes_nothing_and_marks_every_hypernode() -> None:
    api, reconciler, recorder = setup(owned("a"), owned("b"), owned("handmade", source="label"))
    outcome = reconciler.reconcile(
        DiscoveryResult("ufm", error="GET https://ufm/x answered HTTP 500"), 50
    )
    assert outcome.held_back is not None
    assert api.names() == ["a", "b", "handmade"]
    for name in ("a", "b"):
        condition = stale_condition(api, name)
        assert condition is not None
        assert condition["status"] == "True"
        assert condition["reason"] == REASON_SOURCE_ERROR
        assert "HTTP 500" in condition["message"]
        assert condition["lastTransitionTime"] == "2025-01-01T00:00:00Z"
    assert stale_condition(api, "handmade") is None
    kinds = [ref["kind"] for ref in recorder.references]
    assert kinds == ["HyperNode", "HyperNode", "ConfigMap"]
    assert {reason for _, reason, _ in recorder.events} == {REASON_SOURCE_ERROR}


def test_reconcile_repeating_the_same_failure_rewrites_nothing() -> None:
    api, reconciler, _ = setup(owned("a"))
    failure = DiscoveryResult("ufm", error="timed out")
    reconciler.reconcile(failure, 50)
    writes = len(api.writes())
    reconciler.reconcile(failure, 50)
    assert len(api.writes()) == writes


@pytest.mark.parametrize(
    ("existing", "kept", "limit", "held"),
    [
        (4, 1, 50, True),
        (4, 2, 50, True),
        (4, 3, 50, False),
        (4, 0, 100, False),
        (4, 3, 10, True),
        (1, 0, 50, True),
    ],
    ids=["75%-of-50", "exactly-50%-of-50", "25%-of-50", "all-of-100", "25%-of-10", "only-one"],
)
def test_reconcile_holds_back_a_result_deleting_too_large_a_share(
    existing: int, kept: int, limit: float, held: bool
) -> None:
    api, reconciler, _ = setup(*(owned(f"hn-{i}") for i in range(existing)))
    outcome = reconciler.reconcile(
        good(*(owned(f"hn-{i}") for i in range(kept)), owned("fresh")), limit, grace=0
    )
    assert (outcome.held_back is not None) is held
    if held:
        assert len(api.names()) == existing
        assert "fresh" not in api.names()
        condition = stale_condition(api, "hn-0")
        assert condition is not None
        assert condition["reason"] == REASON_DELETION_LIMIT
        assert f"at least maxDeletePercent {limit:g}%" in condition["message"]
    else:
        assert len(api.names()) == kept + 1


def test_reconcile_clears_the_condition_on_the_next_good_result() -> None:
    api, reconciler, _ = setup(owned("a"), owned("b"))
    reconciler.reconcile(DiscoveryResult("ufm", error="boom"), 50)
    assert stale_condition(api, "a") is not None
    api.store.get("a")["status"]["nodeCount"] = 3  # the status sync's field survives
    reconciler.reconcile(good(owned("a"), owned("b")), 50)
    assert stale_condition(api, "a") is None
    assert stale_condition(api, "b") is None
    assert api.store.get("a")["status"]["nodeCount"] == 3
    writes = len(api.writes())
    reconciler.reconcile(good(owned("a"), owned("b")), 50)
    assert len(api.writes()) == writes


def test_reconcile_skips_a_hypernode_the_server_rejects_and_applies_the_rest() -> None:
    api, reconciler, recorder = setup()
    api.fail("create", Invalid(422, "Invalid", "spec.members: bad"))
    outcome = reconciler.reconcile(good(owned("bad"), owned("good")), 50)
    assert outcome.skipped == ["bad"]
    assert outcome.created == ["good"]
    assert recorder.events[-1][1] == "HyperNodeRejected"


# -- never wiped by accident (issue 44) --------------------------------------------------------


def stamped(name: str, tier: int = 1, members: list[str] | None = None) -> dict:
    obj = owned(name, tier, members, source="label")
    obj["metadata"]["annotations"] = {CONFIG_ANNOTATION: "old"}
    return obj


def new_config(*hypernodes: dict, force: bool = False) -> DiscoveryResult:
    return DiscoveryResult("label", tuple(hypernodes), fingerprint="new", force=force)


SIX = [stamped(f"r{i}") for i in range(5)] + [stamped("s", 2, [f"r{i}" for i in range(5)])]


def test_a_configuration_that_discovers_nothing_is_held_back_with_a_warning_on_the_configmap() -> (
    None
):
    api, reconciler, recorder = setup(*SIX)
    outcome = reconciler.reconcile(new_config(), 50, 60)
    assert outcome.deleted == []
    assert outcome.held_back is not None
    assert "discovers 0 HyperNodes and would retire 6 of its 6 (100%)" in outcome.held_back
    assert "force: true" in outcome.held_back
    assert len(api.names()) == 6
    assert ("Warning", REASON_CONFIG_HELD_BACK, outcome.held_back) in recorder.events
    assert {ref["kind"] for ref in recorder.references} >= {"ConfigMap"}
    assert stale_condition(api, "r0")["reason"] == REASON_CONFIG_HELD_BACK  # type: ignore[index]


def test_a_held_back_configuration_goes_ahead_once_it_discovers_or_is_forced() -> None:
    api, reconciler, _ = setup(*SIX)
    assert reconciler.reconcile(new_config(), 50, 60).held_back is not None
    outcome = reconciler.reconcile(new_config(owned("a", source="label")), 50, 60)
    assert outcome.held_back is None  # 1 HyperNode for 6 retired is not "almost nothing"
    assert sorted(outcome.deleted) == ["r0", "r1", "r2", "r3", "r4", "s"]
    api, reconciler, _ = setup(*SIX)
    outcome = reconciler.reconcile(new_config(force=True), 50, 60)
    assert outcome.held_back is None
    assert api.names() == []
