"""Bad input around Kubernetes' own gang objects: the pods wait with the reason, never a crash.

Issue 45's list: a pod naming a PodGroup that does not exist (or a child PodGroup whose parent
CompositePodGroup does not), a ``minCount`` above the pods that exist, a PodGroup naming a
Workload or template that does not exist, and a topology key no node has (the scenario
``native_podgroup_too_big_waits``). A group is never partly bound.
"""

from __future__ import annotations

from tests.unit.scheduler.objects import hypernode, node
from tests.unit.scheduler.test_native_composites import _child
from tests.unit.scheduler.test_native_groups import _member, _native
from volcano_py.scheduler.simulator import Simulator

RACK = "example.com/rack"


def _cluster() -> list[dict[str, object]]:
    return [
        *(node(f"n{i}", {"nvidia.com/gpu": 4}) for i in range(2)),
        hypernode("tor", 1, nodes=["n0", "n1"], tier_name=RACK),
    ]


def _said(sim: Simulator, pod: str) -> list[str]:
    return [message for key, _, message in sim.writer.events if key == pod]


def test_a_pod_naming_a_missing_podgroup_waits_saying_so_and_places_once_it_comes() -> None:
    sim = Simulator([*_cluster(), _member("w-0", "ghost", 1), _member("w-1", "ghost", 1)])
    result = sim.run()
    assert result.bindings == {}
    said = _said(sim, "default/w-0")
    assert said, sim.writer.events
    assert "PodGroup default/ghost (spec.schedulingGroup.podGroupName) does not exist" in said[0]
    pod = sim.cache.pod("default/w-0")
    assert pod is not None
    conditions = pod["status"]["conditions"]
    assert [(c["type"], c["status"]) for c in conditions] == [("PodScheduled", "False")]
    sim.cache.update_podgroup(_native("ghost", {"gang": {"minCount": 2}}, RACK))
    assert len(sim.run().bindings) == 2


def test_a_child_podgroup_whose_parent_is_missing_waits_naming_the_parent() -> None:
    sim = Simulator([*_cluster(), _child("a", "nobody", 1), _member("a-0", "a", 1)])
    assert sim.run().bindings == {}
    said = _said(sim, "default/a-0")
    assert said, sim.writer.events
    assert "CompositePodGroup default/nobody, the parent of PodGroup default/a" in said[0]


def test_a_min_count_above_the_pods_that_exist_waits_whole() -> None:
    objects = [
        *_cluster(),
        _native("g", {"gang": {"minCount": 3}}, RACK),
        *(_member(f"g-{i}", "g", 1) for i in range(2)),
    ]
    sim = Simulator(objects)
    result = sim.run()
    assert result.bindings == {}  # never partly bound
    messages = [c["message"] for c in result.podgroups["default/g"]["conditions"]]
    assert any("valid: 2, min: 3" in m for m in messages), messages


def test_a_podgroup_naming_a_missing_workload_is_scheduled_from_its_own_spec() -> None:
    # kube-scheduler reads no Workload either: the PodGroup carries what scheduling needs
    group = _native("g", {"gang": {"minCount": 2}}, RACK)
    group["spec"]["workloadRef"] = {"workloadName": "gone", "templateName": "nowhere"}
    sim = Simulator([*_cluster(), group, *(_member(f"g-{i}", "g", 1) for i in range(2))])
    result = sim.run()
    assert len(result.bindings) == 2
    assert result.podgroups["default/g"]["workload"] == "Workload gone"
