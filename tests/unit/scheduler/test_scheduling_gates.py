"""Pods with ``spec.schedulingGates`` (``actions/scheduling_gates.py``).

kube-scheduler's SchedulingGates cases (a pod with gates waits, one without is queued) and
Volcano's gated-gang behaviour: the gated pods are never placed, the gang waits with a
condition naming them, and removing the gates lets it place at the next cycle.
"""

from __future__ import annotations

import copy

import pytest

from tests.unit.scheduler.objects import node, pod, podgroup
from volcano_py.scheduler.simulator import Simulator

GATE = {"schedulingGates": [{"name": "example.com/hold"}]}


@pytest.mark.parametrize(
    ("spec", "bound"),
    [
        pytest.param({}, True, id="pod-without-gates-is-placed"),
        pytest.param({"schedulingGates": []}, True, id="empty-gates-is-placed"),
        pytest.param(GATE, False, id="pod-with-a-gate-waits"),
        pytest.param(
            {"schedulingGates": [{"name": "a"}, {"name": "b"}]}, False, id="two-gates-wait"
        ),
    ],
)
def test_a_pod_is_placed_only_without_scheduling_gates(
    spec: dict[str, object], bound: bool
) -> None:
    sim = Simulator([node("n1"), podgroup("pg", 1), pod("p", "pg", {"cpu": 1}, spec=spec)])
    result = sim.run()
    assert ("default/p" in result.bindings) is bound


def _gated_gang(gated: int, size: int = 4, min_member: int = 4) -> Simulator:
    objects = [node("n1"), node("n2"), podgroup("pg", min_member)]
    objects += [
        pod(f"p-{i}", "pg", {"cpu": 1}, spec=GATE if i < gated else None) for i in range(size)
    ]
    return Simulator(objects)


def test_removing_the_gates_lets_the_gang_place_at_the_next_cycle() -> None:
    sim = _gated_gang(gated=2)
    first = sim.cycle()
    assert first.binds == {}
    fit = first.job_fit["default/pg"]
    assert fit.reason == "SchedulingGated"
    assert fit.message.endswith(
        "2 pod(s) gated (default/p-0, default/p-1), waiting for scheduling gates: "
        "[example.com/hold]"
    )
    for _ in range(2):  # parked once its status is written (``parking.py``)
        assert sim.cycle().binds == {}
    assert sim.cache.is_parked("default/pg")
    for i in range(2):
        ungated = copy.deepcopy(sim.cache.pod(f"default/p-{i}"))
        assert ungated is not None
        ungated["spec"]["schedulingGates"] = []
        sim.cache.update_pod(ungated)
    assert not sim.cache.is_parked("default/pg")  # a pod update brings its job back
    second = sim.cycle()
    assert sorted(second.binds) == [f"default/p-{i}" for i in range(4)]


def test_a_gang_met_without_its_gated_pods_places_the_others() -> None:
    sim = _gated_gang(gated=1, size=4, min_member=3)
    result = sim.run()
    assert sorted(result.bindings) == ["default/p-1", "default/p-2", "default/p-3"]
    conditions = result.podgroups["default/pg"]["conditions"]
    assert not any(c["type"] == "Unschedulable" and c["status"] == "True" for c in conditions)


def test_gated_pods_get_no_unschedulable_condition_or_event() -> None:
    sim = _gated_gang(gated=4)
    result = sim.run()
    assert result.events == []  # the API server's SchedulingGated condition is left alone


def test_room_freed_elsewhere_does_not_bring_back_a_gated_gang() -> None:
    # the gated gang waits for its own pods (wake hints: no cluster event), a freed pod
    # elsewhere leaves it parked
    holder = pod("holder", node_name="n1", phase="Running", scheduler="default-scheduler")
    objects = [node("n1"), node("n2"), holder, podgroup("pg", 2)]
    objects += [pod(f"p-{i}", "pg", {"cpu": 1}, spec=GATE) for i in range(2)]
    sim = Simulator(objects)
    for _ in range(3):
        sim.cycle()
    assert sim.cache.is_parked("default/pg")
    sim.cache.delete_pod(holder)
    assert "default/pg" not in sim.cache.snapshot(active_only=True).jobs
