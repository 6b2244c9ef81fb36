"""A discovery source removed from the configuration: its HyperNodes retire after a grace."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.controllers.hypernode.hnfakes import FakeApi, exact, hypernode
from tests.unit.controllers.hypernode.test_hn_controller import CM, NS, SOURCE, STATIC, Harness
from volcano_py.controllers.hypernode.reconcile import Reconciler
from volcano_py.controllers.hypernode.retire import (
    Retirements,
    discovered_by_source,
)
from volcano_py.kube.clock import FakeClock

KEY = f"{NS}/{CM}"
GRACE_30S = STATIC.replace("enabled: true", "enabled: true\n    deletionGracePeriod: 30s")
NONE = "networkTopologyDiscovery: []\n"


@pytest.fixture
def h() -> Any:
    harness = Harness()
    yield harness
    harness.controller.manager.stop()


def _events(h: Harness, reason: str) -> list[str]:
    return [message for _, r, message in h.recorder.events if r == reason]


def _discovered(h: Harness, text: str = GRACE_30S) -> None:
    h.set_config(text)
    h.controller.sync_config(KEY)
    h.drain_sources()
    h.api.put(hypernode("by-hand", 1, [exact("n1")]))  # no source label: never touched
    assert h.api.names() == ["by-hand", "rack-a", "spine"]


# -- the pure parts ---------------------------------------------------------------------


def test_discovered_by_source_groups_labelled_hypernodes_and_leaves_hand_made_out() -> None:
    objs = [
        hypernode("b", 1, [], labels={SOURCE: "label"}),
        hypernode("a", 1, [], labels={SOURCE: "label"}),
        hypernode("u", 1, [], labels={SOURCE: "ufm"}),
        hypernode("hand", 1, []),
        hypernode("empty", 1, [], labels={SOURCE: ""}),
    ]
    assert discovered_by_source(objs) == {"label": ["a", "b"], "ufm": ["u"]}


def test_retirements_start_keep_their_clock_cancel_and_drop() -> None:
    r = Retirements()
    found = {"label": ["a", "b"], "ufm": ["u"]}
    changes = r.update({"ufm"}, found, lambda s: 3.0, now=100.0)
    assert [(p.source, p.since, p.due, p.hypernodes) for p in changes.started] == [
        ("label", 100.0, 103.0, ("a", "b"))
    ]
    again = r.update({"ufm"}, found, lambda s: 5.0, now=102.0)  # another edit: same clock
    assert again.started == []
    assert again.cancelled == []
    pending = r.get("label")
    assert pending is not None
    assert (pending.since, pending.due, pending.remaining(104.0)) == (100.0, 105.0, 1.0)
    back = r.update({"ufm", "label"}, found, lambda s: 5.0, now=103.0)
    assert [p.source for p in back.cancelled] == ["label"]
    assert r.pending() == []
    r.update(set(), found, lambda s: 3.0, now=110.0)
    assert [p.source for p in r.pending()] == ["label", "ufm"]
    r.update(set(), {"ufm": ["u"]}, lambda s: 3.0, now=111.0)  # label's all gone: dropped
    assert [p.source for p in r.pending()] == ["ufm"]


def test_retire_source_deletes_parents_first_and_only_that_sources_hypernodes() -> None:
    api = FakeApi()
    api.put(hypernode("rack-a", 1, [exact("n1")], labels={SOURCE: "label"}))
    api.put(hypernode("spine", 2, [exact("rack-a", "HyperNode")], labels={SOURCE: "label"}))
    api.put(hypernode("rack-u", 1, [exact("n2")], labels={SOURCE: "ufm"}))
    api.put(hypernode("by-hand", 1, [exact("n3")]))
    reconciler = Reconciler(api, api.store, clock=FakeClock())  # type: ignore[arg-type]
    reconciler.missing.observe("label", {"rack-a"}, 1.0)
    outcome = reconciler.retire_source("label")
    assert outcome.deleted == ["spine", "rack-a"]
    assert [w[:2] for w in api.writes()] == [("delete", "spine"), ("delete", "rack-a")]
    assert api.names() == ["by-hand", "rack-u"]
    assert reconciler.missing.waiting("label") == {}


# -- the controller ---------------------------------------------------------------------


def test_a_removed_source_is_retired_after_its_grace_period(h: Harness) -> None:
    _discovered(h)
    h.set_config(NONE)
    h.controller.sync_config(KEY)
    assert h.controller.manager.running() == {}
    (started,) = _events(h, "DiscoverySourceRemoved")
    assert "discovery source 'static'" in started
    assert "its 2 HyperNodes (rack-a, spine) will be retired at 2025-01-01T00:00:30Z" in started
    detail = h.controller.readiness_detail()
    assert any("'static' removed from the configuration" in line for line in detail)
    assert len(h.controller.source_queue) == 0  # queued for later, not now
    delay = h.controller.sync_source("static")  # early: nothing happens yet
    assert delay is not None
    assert 30 <= delay <= 31
    assert h.api.names() == ["by-hand", "rack-a", "spine"]
    h.controller._clock.step(29)  # type: ignore[attr-defined]
    assert h.controller.sync_source("static") is not None
    assert h.api.names() == ["by-hand", "rack-a", "spine"]
    h.controller._clock.step(1.5)  # type: ignore[attr-defined]
    assert h.controller.sync_source("static") is None
    assert h.api.names() == ["by-hand"]
    deletes = [w[1] for w in h.api.writes() if w[0] == "delete"]
    assert deletes == ["spine", "rack-a"]  # parents first
    (retired,) = _events(h, "DiscoverySourceRetired")
    assert "retired 2 HyperNodes (spine, rack-a)" in retired
    detail = h.controller.readiness_detail()
    assert not any("removed from the configuration: its" in line for line in detail)
    assert any("retired 2 HyperNodes" in line for line in detail)
    assert h.controller.retirements.pending() == []


def test_configuring_the_source_again_in_time_cancels_the_retirement(h: Harness) -> None:
    _discovered(h)
    uids = {n: h.api.store.get(n)["metadata"]["uid"] for n in ("rack-a", "spine")}
    h.set_config(NONE)
    h.controller.sync_config(KEY)
    h.controller._clock.step(10)  # type: ignore[attr-defined]
    h.set_config(GRACE_30S)  # the typo fixed
    h.controller.sync_config(KEY)
    (cancelled,) = _events(h, "DiscoverySourceRestored")
    assert "retirement of its 2 HyperNodes is cancelled" in cancelled
    h.controller._clock.step(60)  # type: ignore[attr-defined]
    h.drain_sources()
    h.controller.sync_source("static")  # the planned requeue, if it still came
    assert [w for w in h.api.writes() if w[0] == "delete"] == []
    assert {n: h.api.store.get(n)["metadata"]["uid"] for n in ("rack-a", "spine")} == uids
    assert _events(h, "DiscoverySourceRetired") == []
    assert not any("removed from" in line for line in h.controller.readiness_detail())


def test_a_disabled_entry_retires_with_its_own_grace_period(h: Harness) -> None:
    _discovered(h)
    h.set_config(GRACE_30S.replace("enabled: true", "enabled: false").replace("30s", "5s"))
    h.controller.sync_config(KEY)
    pending = h.controller.retirements.get("static")
    assert pending is not None
    assert pending.grace == 5.0
    h.controller._clock.step(5)  # type: ignore[attr-defined]
    assert h.controller.sync_source("static") is None
    assert h.api.names() == ["by-hand"]


def test_a_removed_entry_keeps_the_grace_period_it_ran_with(h: Harness) -> None:
    _discovered(h)
    h.set_config(NONE)
    h.controller.sync_config(KEY)
    pending = h.controller.retirements.get("static")
    assert pending is not None
    assert pending.grace == 30.0


def test_no_configmap_or_an_unreadable_document_or_a_bad_entry_retires_nothing(
    h: Harness,
) -> None:
    _discovered(h)
    h.set_config("networkTopologyDiscovery: [")
    h.controller.sync_config(KEY)
    h.set_config(GRACE_30S.replace("enabled: true", "enabled: true\n    interval: soon"))
    h.controller.sync_config(KEY)  # a bad entry: the source keeps running, nothing retires
    assert list(h.controller.manager.running()) == ["static"]
    assert h.controller.retirements.pending() == []
    h.set_config(None)
    h.controller.sync_config(KEY)
    assert h.controller.retirements.pending() == []
    assert _events(h, "DiscoverySourceRemoved") == []


def test_after_a_restart_a_removed_source_waits_a_full_default_grace_period() -> None:
    h = Harness()  # a fresh controller: HyperNodes of a source the config no longer has
    try:
        h.api.put(hypernode("rack-a", 1, [exact("n1")], labels={SOURCE: "static"}))
        h.set_config(NONE)
        h.controller.sync_config(KEY)
        pending = h.controller.retirements.get("static")
        assert pending is not None
        assert pending.grace == 60.0
        h.controller._clock.step(59)  # type: ignore[attr-defined]
        h.controller.sync_source("static")
        assert h.api.names() == ["rack-a"]
        h.controller._clock.step(1)  # type: ignore[attr-defined]
        h.controller.sync_source("static")
        assert h.api.names() == []
    finally:
        h.controller.manager.stop()


def test_a_removed_sources_hypernode_seen_late_queues_the_configuration(h: Harness) -> None:
    h.set_config(NONE)
    h.controller.sync_config(KEY)  # the cache had none of static's HyperNodes yet
    assert h.controller.retirements.pending() == []
    late = h.api.put(hypernode("rack-a", 1, [exact("n1")], labels={SOURCE: "static"}))
    h.controller.on_hypernode_add(hypernode("by-hand", 1, [exact("n2")]))
    assert len(h.controller.config_queue) == 0  # hand-made: nothing to retire
    h.controller.on_hypernode_add(late)
    assert len(h.controller.config_queue) == 1
    assert h.controller.config_queue.get() == KEY
    h.controller.sync_config(KEY)
    assert [p.source for p in h.controller.retirements.pending()] == ["static"]
    h.controller.config_queue.done(KEY)
    h.controller.on_hypernode_add(late)  # already pending: not queued again
    assert len(h.controller.config_queue) == 0


def test_a_running_sources_hypernode_does_not_queue_the_configuration(h: Harness) -> None:
    h.set_config(GRACE_30S)
    h.controller.sync_config(KEY)
    h.drain_sources()
    h.controller.on_hypernode_add(h.api.store.get("rack-a"))
    assert len(h.controller.config_queue) == 0
