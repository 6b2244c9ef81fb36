"""Kubernetes' own PodGroups (``scheduling.k8s.io/v1beta1``) scheduled as Volcano jobs.

The mapping onto the Volcano-shaped view (``api/native_groups.py``), the condition the
scheduler writes on the native object as kube-scheduler does (``PodGroupInitiallyScheduled``
with ``Scheduled`` / ``Unschedulable`` / ``SchedulerError``), and one gang object per pod.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.controllers.podgroup.pgfakes import harness
from tests.unit.controllers.podgroup.pgfakes import pod as pg_pod
from tests.unit.scheduler.objects import hypernode, node, pod, podgroup
from volcano_py.api.native_groups import (
    INITIALLY_SCHEDULED,
    initially_scheduled,
    volcano_view,
)
from volcano_py.scheduler.api.task_info import TaskInfo
from volcano_py.scheduler.simulator import Simulator

RACK = "example.com/rack"


def _native(name: str, policy: dict[str, Any], key: str = "", **meta: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulingPolicy": policy}
    if key:
        spec["schedulingConstraints"] = {"topology": [{"key": key}]}
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", **meta},
        "spec": spec,
    }


def _member(name: str, group: str, gpus: int) -> dict[str, Any]:
    return pod(
        name, requests={"nvidia.com/gpu": gpus}, spec={"schedulingGroup": {"podGroupName": group}}
    )


def _cluster() -> list[dict[str, Any]]:
    return [
        *(node(f"n{i}", {"nvidia.com/gpu": 4}) for i in range(4)),
        hypernode("tor-a", 1, nodes=["n0", "n1"], tier_name=RACK),
        hypernode("tor-b", 1, nodes=["n2", "n3"], tier_name=RACK),
        hypernode("spine", 2, children=["tor-a", "tor-b"], tier_name="example.com/spine"),
    ]


def _condition(sim: Simulator, key: str) -> dict[str, Any]:
    native = sim.cache.native_podgroup(key)
    assert native is not None
    conditions = (native.get("status") or {}).get("conditions") or []
    found = [c for c in conditions if c["type"] == INITIALLY_SCHEDULED]
    assert len(found) == 1, conditions
    return dict(found[0])


@pytest.mark.parametrize(
    ("policy", "key", "annotations", "spec"),
    [
        (
            {"gang": {"minCount": 3}},
            RACK,
            {},
            {"minMember": 3, "networkTopology": {"mode": "hard", "highestTierName": RACK}},
        ),
        ({"basic": {}}, "", {}, {"minMember": 1}),
        (
            {"gang": {"minCount": 2}},
            RACK,
            {
                "volcano.sh/network-topology-mode": "soft",
                "volcano.sh/network-topology-highest-tier": "2",
                "scheduling.volcano.sh/queue-name": "research",
            },
            {
                "minMember": 2,
                "queue": "research",
                "networkTopology": {"mode": "soft", "highestTierName": RACK},
            },
        ),
    ],
    ids=["gang-with-key", "basic", "annotations-soft-and-queue-key-wins"],
)
def test_native_podgroup_maps_onto_a_volcano_view(
    policy: dict[str, Any], key: str, annotations: dict[str, str], spec: dict[str, Any]
) -> None:
    view = volcano_view(_native("g", policy, key, annotations=annotations))
    assert view["spec"] == spec
    assert view["status"] == {"phase": "Pending"}


def test_pods_schedulinggroup_wins_over_the_group_name_annotation() -> None:
    p = pod("p", group="volcano-pg", spec={"schedulingGroup": {"podGroupName": "native"}})
    assert TaskInfo(p).job == "default/native"


def test_native_gang_gets_initially_scheduled_true_once_placed_in_one_rack() -> None:
    objects = [*_cluster(), _native("g", {"gang": {"minCount": 2}}, RACK)]
    objects += [_member(f"g-{i}", "g", 4) for i in range(2)]
    sim = Simulator(objects)
    result = sim.run()
    assert len(result.bindings) == 2
    assert len({int(n[1]) // 2 for n in result.bindings.values()}) == 1  # one rack
    condition = _condition(sim, "default/g")
    assert (condition["status"], condition["reason"]) == ("True", "Scheduled")


def test_native_gang_too_big_for_a_rack_is_unschedulable_with_the_tier_shortfall() -> None:
    objects = [*_cluster(), _native("g", {"gang": {"minCount": 3}}, RACK)]
    objects += [_member(f"g-{i}", "g", 4) for i in range(3)]
    sim = Simulator(objects)
    assert sim.run().bindings == {}
    condition = _condition(sim, "default/g")
    assert (condition["status"], condition["reason"]) == ("False", "Unschedulable")
    assert "tier 1: 0/2 fit" in condition["message"]


def test_native_group_with_a_bad_min_count_is_a_scheduler_error_naming_the_field() -> None:
    objects = [*_cluster(), _native("g", {"gang": {"minCount": -1}}), _member("g-0", "g", 1)]
    sim = Simulator(objects)
    assert sim.run().bindings == {}
    condition = _condition(sim, "default/g")
    assert (condition["status"], condition["reason"]) == ("False", "SchedulerError")
    assert "minMember" in condition["message"]


def test_initially_scheduled_stays_true_and_is_not_rewritten() -> None:
    native = _native("g", {"basic": {}})
    done = initially_scheduled(native, True, "Scheduled", "1 pod(s) placed", "t1")
    assert done is not None
    assert initially_scheduled(done, False, "Unschedulable", "later", "t2") is None
    waiting = initially_scheduled(native, False, "Unschedulable", "m", "t1")
    assert waiting is not None
    assert initially_scheduled(waiting, False, "Unschedulable", "m", "t2") is None


def test_a_volcano_podgroup_of_the_same_name_wins_over_the_native_one() -> None:
    objects = [*_cluster(), podgroup("g", 1), _native("g", {"gang": {"minCount": 5}})]
    objects.append(_member("g-0", "g", 1))
    sim = Simulator(objects)
    assert len(sim.run().bindings) == 1  # minMember 1 of the Volcano PodGroup, not 5
    assert sim.cache.native_podgroup("default/g") is None


def test_pg_controller_gives_a_pod_of_a_native_podgroup_no_volcano_podgroup() -> None:
    member = pg_pod("m", spec={"schedulingGroup": {"podGroupName": "native"}})
    plain = pg_pod("p")
    h = harness(pods=(member, plain))
    assert not h.sync.takes(member)
    assert h.sync.takes(plain)


def test_a_native_podgroup_behind_a_volcano_one_of_its_name_comes_back_when_that_goes() -> None:
    sim = Simulator(_cluster())
    native = _native("g", {"gang": {"minCount": 2}}, RACK)
    volcano = podgroup("g", 1)
    sim.cache.update_podgroup(volcano)
    sim.cache.update_podgroup(native)
    assert sim.cache.native_podgroup("default/g") is None
    sim.cache.delete_podgroup(volcano)
    assert sim.cache.native_podgroup("default/g") == native
    view = sim.cache.podgroup("default/g")
    assert view is not None
    assert view["spec"]["minMember"] == 2
    # and a Volcano PodGroup made later pushes it behind again, until it is deleted
    sim.cache.update_podgroup(volcano)
    assert sim.cache.native_podgroup("default/g") is None
    sim.cache.delete_podgroup(native)
    sim.cache.delete_podgroup(volcano)
    assert sim.cache.podgroup("default/g") is None


def test_a_listed_native_podgroup_without_kind_is_still_read_as_native() -> None:
    sim = Simulator(_cluster())
    listed = _native("g", {"gang": {"minCount": 2}}, RACK)
    del listed["apiVersion"], listed["kind"]  # as a LIST's items come
    sim.cache.update_native_podgroup(listed)
    view = sim.cache.podgroup("default/g")
    assert view is not None
    assert view["spec"]["minMember"] == 2
    native = sim.cache.native_podgroup("default/g")
    assert native is not None
    assert native["apiVersion"] == "scheduling.k8s.io/v1beta1"  # the writer routes by it
    sim.cache.delete_native_podgroup(listed)
    assert sim.cache.podgroup("default/g") is None
