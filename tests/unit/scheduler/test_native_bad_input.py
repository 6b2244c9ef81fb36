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


def _workload(name: str, *templates: str) -> dict[str, object]:
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "Workload",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"podGroupTemplates": [{"name": t} for t in templates]},
    }


def _naming(workload: str, template: str) -> list[dict[str, object]]:
    group = _native("g", {"gang": {"minCount": 2}}, RACK)
    group["spec"]["workloadRef"] = {"workloadName": workload, "templateName": template}
    return [group, *(_member(f"g-{i}", "g", 1) for i in range(2))]


def _condition(sim: Simulator) -> dict[str, object]:
    native = sim.cache.native_podgroup("default/g")
    assert native is not None
    (condition,) = native["status"]["conditions"]
    return dict(condition)


def test_a_podgroup_naming_a_missing_workload_waits_and_places_once_it_comes() -> None:
    sim = Simulator([*_cluster(), _workload("other", "t"), *_naming("train", "worker")])
    result = sim.run()
    assert result.bindings == {}  # not one pod of the gang
    said = "Workload default/train (spec.workloadRef.workloadName) does not exist"
    condition = _condition(sim)
    assert (condition["status"], condition["reason"]) == ("False", "Unschedulable")
    assert condition["message"] == said
    assert any(said in m for m in _said(sim, "default/g-0")), sim.writer.events
    # the Workload comes without the template: still waiting, now naming the template
    sim.cache.update_workload(_workload("train", "launcher"))
    assert sim.run().bindings == {}
    assert "has no template 'worker' (spec.workloadRef.templateName; its templates: launcher)" in (
        str(_condition(sim)["message"])
    )
    # fixed: the parked gang comes back at the next cycle and binds whole
    sim.cache.update_workload(_workload("train", "launcher", "worker"))
    assert len(sim.run().bindings) == 2
    assert _condition(sim)["reason"] == "Scheduled"


def test_a_podgroup_waits_again_when_its_workload_is_deleted() -> None:
    sim = Simulator([*_cluster(), _workload("train", "worker"), *_naming("train", "worker")])
    assert len(sim.run().bindings) == 2
    sim.cache.delete_workload(_workload("train", "worker"))
    job = sim.cache.podgroup("default/g")
    assert job is not None
    assert "does not exist" in job["metadata"]["annotations"]["volcano-py.io/native-waiting"]


def test_a_podgroup_without_workload_ref_does_not_wait_for_workloads() -> None:
    group = _native("g", {"gang": {"minCount": 2}}, RACK)
    members = [_member(f"g-{i}", "g", 1) for i in range(2)]
    sim = Simulator([*_cluster(), _workload("other", "t"), group, *members])
    assert len(sim.run().bindings) == 2


def test_a_podgroup_naming_a_workload_is_scheduled_from_its_spec_when_workloads_are_unread() -> (
    None
):
    # the API server serves no Workloads (or a snapshot holds none): nothing to wait for
    sim = Simulator([*_cluster(), *_naming("gone", "nowhere")])
    result = sim.run()
    assert len(result.bindings) == 2
    assert result.podgroups["default/g"]["workload"] == "Workload gone"
