"""Jobs that cannot be placed wait out of cycles until room may be free (``parking.py``).

A gang too big for the cluster is parked once its status is written; a new gang that fits is
placed in a cycle that does not look at it; binds and new jobs make no room, so it stays
parked; a pod leaving a node, a Node added or resized, a HyperNode's spec changing, a
configuration reload or the time limit bring it back, and then it is placed when it fits.
Node heartbeats and HyperNode status updates do not.
"""

from __future__ import annotations

import copy

from tests.unit.scheduler.helpers import gpu_cluster
from tests.unit.scheduler.objects import node, pod, podgroup
from volcano_py.kube.clock import FakeClock
from volcano_py.scheduler.cache import parking
from volcano_py.scheduler.simulator import Simulator

GPU = "nvidia.com/gpu"


def _parked_sim(clock: FakeClock | None = None) -> Simulator:
    """The design doc's 8 nodes x 4 GPUs, and a gang of 3 pods x 12 GPUs that cannot fit."""
    objects = [
        *gpu_cluster(),
        podgroup("big", 3, min_resources={GPU: 36}),
        *[pod(f"big-{i}", "big", {GPU: 12}) for i in range(3)],
    ]
    sim = Simulator(objects, clock=clock)
    for _ in range(3):
        sim.cycle()
    assert sim.cache.is_parked("default/big")
    return sim


def _looked_at(sim: Simulator) -> set[str]:
    return set(sim.cache.snapshot(active_only=True).jobs)


def test_a_parked_gang_is_left_out_while_a_new_gang_is_placed_and_bound() -> None:
    sim = _parked_sim()
    sim.cache.update_podgroup(podgroup("small", 2))
    for i in range(2):
        sim.cache.update_pod(pod(f"small-{i}", "small", {GPU: 4}))
    assert _looked_at(sim) == {"default/small"}
    result = sim.cycle()
    assert sorted(result.binds) == ["default/small-0", "default/small-1"]
    assert "default/big" not in result.job_fit  # not looked at
    assert sim.cache.is_parked("default/big")  # binds made no room


def test_the_unschedulable_gauge_counts_parked_jobs() -> None:
    from volcano_py.metrics import UNSCHEDULE_JOB_COUNT

    sim = _parked_sim()
    sim.cycle()
    assert UNSCHEDULE_JOB_COUNT._value.get() == 1


def _bound_pod(sim: Simulator) -> dict:
    sim.cache.update_podgroup(podgroup("small", 1))
    sim.cache.update_pod(pod("small-0", "small", {GPU: 4}))
    sim.cycle()
    bound = sim.cache.pod("default/small-0")
    assert bound is not None
    assert bound["spec"].get("nodeName")
    assert sim.cache.is_parked("default/big")
    return bound


def test_a_pod_leaving_its_node_brings_the_parked_gang_back() -> None:
    sim = _parked_sim()
    sim.cache.delete_pod(_bound_pod(sim))
    assert "default/big" in _looked_at(sim)


def test_a_pod_finishing_brings_the_parked_gang_back_and_running_does_not() -> None:
    sim = _parked_sim()
    bound = _bound_pod(sim)
    running = copy.deepcopy(bound)
    running["status"] = {"phase": "Running"}
    sim.cache.update_pod(running)
    assert "default/big" not in _looked_at(sim)
    done = copy.deepcopy(running)
    done["status"] = {"phase": "Succeeded"}
    sim.cache.update_pod(done)
    assert "default/big" in _looked_at(sim)


def test_a_bigger_node_brings_the_gang_back_and_it_is_placed() -> None:
    sim = _parked_sim()
    sim.cache.update_node(node("node-9", {GPU: 48}))
    assert "default/big" in _looked_at(sim)
    result = sim.cycle()
    assert sorted(result.binds) == ["default/big-0", "default/big-1", "default/big-2"]


def test_heartbeats_and_hypernode_status_make_no_room() -> None:
    sim = _parked_sim()
    beat = node("node-1", {GPU: 4})
    beat["status"]["conditions"][0]["lastHeartbeatTime"] = "2026-11-26T10:00:00Z"
    sim.cache.update_node(beat)
    hn = next(o for o in gpu_cluster() if o["kind"] == "HyperNode")
    sim.cache.update_hypernode(dict(hn, status={"nodeCount": 2}))
    assert "default/big" not in _looked_at(sim)
    sim.cache.update_hypernode(dict(hn, spec=dict(hn["spec"], members=[])))
    assert "default/big" in _looked_at(sim)


def test_a_configuration_reload_and_the_time_limit_bring_it_back() -> None:
    clock = FakeClock()
    sim = _parked_sim(clock)
    sim.cache.unpark_all()
    assert "default/big" in _looked_at(sim)
    sim.cycle()
    assert sim.cache.is_parked("default/big")
    clock.step(parking.PARK_MAX_S + 1)  # the scheduler's clock: no sleep, no patching
    assert "default/big" in _looked_at(sim)


def test_the_gang_changing_itself_brings_it_back() -> None:
    sim = _parked_sim()
    sim.cache.update_pod(pod("big-3", "big", {GPU: 12}))
    assert "default/big" in _looked_at(sim)
    assert not sim.cache.is_parked("default/big")


def test_room_freed_while_the_cycle_runs_brings_the_job_it_parks_back() -> None:
    """The cycle that parks a job decided on its snapshot: a pod leaving its node after that
    snapshot (before the job is parked) was not seen, so the next cycle looks again."""
    sim = _parked_sim()
    bound = _bound_pod(sim)
    big = {"default/big": sim.cache.snapshot().job_versions["default/big"]}
    sim.cache.snapshot(active_only=True)  # a cycle begins
    sim.cache.delete_pod(bound)  # room freed while it runs
    sim.cache.park(big)  # it ends and parks what it could not place
    assert "default/big" in _looked_at(sim)


def test_a_view_snapshot_does_not_move_the_parking_epoch() -> None:
    sim = _parked_sim()
    bound = _bound_pod(sim)
    big = {"default/big": sim.cache.snapshot().job_versions["default/big"]}
    sim.cache.snapshot(active_only=True)  # a cycle begins
    sim.cache.delete_pod(bound)  # room freed while it runs
    sim.cache.snapshot()  # the topology view reads meanwhile
    sim.cache.park(big)
    assert "default/big" in _looked_at(sim)
