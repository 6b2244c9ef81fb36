"""The round plan through the reconcile: grace period, config change, no member held twice."""

from __future__ import annotations

from typing import Any

from tests.unit.controllers.hypernode.hnfakes import FakeApi, exact, hypernode
from volcano_py.controllers.hypernode.discovery import DiscoveryResult
from volcano_py.controllers.hypernode.plan import (
    CONFIG_ANNOTATION,
    REASON_DELETION_LIMIT,
    member_names,
)
from volcano_py.controllers.hypernode.reconcile import Reconciler
from volcano_py.kube.clock import FakeClock

SOURCE = "volcano.sh/network-topology-source"
GRACE = 60.0


def rack(name: str, *nodes: str, fp: str = "v1", tier: int = 1) -> dict:
    kind = "Node" if tier == 1 else "HyperNode"
    obj = hypernode(name, tier, [exact(n, kind) for n in nodes], labels={SOURCE: "label"})
    if fp:
        obj["metadata"]["annotations"] = {CONFIG_ANNOTATION: fp}
    return obj


def result(*hypernodes: dict, fp: str = "v1") -> DiscoveryResult:
    return DiscoveryResult("label", tuple(hypernodes), fingerprint=fp)


def setup(*existing: dict) -> tuple[FakeApi, Reconciler, FakeClock]:
    api = FakeApi()
    for obj in existing:
        api.put(obj)
    clock = FakeClock()
    return api, Reconciler(api, api.store, clock=clock, sleep=lambda s: None), clock


def racks(count: int) -> list[dict]:
    return [rack(f"r{i}", f"n{i}a", f"n{i}b") for i in range(count)]


def test_a_missing_hypernode_waits_out_its_grace_period_and_coming_back_cancels_it() -> None:
    api, reconciler, clock = setup(*racks(10))
    outcome = reconciler.reconcile(result(*racks(10)[:5]), 50, GRACE)
    assert outcome.deleted == []
    assert outcome.held_back is None
    assert outcome.plan is not None
    assert sorted(outcome.plan.waiting) == [f"r{i}" for i in range(5, 10)]
    assert outcome.plan.next_due == GRACE
    assert api.writes() == []  # waiting writes nothing
    clock.step(GRACE - 1)
    for back in range(6, 11):  # they come back one by one, within the grace period
        outcome = reconciler.reconcile(result(*racks(back)), 50, GRACE)
        assert outcome.deleted == []
        assert outcome.held_back is None
    assert api.writes() == []
    assert reconciler.missing.waiting("label") == {}
    clock.step(GRACE * 10)
    assert reconciler.reconcile(result(*racks(10)), 50, GRACE).deleted == []
    assert len(api.names()) == 10


def test_after_the_grace_period_the_limit_counts_what_would_be_deleted_then() -> None:
    api, reconciler, clock = setup(*racks(10))
    reconciler.reconcile(result(*racks(10)[:5]), 50, GRACE)
    clock.step(GRACE)
    outcome = reconciler.reconcile(result(*racks(10)[:5]), 50, GRACE)
    assert outcome.held_back is not None
    assert "5 of its 10" in outcome.held_back  # exactly 50 %
    assert outcome.deleted == []
    assert len(api.names()) == 10
    # four come back: 1 of 10 due, under the limit, deleted
    outcome = reconciler.reconcile(result(*racks(10)[:9]), 50, GRACE)
    assert outcome.deleted == ["r9"]


def test_a_hypernode_gone_missing_later_gets_its_own_grace_period() -> None:
    _, reconciler, clock = setup(*racks(4))
    reconciler.reconcile(result(*racks(3)), 100, GRACE)
    clock.step(GRACE / 2)
    outcome = reconciler.reconcile(result(*racks(2)), 100, GRACE)
    assert outcome.plan is not None
    assert outcome.plan.waiting == {"r2": GRACE, "r3": GRACE / 2}
    clock.step(GRACE / 2)
    assert reconciler.reconcile(result(*racks(2)), 100, GRACE).deleted == ["r3"]
    clock.step(GRACE / 2)
    assert reconciler.reconcile(result(*racks(2)), 100, GRACE).deleted == ["r2"]


def test_a_configuration_change_retires_the_old_shape_at_once_past_the_limit() -> None:
    old = [*racks(3), rack("spine", "r0", "r1", "r2", tier=2)]
    api, reconciler, _ = setup(*old)
    new = [rack("a-r0", "n0a", "n0b", "n1a", fp="v2"), rack("a-r1", "n1b", "n2a", "n2b", fp="v2")]
    outcome = reconciler.reconcile(result(*new, fp="v2"), 50, GRACE)
    assert outcome.held_back is None
    assert outcome.plan is not None
    assert outcome.plan.config_changed
    assert sorted(outcome.deleted) == ["r0", "r1", "r2", "spine"]
    assert outcome.created == ["a-r0", "a-r1"]
    writes = api.writes()
    assert writes[0] == ("delete", "spine", None)  # parents first
    assert [w[0] for w in writes] == ["delete"] * 4 + ["create"] * 2  # never in two leaves
    assert api.store.get("a-r0")["metadata"]["annotations"][CONFIG_ANNOTATION] == "v2"


def test_the_same_configuration_shrinking_is_still_guarded() -> None:
    api, reconciler, _ = setup(*racks(4))
    outcome = reconciler.reconcile(result(*racks(1)), 50, 0)
    assert outcome.held_back is not None
    condition = api.store.get("r0")["status"]["conditions"][0]
    assert condition["reason"] == REASON_DELETION_LIMIT
    assert len(api.names()) == 4


def test_unstamped_hypernodes_count_as_the_current_configuration() -> None:
    api, reconciler, _ = setup(*(rack(f"r{i}", f"n{i}", fp="") for i in range(4)))
    outcome = reconciler.reconcile(result(rack("r0", "n0", fp="v9"), fp="v9"), 50, 0)
    assert outcome.held_back is not None  # a Volcano-made tree is not retired wholesale
    assert len(api.names()) == 4


def test_a_node_moving_between_leaves_leaves_the_old_one_first() -> None:
    api, reconciler, _ = setup(rack("r1", "n1", "n2"), rack("r2", "n3"))
    reconciler.reconcile(result(rack("r1", "n1"), rack("r2", "n2", "n3")), 50, GRACE)
    assert [w[:2] for w in api.writes()] == [("patch", "r1"), ("patch", "r2")]


def test_a_leaf_exchanging_members_is_first_written_with_what_it_keeps() -> None:
    api, reconciler, _ = setup(rack("r1", "n1", "n2"), rack("r2", "n3", "n4"))
    patch = api.patch
    overlaps: list[set[str]] = []

    def watching(*args: Any, **kwargs: Any) -> Any:
        out = patch(*args, **kwargs)
        r1, r2 = (set(member_names(api.store.get(n))) for n in ("r1", "r2"))
        overlaps.append(r1 & r2)
        return out

    api.patch = watching  # type: ignore[method-assign]
    reconciler.reconcile(result(rack("r1", "n1", "n3"), rack("r2", "n2", "n4")), 50, GRACE)
    assert len(overlaps) == 4
    assert not any(overlaps)  # two shrinks, then two full writes
    assert member_names(api.store.get("r1")) == ["n1", "n3"]
    assert member_names(api.store.get("r2")) == ["n2", "n4"]


def test_a_missing_leaf_whose_nodes_all_moved_is_superseded_at_once() -> None:
    api, reconciler, _ = setup(*racks(4))
    moved = rack("r9", "n0a", "n0b")
    outcome = reconciler.reconcile(result(moved, *racks(4)[1:]), 50, GRACE)
    assert outcome.deleted == ["r0"]
    assert outcome.created == ["r9"]
    assert api.writes()[0] == ("delete", "r0", None)


def test_a_missing_leaf_keeps_only_the_nodes_nobody_else_claims_while_it_waits() -> None:
    api, reconciler, _ = setup(rack("r0", "n1", "n2"), rack("r1", "n3"))
    outcome = reconciler.reconcile(result(rack("r1", "n2", "n3")), 50, GRACE)
    assert outcome.deleted == []
    assert member_names(api.store.get("r0")) == ["n1"]
    assert [w[:2] for w in api.writes()] == [("patch", "r0"), ("patch", "r1")]


# -- intent versus accident (issue 44) --------------------------------------------------------


def explained(*names: str, fp: str = "v1") -> DiscoveryResult:
    """The label source's empty answer that names ``names`` as left out on purpose."""
    return DiscoveryResult("label", (), fingerprint=fp, explained=frozenset(names))


def test_relabelled_hypernodes_follow_the_labels_after_the_grace_period_past_the_limit() -> None:
    # Volcano's e2e: the labels are removed from both nodes, the HyperNodes must go
    api, reconciler, clock = setup(
        rack("r0", "n0"), rack("r1", "n1"), rack("s", "r0", "r1", tier=2)
    )
    assert reconciler.reconcile(explained("r0", "r1", "s"), 50, GRACE).deleted == []
    clock.step(GRACE)
    outcome = reconciler.reconcile(explained("r0", "r1", "s"), 50, GRACE)
    assert outcome.held_back is None
    assert outcome.deleted == ["s", "r0", "r1"]
    assert api.names() == []


def test_an_answer_of_nothing_unexplained_is_held_back_by_the_limit() -> None:
    api, reconciler, clock = setup(rack("r0", "n0"), rack("r1", "n1"))
    reconciler.reconcile(explained(), 50, GRACE)
    clock.step(GRACE)
    outcome = reconciler.reconcile(explained("r0"), 50, GRACE)  # one explained: 1 of 2 counted
    assert outcome.held_back is not None
    assert "would delete 1 of its 2" in outcome.held_back
    assert len(api.names()) == 2


def test_an_outage_longer_than_the_grace_period_deletes_nothing_and_restarts_the_wait() -> None:
    _, reconciler, clock = setup(*racks(10))
    reconciler.reconcile(result(*racks(9)), 50, GRACE)  # r9 missing
    clock.step(GRACE / 2)
    failed = DiscoveryResult("label", error="connection refused", fingerprint="v1")
    assert reconciler.reconcile(failed, 50, GRACE).deleted == []
    clock.step(GRACE)  # the outage lasts past r9's grace period
    outcome = reconciler.reconcile(result(*racks(9)), 50, GRACE)
    assert outcome.deleted == []
    assert outcome.plan is not None
    assert outcome.plan.waiting == {"r9": GRACE}  # waits afresh from the first good answer
    clock.step(GRACE)
    assert reconciler.reconcile(result(*racks(9)), 50, GRACE).deleted == ["r9"]
