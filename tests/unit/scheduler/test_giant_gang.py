"""A cycle's cost is bounded, whatever one job asks (issue 44).

A gang with more pods to place than free pod slots (in the cluster, or in one HyperNode of a
hard job's tiers) is not tried: it waits with ``NotEnoughPodSlots`` at no placement work and
is parked until a pod leaves a node. A job whose placement runs past its budget of node trials
(``api/work_budget``) is put behind the rest of the queue, which is placed in the same cycle.
Work is counted in node trials, never in seconds.
"""

from __future__ import annotations

import copy

from tests.unit.scheduler.objects import hypernode, node, pod, podgroup
from volcano_py.scheduler.actions.pod_slots import POD_SLOTS_REASON
from volcano_py.scheduler.api.work_budget import WorkBudget
from volcano_py.scheduler.framework.framework import close_session
from volcano_py.scheduler.framework.session import Session
from volcano_py.scheduler.simulator import Simulator

NODES = 16


def _cluster(giant_tasks: int, slots: int = 110) -> list[dict]:
    """16 nodes of 200 CPUs (the giant's CPU fits), a giant 1-CPU-a-pod gang, a 2-pod gang."""
    return [
        *[node(f"n{i:02d}", {"cpu": "200", "pods": str(slots)}) for i in range(NODES)],
        podgroup("giant", giant_tasks, created="2026-01-01T00:00:00Z"),
        *[pod(f"giant-{i}", "giant", {"cpu": "1"}) for i in range(giant_tasks)],
        podgroup("small", 2, created="2026-01-01T00:01:00Z"),
        *[pod(f"small-{i}", "small", {"cpu": "1"}) for i in range(2)],
    ]


def _allocate(sim: Simulator, budget: int | None = None) -> Session:
    ssn = sim.open_session()
    if budget is not None:
        ssn.work = WorkBudget(budget)
    for name in sim.conf.actions:  # enqueue admits the jobs, then allocate
        sim.actions.get(name).execute(ssn)
    close_session(ssn)
    return ssn


def test_a_gang_past_the_free_pod_slots_costs_no_trial_and_the_small_gang_is_placed() -> None:
    sim = Simulator(_cluster(2000))  # 16 x 110 = 1,760 slots
    ssn = _allocate(sim)
    fit = ssn.job_fit["default/giant"]
    assert fit.reason == POD_SLOTS_REASON
    assert "2000 pods must be placed together" in fit.message
    assert "16 nodes have fewer free pod slots (1760 pods allocatable in all)" in fit.message
    assert "default/giant" not in ssn.work.turns  # never tried
    assert ssn.work.trials <= 2 * NODES  # the small gang's two searches, nothing more
    result = sim.cycle()
    assert sorted(result.binds) == ["default/small-0", "default/small-1"]
    assert result.job_fit["default/giant"].reason == POD_SLOTS_REASON


def test_the_giant_is_parked_and_a_pod_leaving_a_node_brings_it_back() -> None:
    sim = Simulator(_cluster(2000))
    for _ in range(3):  # placed, its status written, parked
        sim.cycle()
    assert sim.cache.is_parked("default/giant")
    sim.cycle()
    assert sim.cache.is_parked("default/giant")  # binds make no room
    bound = sim.cache.pod("default/small-0")
    assert bound is not None
    sim.cache.delete_pod(bound)
    assert "default/giant" in sim.cache.snapshot(active_only=True).jobs


def test_a_gang_that_fits_the_slots_is_still_tried() -> None:
    sim = Simulator(_cluster(1700))  # 1,760 slots: the check lets it through
    ssn = _allocate(sim)
    assert ssn.job_fit.get("default/giant") is None
    assert len(ssn.binds) == 1702


def test_a_hard_job_counts_the_slots_of_one_hypernode_of_its_tiers() -> None:
    objects = [
        *[node(f"n{i}", {"cpu": "64", "pods": "10"}) for i in range(8)],
        hypernode("rack-a", 1, nodes=[f"n{i}" for i in range(4)]),
        hypernode("rack-b", 1, nodes=[f"n{i}" for i in range(4, 8)]),
        podgroup("hard", 50, mode="hard", highest_tier=1),
        *[pod(f"hard-{i}", "hard", {"cpu": "1"}) for i in range(50)],
        podgroup("soft", 50, mode="soft"),
        *[pod(f"soft-{i}", "soft", {"cpu": "1"}) for i in range(50)],
    ]
    ssn = _allocate(Simulator(objects))
    fit = ssn.job_fit["default/hard"]
    assert fit.reason == POD_SLOTS_REASON
    assert "no HyperNode of tier <= 1 has as many free pod slots" in fit.message
    assert "(at most 40 pods allocatable in one)" in fit.message
    assert "default/hard" not in ssn.work.turns
    assert ssn.job_fit.get("default/soft") is None  # 80 slots in the cluster: placed


def _port_gang(name: str, count: int, created: str) -> list[dict]:
    """``count`` pods asking host port 28080: one per node, so a gang of more never fits."""
    spec = {
        "containers": [
            {
                "name": "main",
                "resources": {"requests": {"cpu": "1"}},
                "ports": [{"containerPort": 80, "hostPort": 28080}],
            }
        ]
    }
    return [
        podgroup(name, count, created=created),
        *[pod(f"{name}-{i}", name, spec=spec) for i in range(count)],
    ]


def test_a_job_past_its_budget_goes_behind_the_queue_and_the_rest_is_placed() -> None:
    objects = [
        *[node(f"n{i:02d}") for i in range(NODES)],
        *_port_gang("ports", 20, "2026-01-01T00:00:00Z"),  # placement finds out at pod 17
        podgroup("small", 2, created="2026-01-01T00:01:00Z"),
        *[pod(f"small-{i}", "small", {"cpu": "1"}) for i in range(2)],
    ]
    ssn = _allocate(Simulator(objects), budget=50)
    first, last = ssn.work.turns["default/ports"]
    assert first <= 50 + NODES  # its turn: the budget and at most one more search
    assert last > 50  # tried again, unbounded, after the small gang
    assert sum(ssn.work.turns["default/small"]) <= 2 * NODES  # its two searches
    assert sorted(t.key for t in ssn.binds) == ["default/small-0", "default/small-1"]
    assert "free ports" in ssn.job_fit["default/ports"].message


def test_a_job_past_its_budget_with_nobody_behind_it_is_tried_once() -> None:
    """Its turn protects no other job, so it is not discarded to be tried again at once."""
    objects = [*[node(f"n{i:02d}") for i in range(NODES)], *_port_gang("ports", 20, "x")]
    ssn = _allocate(Simulator(objects), budget=50)
    (only,) = ssn.work.turns["default/ports"]
    assert only > 50 + NODES  # past the budget, in one turn
    assert "free ports" in ssn.job_fit["default/ports"].message


def test_without_a_budget_to_run_past_the_job_is_tried_once() -> None:
    objects = [*[node(f"n{i:02d}") for i in range(NODES)], *_port_gang("ports", 20, "x")]
    ssn = _allocate(Simulator(objects))
    assert len(ssn.work.turns["default/ports"]) == 1


def test_a_budget_below_one_trial_is_refused() -> None:
    import pytest

    with pytest.raises(ValueError, match="placement budget: 0 node trials"):
        WorkBudget(0)


def test_twins_of_a_pod_no_node_took_are_not_searched() -> None:
    """A ready job of 100 replicas on 2 nodes of 10 pod slots: 20 placed, one search fails."""
    objects = [
        node("a", {"cpu": "64", "pods": "10"}),
        node("b", {"cpu": "64", "pods": "10"}),
        podgroup("many", 1),
        *[pod(f"many-{i:03d}", "many", {"cpu": "1"}) for i in range(100)],
    ]
    ssn = _allocate(Simulator(objects))
    assert len(ssn.binds) == 20
    assert ssn.work.trials <= 20 * 2 + 2  # 20 placements, one failed search of both nodes
    assert "Too many pods" in ssn.job_fit["default/many"].message


def test_pods_with_topology_spread_are_each_searched() -> None:
    """Spread constraints make another pod's placement matter: no shape is shared."""
    spread = [
        {
            "maxSkew": 1,
            "topologyKey": "kubernetes.io/hostname",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "s"}},
        }
    ]
    objects = [
        node("a", {"cpu": "64", "pods": "3"}, labels={"kubernetes.io/hostname": "a"}),
        podgroup("s", 1),
        *[
            pod(f"s-{i}", "s", {"cpu": "1"}, labels={"app": "s"}, topology_spread=spread)
            for i in range(5)
        ],
    ]
    ssn = _allocate(Simulator(objects))
    assert len(ssn.binds) == 3
    assert ssn.work.trials == 5  # each of the 5 pods searched the one node


def test_the_message_stays_the_same_when_other_pods_take_slots() -> None:
    """Each pending pod's condition repeats it: a bind elsewhere must not rewrite 2,000 pods."""
    sim = Simulator(_cluster(2000))
    before = _allocate(sim).job_fit["default/giant"].message
    sim.cycle()  # the small gang binds: 2 slots fewer
    assert _allocate(sim).job_fit["default/giant"].message == before


def _told(p: dict, message: str) -> dict:
    """``p`` as the watch shows it after our PodScheduled=False write."""
    told = copy.deepcopy(p)
    told["metadata"]["resourceVersion"] = "99"
    told.setdefault("status", {})["conditions"] = [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message}
    ]
    return told


def test_our_own_pod_condition_write_does_not_bring_the_parked_giant_back() -> None:
    sim = Simulator(_cluster(2000))
    for _ in range(3):
        sim.cycle()
    assert sim.cache.is_parked("default/giant")
    for i in range(5):
        p = sim.cache.pod(f"default/giant-{i}")
        assert p is not None
        sim.cache.update_pod(_told(p, "why"))
    assert sim.cache.is_parked("default/giant")
    assert sim.cache.pod("default/giant-0")["status"]["conditions"][0]["message"] == "why"
    relabelled = copy.deepcopy(sim.cache.pod("default/giant-0"))
    relabelled["metadata"]["labels"] = {"new": "label"}
    sim.cache.update_pod(relabelled)  # a change of its own: it comes back
    assert not sim.cache.is_parked("default/giant")
