"""Wake-up hints: a parked job comes back on the events its reason declared (``wake_hints.py``).

The cache only reports events; the check that refused a job declares which events can change
its answer. A gang short of its own pods, or waiting for its queue, is not brought back by
room freed elsewhere (it could not use it), while a gang that did not fit is; a plugin
declares the events for its own reason in ``on_session_open``, and a reason nobody declared
wakes on every event.
"""

from __future__ import annotations

import pytest

from tests.unit.scheduler.helpers import gpu_cluster
from tests.unit.scheduler.objects import node, pod, podgroup
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.wake_hints import ALL_EVENTS, ClusterEvent, WakeHints
from volcano_py.scheduler.framework.arguments import Arguments
from volcano_py.scheduler.framework.conf import DEFAULT_SCHEDULER_CONF
from volcano_py.scheduler.framework.interface import ValidateResult
from volcano_py.scheduler.framework.registry import load_conf
from volcano_py.scheduler.framework.session import Session
from volcano_py.scheduler.scheduler import builtin_registries
from volcano_py.scheduler.simulator import Simulator

GPU = "nvidia.com/gpu"


def _looked_at(sim: Simulator) -> set[str]:
    return set(sim.cache.snapshot(active_only=True).jobs)


def _with_bound_pod(*objects: dict) -> tuple[Simulator, dict]:
    """A cluster with ``objects`` cycled until parked, and one small pod bound in it."""
    sim = Simulator([*gpu_cluster(), *objects, podgroup("small", 1)])
    sim.cache.update_pod(pod("small-0", "small", {GPU: 4}))
    for _ in range(3):
        sim.cycle()
    bound = sim.cache.pod("default/small-0")
    assert bound is not None
    assert bound["spec"].get("nodeName")
    return sim, bound


def test_room_freed_brings_back_a_gang_that_did_not_fit_but_not_one_short_of_pods() -> None:
    sim, bound = _with_bound_pod(
        podgroup("big", 3, min_resources={GPU: 36}),
        *[pod(f"big-{i}", "big", {GPU: 12}) for i in range(3)],
        podgroup("short", 3),
        *[pod(f"short-{i}", "short", {GPU: 1}) for i in range(2)],
    )
    assert sim.cache.is_parked("default/big")
    assert sim.cache.is_parked("default/short")  # gang: NotEnoughPods, waits for its pods
    sim.cache.delete_pod(bound)
    looked_at = _looked_at(sim)
    assert "default/big" in looked_at
    assert "default/short" not in looked_at
    sim.cache.update_pod(pod("short-2", "short", {GPU: 1}))  # its own pod: back at once
    assert "default/short" in _looked_at(sim)


def test_a_job_waiting_for_its_queue_comes_back_when_the_queue_does_not_for_room() -> None:
    sim, bound = _with_bound_pod(
        podgroup("lost", 1, queue="missing"), pod("lost-0", "lost", {GPU: 1})
    )
    assert sim.cache.is_parked("default/lost")
    sim.cache.delete_pod(bound)
    sim.cache.update_node(node("node-9", {GPU: 8}))
    assert "default/lost" not in _looked_at(sim)
    sim.cache.update_queue(
        {"metadata": {"name": "missing"}, "spec": {"weight": 1}, "status": {"state": "Open"}}
    )
    assert "default/lost" in _looked_at(sim)


class _WaitsForNodePlugin:
    """Refuses ``default/job`` until a node ``node-9`` exists; wakes on nodes added only."""

    name = "waits-for-node"

    def __init__(self, args: Arguments) -> None:
        self.args = args

    def on_session_open(self, ssn: Session) -> None:
        def job_valid(job: JobInfo) -> ValidateResult | None:
            if job.key != "default/job" or "node-9" in ssn.nodes:
                return None
            return ValidateResult(False, "WaitsForNode", "node-9 is not there yet")

        ssn.add_job_valid_fn(self.name, job_valid)
        ssn.wake_hints.declare("WaitsForNode", {ClusterEvent.NODE_ADDED})

    def on_session_close(self, ssn: Session) -> None:
        """Nothing to release."""


def test_a_plugin_declares_the_events_its_own_reason_waits_for() -> None:
    plugins, actions = builtin_registries()
    plugins.register(_WaitsForNodePlugin.name, _WaitsForNodePlugin)
    conf_text = DEFAULT_SCHEDULER_CONF + "  - name: waits-for-node\n"
    conf = load_conf(conf_text, plugins, actions)
    objects = [*gpu_cluster(), podgroup("job", 1), pod("job-0", "job", {GPU: 1})]
    objects += [podgroup("small", 1), pod("small-0", "small", {GPU: 1})]
    sim = Simulator(objects, conf)
    sim.plugins = plugins
    for _ in range(3):
        sim.cycle()
    assert sim.cache.is_parked("default/job")
    assert sim.cycle().job_fit == {}  # parked: not looked at
    small = sim.cache.pod("default/small-0")
    assert small is not None
    assert small["spec"].get("nodeName")
    sim.cache.delete_pod(small)  # room freed: not what it waits for
    assert "default/job" not in _looked_at(sim)
    sim.cache.update_node(node("node-9", {GPU: 8}))
    assert "default/job" in _looked_at(sim)
    assert sorted(sim.cycle().binds) == ["default/job-0"]


def test_a_reason_nobody_declared_wakes_on_every_event() -> None:
    hints = WakeHints()
    assert hints.events_for("NotEnoughResources") == ALL_EVENTS


def test_declarations_of_one_reason_add_up() -> None:
    hints = WakeHints()
    hints.declare("R", {ClusterEvent.NODE_ADDED})
    hints.declare("R", [ClusterEvent.POD_FREED])
    assert hints.events_for("R") == {ClusterEvent.NODE_ADDED, ClusterEvent.POD_FREED}
    assert hints.declared() == {"R": frozenset({ClusterEvent.NODE_ADDED, ClusterEvent.POD_FREED})}


def test_a_hint_that_is_not_a_cluster_event_is_refused_naming_the_reason() -> None:
    with pytest.raises(TypeError, match=r"'R'.*'NodeAdded' is not a ClusterEvent"):
        WakeHints().declare("R", ["NodeAdded"])  # type: ignore[list-item]
