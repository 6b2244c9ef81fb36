"""A round's creates go many at a time, a tier before the next (issue 44)."""

from __future__ import annotations

import threading

import pytest

from tests.unit.controllers.hypernode.hnfakes import FakeApi, exact, hypernode
from volcano_py.controllers.hypernode.discovery import DiscoveryResult
from volcano_py.controllers.hypernode.parallel import PARALLEL_FROM, run_all, segments
from volcano_py.controllers.hypernode.plan import tier_of
from volcano_py.controllers.hypernode.reconcile import Reconciler
from volcano_py.kube.clock import FakeClock

SOURCE = "volcano.sh/network-topology-source"


def test_segments_group_a_tiers_creates_and_keep_updates_alone_in_order() -> None:
    a, b, c = (hypernode(n, 1, []) for n in "abc")
    spine = hypernode("s", 2, [])
    pairs = [(None, a), (None, b), (a, c), (None, c), (None, spine)]
    runs = segments(pairs, tier_of)
    assert [[body["metadata"]["name"] for _, body in run] for run in runs] == [
        ["a", "b"],
        ["c"],
        ["c"],
        ["s"],
    ]


def test_run_all_runs_every_call_and_raises_the_first_error_after_all() -> None:
    done: list[int] = []
    threads: set[str] = set()

    def call(i: int) -> None:
        threads.add(threading.current_thread().name)
        done.append(i)
        if i == 3:
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        run_all([lambda i=i: call(i) for i in range(PARALLEL_FROM * 2)], workers=4)
    assert sorted(done) == list(range(PARALLEL_FROM * 2))
    assert all(name.startswith("hypernode-writes") for name in threads)
    done.clear()
    run_all([lambda i=i: done.append(i) for i in range(3)])
    assert done == [0, 1, 2]  # a short run stays in order, on the caller's thread


def test_reconcile_creates_a_tier_at_once_and_its_parents_after() -> None:
    api = FakeApi()
    reconciler = Reconciler(api, api.store, clock=FakeClock(), sleep=lambda s: None)
    racks = [hypernode(f"r{i:02d}", 1, [exact(f"n{i}")]) for i in range(40)]
    spine = hypernode("spine", 2, [exact(r["metadata"]["name"], "HyperNode") for r in racks])
    outcome = reconciler.reconcile(DiscoveryResult("label", (*racks, spine)), 50)
    assert sorted(outcome.created) == sorted([*(r["metadata"]["name"] for r in racks), "spine"])
    assert outcome.writes == 41
    creates = [w[1] for w in api.writes() if w[0] == "create"]
    assert creates[-1] == "spine"
    assert all(api.store.get(name)["metadata"]["labels"][SOURCE] == "label" for name in creates)
