"""The scheduler cache's indexes over Kubernetes' own gang objects answer as scans would.

A Workload's change reaches the native PodGroups naming it, and a CompositePodGroup's view
and status writes read its own children, through indexes, not a scan of every group.
``NativeGroups`` keeps, per Workload, the top-level native PodGroups naming it. The property:
after any sequence of puts (new, replaced, re-pointed at another Workload, a child or a
Volcano PodGroup under the same key) and pops, ``naming(w)`` is exactly what a scan of every
held group finds. And through the cache: a Workload arriving releases the groups naming it,
in its namespace, and no other.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tests.unit.scheduler.test_native_bad_input import _cluster, _workload
from tests.unit.scheduler.test_native_groups import RACK, _member, _native
from volcano_py.api.native_composite import parent_name
from volcano_py.api.native_groups import is_native
from volcano_py.scheduler.cache.composites import CompositeGroups
from volcano_py.scheduler.cache.natives import NativeGroups, named_workload
from volcano_py.scheduler.simulator import Simulator

WAITING = "volcano-py.io/native-waiting"


def _group(namespace: str, workload: str, shape: str) -> dict[str, Any]:
    """A PodGroup in ``namespace`` naming ``workload``: native, a native child, or Volcano's."""
    spec: dict[str, Any] = {"workloadRef": {"workloadName": workload, "templateName": "t"}}
    if shape == "child":
        spec["parentCompositePodGroupName"] = "parent"
    group = "scheduling.k8s.io" if shape != "volcano" else "scheduling.volcano.sh"
    return {
        "apiVersion": f"{group}/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "g", "namespace": namespace},
        "spec": spec,
    }


step = st.one_of(
    st.tuples(
        st.just("put"),
        st.integers(0, 5),
        st.sampled_from(["a", "b"]),
        st.sampled_from(["w1", "w2", ""]),
        st.sampled_from(["native", "native", "child", "volcano"]),
    ),
    st.tuples(st.just("pop"), st.integers(0, 5)),
)


@given(st.lists(step, max_size=50))
def test_naming_is_what_a_scan_of_every_group_finds(steps: list[tuple[Any, ...]]) -> None:
    groups = NativeGroups()
    held: dict[str, dict[str, Any]] = {}
    for op, index, *rest in steps:
        key = f"k{index}"
        if op == "put":
            pg = _group(*rest)
            groups.put(key, pg)
            held[key] = pg
        else:
            assert groups.pop(key) is held.pop(key, None)
        assert (key in groups) == (key in held)
    for workload in ("a/w1", "a/w2", "b/w1", "b/w2", "a/", "a/zzz"):
        scanned = sorted(k for k, pg in held.items() if named_workload(pg) == workload)
        assert sorted(k for k, _ in groups.naming(workload)) == scanned
    every = sorted(k for k, pg in held.items() if is_native(pg) and not parent_name(pg))
    assert sorted(k for k, _ in groups.naming(None)) == every


def test_naming_is_a_snapshot_the_caller_may_change_while_it_iterates() -> None:
    groups = NativeGroups()
    for i in range(3):
        groups.put(f"k{i}", _group("a", "w1", "native"))
    seen = []
    for key, _ in groups.naming("a/w1"):
        seen.append(key)
        groups.put(key, _group("a", "w2", "native"))  # re-pointed while iterating
    assert seen == ["k0", "k1", "k2"]
    assert list(groups.naming("a/w1")) == []
    assert [k for k, _ in groups.naming("a/w2")] == ["k0", "k1", "k2"]


def _naming(name: str, workload: str, namespace: str = "default") -> list[dict[str, Any]]:
    group = _native(name, {"gang": {"minCount": 1}}, RACK)
    group["metadata"]["namespace"] = namespace
    group["spec"]["workloadRef"] = {"workloadName": workload, "templateName": "t"}
    member = _member(f"{name}-0", name, 1)
    member["metadata"]["namespace"] = namespace
    return [group, member]


def _waiting(sim: Simulator, key: str) -> bool:
    job = sim.cache.podgroup(key)
    assert job is not None, key
    return WAITING in (job["metadata"].get("annotations") or {})


def test_a_workload_releases_the_groups_naming_it_in_its_namespace_and_no_other() -> None:
    objects = [
        *_cluster(),
        _workload("unrelated", "t"),  # Workloads are read: a missing one is waited for
        *_naming("g1", "train"),
        *_naming("g2", "train"),
        *_naming("g3", "eval"),
        *_naming("g4", "train", namespace="other"),
    ]
    sim = Simulator(objects)
    assert sim.run().bindings == {}
    keys = ("default/g1", "default/g2", "default/g3", "other/g4")
    assert all(_waiting(sim, key) for key in keys)
    sim.cache.update_workload(_workload("train", "t"))
    assert [_waiting(sim, key) for key in keys] == [False, False, True, True]
    assert sorted(sim.run().bindings) == ["default/g1-0", "default/g2-0"]
    # deleted: the groups naming it wait again; the others are as they were
    sim.cache.delete_workload(_workload("train", "t"))
    assert [_waiting(sim, key) for key in keys] == [True, True, True, True]


def _child_of(namespace: str, name: str, parent: str) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"parentCompositePodGroupName": parent},
    }


child_step = st.one_of(
    st.tuples(
        st.just("put"),
        st.sampled_from(["a", "b"]),
        st.sampled_from(["x", "y", "z"]),
        st.sampled_from(["p", "q"]),
    ),
    st.tuples(st.just("remove"), st.sampled_from(["a", "b"]), st.sampled_from(["x", "y", "z"])),
)


@given(st.lists(child_step, max_size=40))
def test_children_of_is_what_a_scan_of_every_child_finds(steps: list[tuple[str, ...]]) -> None:
    groups = CompositeGroups()
    held: dict[str, dict[str, Any]] = {}
    for op, namespace, name, *parent in steps:
        key = f"{namespace}/{name}"
        if op == "put":
            pg = _child_of(namespace, name, parent[0])
            assert groups.put_child(pg) == f"{namespace}/{parent[0]}"
            held[key] = pg
        else:
            known = held.pop(key, None)
            parent = known["spec"]["parentCompositePodGroupName"] if known else ""
            # the parent's key while it was a child; its own key (no job of a parent) if not
            expected = f"{namespace}/{parent}" if known else key
            assert groups.remove_child(known or _child_of(namespace, name, "p")) == expected
    for parent in ("a/p", "a/q", "b/p", "b/q", "a/x"):
        scanned = [
            pg
            for key, pg in sorted(held.items())
            if f"{key.split('/')[0]}/{pg['spec']['parentCompositePodGroupName']}" == parent
        ]
        assert groups.children_of(parent) == scanned
