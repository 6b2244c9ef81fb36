"""A task's request and template: computed once per set of shared spec subtrees, never stale."""

from __future__ import annotations

import copy
from typing import Any

from volcano_py.kube.transforms import SubtreeSharer, slim_pod
from volcano_py.scheduler.api.resource import Resource
from volcano_py.scheduler.api.task_info import (
    TaskInfo,
    non_zero_request,
    pod_request,
    template_key,
)

JSON = dict[str, Any]


def pod(name: str, cpu: str, *, gpu: str | None = None, toleration: str = "a") -> JSON:
    requests = {"cpu": cpu, **({"nvidia.com/gpu": gpu} if gpu else {})}
    return {
        "metadata": {"name": name, "namespace": "ns", "uid": name},
        "spec": {
            "containers": [{"name": "c", "image": "x", "resources": {"requests": requests}}],
            "tolerations": [{"key": toleration, "operator": "Exists"}],
        },
        "status": {"phase": "Pending"},
    }


def assert_fresh(task: TaskInfo) -> None:
    """The task's request and template are what the pod itself says."""
    assert dict(task.resreq.items()) == dict(pod_request(task.pod).items())
    assert task.non_zero == non_zero_request(task.pod)
    assert task.template == template_key(task.pod, pod_request(task.pod), task.non_zero)


def test_pods_sharing_their_subtrees_share_one_request() -> None:
    sharer = SubtreeSharer()
    pods = [slim_pod(pod(f"p{i}", "2", gpu="1"), sharer) for i in range(50)]
    tasks = [TaskInfo(p) for p in pods]
    assert all(t.resreq is tasks[0].resreq for t in tasks)  # computed once
    assert all(t.template == tasks[0].template for t in tasks)
    for task in tasks:
        assert_fresh(task)
    assert tasks[0].resreq == Resource.from_list({"cpu": "2", "nvidia.com/gpu": "1"}, "test")


def test_equal_content_in_other_objects_and_one_different_part_are_their_own_entries() -> None:
    sharer = SubtreeSharer()
    first = TaskInfo(slim_pod(pod("a", "1"), sharer))
    other_objects = TaskInfo(pod("b", "1"))  # not transformed: its own subtrees
    same_containers = slim_pod(pod("c", "1", toleration="b"), sharer)  # shares containers only
    assert same_containers["spec"]["containers"] is first.pod["spec"]["containers"]
    tolerating = TaskInfo(same_containers)
    for task in (first, other_objects, tolerating):
        assert_fresh(task)
    assert tolerating.template != first.template
    assert other_objects.template == first.template


def test_a_dropped_pods_subtrees_are_never_mistaken_for_a_new_pods() -> None:
    # an id is reused once its object is freed; the memo holds its keys' objects, so a new
    # pod's fresh subtrees can never match an entry of an old pod's
    for i in range(3000):
        cpu = str(1 + i % 7)
        task = TaskInfo(copy.deepcopy(pod(f"p{i}", cpu, gpu=str(i % 3) if i % 2 else None)))
        assert_fresh(task)
        del task


def test_task_clone_copies_every_slot() -> None:
    """``TaskInfo.clone`` names its slots one by one: a slot added and not copied fails here."""
    task = TaskInfo(pod("a", "1"))
    marks = {slot: object() for slot in TaskInfo.__slots__}
    for slot, mark in marks.items():
        setattr(task, slot, mark)
    copied = task.clone()
    assert copied is not task
    assert {slot: getattr(copied, slot) for slot in TaskInfo.__slots__} == marks


def test_a_task_is_plain_only_without_every_constraint_the_fast_paths_skip() -> None:
    """``TaskInfo.plain`` lets predicates and allocate skip the checks: each part clears it."""
    assert TaskInfo(pod("a", "1")).plain
    port = {"containerPort": 80, "hostPort": 8080}
    term = {"labelSelector": {}, "topologyKey": "kubernetes.io/hostname"}
    spread = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}
    claim = {"name": "data", "persistentVolumeClaim": {"claimName": "data"}}
    for part, value in (
        (
            "affinity",
            {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}},
        ),
        ("affinity", {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}),
        ("topologySpreadConstraints", [spread]),
        ("schedulingGates", [{"name": "wait"}]),
        ("volumes", [claim]),
        ("resourceClaims", [{"name": "gpu", "resourceClaimName": "gpu"}]),
    ):
        obj = pod("b", "1")
        obj["spec"][part] = value
        assert not TaskInfo(obj).plain, part
    obj = pod("c", "1")
    obj["spec"]["containers"][0]["ports"] = [port]
    assert not TaskInfo(obj).plain
    obj = pod("d", "1")
    obj["spec"]["affinity"] = {"nodeAffinity": {}}  # node affinity is the template's
    assert TaskInfo(obj).plain
