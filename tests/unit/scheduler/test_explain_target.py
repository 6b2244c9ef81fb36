"""``explain NS/NAME``: from the workload's name to its gang, by owner references."""

from __future__ import annotations

from typing import Any

import pytest

from volcano_py.commands.explain_target import Gang, find_gangs

JSON = dict[str, Any]
NS = "ml"


def _obj(kind: str, name: str, uid: str, owner: tuple[str, str, str] | None = None) -> JSON:
    meta: JSON = {"name": name, "namespace": NS, "uid": uid}
    if owner:
        meta["ownerReferences"] = [
            {"kind": owner[0], "name": owner[1], "uid": owner[2], "controller": True}
        ]
    return {"kind": kind, "metadata": meta}


def _pod(name: str, group: str, owner: tuple[str, str, str] | None = None) -> JSON:
    pod = _obj("Pod", name, f"uid-{name}", owner)
    pod["metadata"]["annotations"] = {"scheduling.k8s.io/group-name": group}
    return pod


def _cluster() -> list[JSON]:
    return [
        # a Deployment: its ReplicaSet owns the PodGroup (pg-controller's podgroup-<rs uid>)
        _obj("Deployment", "web", "d1"),
        _obj("ReplicaSet", "web-5d8f", "rs1", ("Deployment", "web", "d1")),
        _obj("PodGroup", "podgroup-rs1", "pg1", ("ReplicaSet", "web-5d8f", "rs1")),
        # a Volcano Job owns its PodGroup <job>-<uid>
        _obj("PodGroup", "train-vj1", "pg2", ("Job", "train", "vj1")),
        # KubeRay: the RayCluster (a kind we never list) owns ray-<name>-pg
        _obj("PodGroup", "ray-gpu-pg", "pg3", ("RayCluster", "gpu", "rc1")),
        # LWS: the leader pod owns the group's PodGroup; a StatefulSet the LWS owns, the pod
        _obj("StatefulSet", "vllm", "ss1", ("LeaderWorkerSet", "vllm", "lws1")),
        _pod("vllm-0", "vllm-0-abc", ("StatefulSet", "vllm", "ss1")),
        _obj("PodGroup", "vllm-0-abc", "pg4", ("Pod", "vllm-0", "uid-vllm-0")),
        # a PodGroup owned by nothing, named by its pods' annotation only
        _obj("PodGroup", "hand-made", "pg5"),
        _pod("solo", "hand-made", ("Job", "solo", "bj1")),
    ]


@pytest.mark.parametrize(
    ("name", "gangs"),
    [
        (
            "web",
            [
                Gang(
                    "podgroup-rs1", "Deployment web -> ReplicaSet web-5d8f -> PodGroup podgroup-rs1"
                )
            ],
        ),
        ("train", [Gang("train-vj1", "Job train -> PodGroup train-vj1")]),
        ("gpu", [Gang("ray-gpu-pg", "RayCluster gpu -> PodGroup ray-gpu-pg")]),
        (
            "vllm",
            [
                Gang(
                    "vllm-0-abc",
                    "LeaderWorkerSet vllm -> StatefulSet vllm -> Pod vllm-0 -> PodGroup vllm-0-abc",
                )
            ],
        ),
        ("solo", [Gang("hand-made", "Job solo -> Pod solo -> PodGroup hand-made")]),
        ("podgroup-rs1", [Gang("podgroup-rs1", "PodGroup podgroup-rs1")]),
        ("nothing", []),
    ],
    ids=["deployment", "vcjob", "raycluster", "lws", "batch-job-pods", "podgroup", "unknown"],
)
def test_a_workload_name_finds_its_podgroup_through_the_owner_chain(
    name: str, gangs: list[Gang]
) -> None:
    assert find_gangs(NS, name, _cluster()) == gangs


def test_a_deployment_mid_rollout_finds_the_gang_of_each_replicaset() -> None:
    objects = [
        *_cluster(),
        _obj("ReplicaSet", "web-7c9a", "rs2", ("Deployment", "web", "d1")),
        _obj("PodGroup", "podgroup-rs2", "pg6", ("ReplicaSet", "web-7c9a", "rs2")),
    ]
    assert [g.podgroup for g in find_gangs(NS, "web", objects)] == ["podgroup-rs1", "podgroup-rs2"]


def test_objects_of_another_namespace_are_not_matched() -> None:
    other = _obj("PodGroup", "web", "x1")
    other["metadata"]["namespace"] = "elsewhere"
    assert find_gangs(NS, "web", [other]) == []


def test_a_batch_job_with_spec_scheduling_finds_its_native_podgroup_through_its_pods() -> None:
    job = _obj("Job", "trainer", "j1")
    native = _obj("PodGroup", "trainer-pg-abc", "npg1")
    native["apiVersion"] = "scheduling.k8s.io/v1beta1"
    pod = _obj("Pod", "trainer-0-x", "p1", ("Job", "trainer", "j1"))
    pod["spec"] = {"schedulingGroup": {"podGroupName": "trainer-pg-abc"}}
    gangs = find_gangs(NS, "trainer", [job, native, pod])
    assert gangs == [
        Gang("trainer-pg-abc", "Job trainer -> Pod trainer-0-x -> PodGroup trainer-pg-abc")
    ]
