"""Kubernetes' ``CompositePodGroup`` (``scheduling.k8s.io/v1alpha3``) as one partitioned gang.

The view (``api/native_composite.py``: children as SubJobs, ``minGroupCount`` as the
policy's ``minSubGroups``, the parent's key as the job's topology), the cache's filing of a
child PodGroup's pods under their parent in whatever order the objects arrive, and the
conditions written on the CompositePodGroup. Placement itself is in the
``native_composite_*`` scenarios.
"""

from __future__ import annotations

from typing import Any

from tests.unit.scheduler.objects import hypernode, node
from tests.unit.scheduler.test_native_groups import _member
from volcano_py.api.native_composite import composite_view
from volcano_py.api.native_groups import INITIALLY_SCHEDULED
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.simulator import Simulator

RACK = "example.com/rack"
SPINE = "example.com/spine"


def _composite(name: str, policy: dict[str, Any], parent: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {
        "workloadRef": {"workloadName": name, "templateName": name},
        "schedulingPolicy": policy,
        "schedulingConstraints": {"topology": [{"key": SPINE}]},
    }
    if parent:
        spec["parentCompositePodGroupName"] = parent
    return {
        "apiVersion": "scheduling.k8s.io/v1alpha3",
        "kind": "CompositePodGroup",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": spec,
    }


def _child(name: str, parent: str, min_count: Any, key: str = RACK) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "parentCompositePodGroupName": parent,
        "workloadRef": {"workloadName": parent, "templateName": name},
        "schedulingPolicy": {"gang": {"minCount": min_count}},
    }
    if key:
        spec["schedulingConstraints"] = {"topology": [{"key": key}]}
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": spec,
    }


def _cluster() -> list[dict[str, Any]]:
    """Two racks of two 4-GPU nodes under one spine."""
    return [
        *(node(f"n{i}", {"nvidia.com/gpu": 4}) for i in range(4)),
        hypernode("tor-a", 1, nodes=["n0", "n1"], tier_name=RACK),
        hypernode("tor-b", 1, nodes=["n2", "n3"], tier_name=RACK),
        hypernode("spine", 2, children=["tor-a", "tor-b"], tier_name=SPINE),
    ]


def _two_children() -> list[dict[str, Any]]:
    return [
        _composite("train", {"gang": {"minGroupCount": 2}}),
        _child("a", "train", 2),
        _child("b", "train", 2),
        *(_member(f"{g}-{i}", g, 4) for g in "ab" for i in range(2)),
    ]


def test_a_composite_becomes_one_job_whose_subjobs_are_its_children() -> None:
    view = composite_view(
        _composite("train", {"gang": {"minGroupCount": 1}}),
        [_child("b", "train", 3), _child("a", "train", 2, key="")],
        None,
    )
    job = JobInfo(view)
    assert not job.invalid
    assert job.highest_tier_name == SPINE
    assert [(p.name, p.min_sub_groups) for p in job.policies] == [("podGroup", 1)]
    # the smallest child whole: the gang's floor when one of two must place
    assert job.min_member == 2
    assert job.children["a"] == (2, None)
    size, topology = job.children["b"]
    assert size == 3
    assert topology is not None
    assert topology.highest_tier_name == RACK


def test_a_composite_with_a_bad_min_group_count_is_invalid_naming_the_field() -> None:
    view = composite_view(_composite("train", {"gang": {"minGroupCount": 0}}), [], None)
    assert "spec.schedulingPolicy.gang.minGroupCount" in JobInfo(view).invalid


def test_a_nested_composite_is_invalid_with_its_reason() -> None:
    view = composite_view(_composite("inner", {"basic": {}}, parent="outer"), [], None)
    assert "nested CompositePodGroups" in JobInfo(view).invalid


def test_a_child_with_a_bad_min_count_makes_the_composite_invalid_naming_it() -> None:
    view = composite_view(
        _composite("train", {"gang": {"minGroupCount": 1}}), [_child("a", "train", -1)], None
    )
    assert "PodGroup a spec.schedulingPolicy.gang.minCount" in JobInfo(view).invalid


def test_children_place_in_their_own_rack_under_the_spine_whatever_the_arrival_order() -> None:
    sim = Simulator([])
    # pods first, then the children, then their parent: each arrives before what it names
    for obj in reversed(_two_children()):
        feed = sim.cache.update_pod if obj["kind"] == "Pod" else sim.cache.update_podgroup
        feed(obj)
    for obj in _cluster():
        (sim.cache.update_node if obj["kind"] == "Node" else sim.cache.update_hypernode)(obj)
    result = sim.run()
    assert len(result.bindings) == 4
    sub_jobs = result.podgroups["default/train"]["subJobs"]
    racks = {sub_jobs[f"podGroup/{g}"]["allocatedHyperNode"] for g in "ab"}
    assert racks == {"tor-a", "tor-b"}
    assert set(result.podgroups) == {"default/train"}  # no job of a child's own


def test_the_scheduled_condition_is_written_on_the_composite_and_its_children() -> None:
    sim = Simulator([*_cluster(), *_two_children()])
    sim.run()
    native = sim.cache.native_podgroup("default/train")
    assert native is not None
    assert native["kind"] == "CompositePodGroup"
    children = sim.cache.native_children("default/train")
    assert [c["metadata"]["name"] for c in children] == ["a", "b"]
    for obj in [native, *children]:
        found = [c for c in obj["status"]["conditions"] if c["type"] == INITIALLY_SCHEDULED]
        assert [(c["status"], c["reason"]) for c in found] == [("True", "Scheduled")], obj


def test_a_composite_missing_a_child_waits_and_its_pods_place_once_it_comes() -> None:
    objects = [o for o in [*_cluster(), *_two_children()] if o["metadata"]["name"] != "b"]
    sim = Simulator(objects)
    result = sim.run()
    assert result.bindings == {}  # minGroupCount 2, one child: never one child alone
    assert result.podgroups["default/train"]["phase"] != "Running"
    sim.cache.update_podgroup(_child("b", "train", 2))
    assert len(sim.run().bindings) == 4


def test_a_deleted_child_takes_its_pods_out_of_the_composite() -> None:
    sim = Simulator([*_cluster(), *_two_children()])
    sim.cache.delete_native_podgroup(_child("b", "train", 2))
    job = sim.cache.snapshot().jobs["default/train"]
    assert sorted(t.name for t in job.tasks.values()) == ["a-0", "a-1"]
    sim.cache.delete_composite(_composite("train", {"gang": {"minGroupCount": 2}}))
    assert "default/train" not in sim.cache.snapshot().jobs
    assert sim.run().bindings == {}  # a's pods wait for their parent


def test_each_child_is_scheduled_by_its_own_pods() -> None:
    """One rack, ``minGroupCount: 1``: the child that fits is Scheduled, the other is not."""
    objects = [
        *(node(f"n{i}", {"nvidia.com/gpu": 4}) for i in range(2)),
        hypernode("tor-a", 1, nodes=["n0", "n1"], tier_name=RACK),
        hypernode("spine", 2, children=["tor-a"], tier_name=SPINE),
        _composite("train", {"gang": {"minGroupCount": 1}}),
        _child("a", "train", 2),
        _child("b", "train", 2),
        *(_member(f"{g}-{i}", g, 4) for g in "ab" for i in range(2)),
    ]
    sim = Simulator(objects)
    assert len(sim.run().bindings) == 2
    states = {}
    for child in sim.cache.native_children("default/train"):
        found = [c for c in child["status"]["conditions"] if c["type"] == INITIALLY_SCHEDULED]
        states[child["metadata"]["name"]] = [(c["status"], c["reason"]) for c in found]
    assert states == {"a": [("True", "Scheduled")], "b": [("False", "Unschedulable")]}
