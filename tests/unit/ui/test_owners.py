"""The view's readable names: gangs by their owning workload, HyperNodes by what they stand for."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.scheduler.objects import hypernode, node, pod, podgroup, queue
from volcano_py.api.constants import NETWORK_TOPOLOGY_SOURCE_LABEL
from volcano_py.controllers.hypernode.ufm import UFM_LEAVES_ANNOTATION, ufm_hypernodes
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.task_info import TaskInfo
from volcano_py.scheduler.cache import SchedulerCache
from volcano_py.scheduler.plugins.support.queue_metrics import delete_queue
from volcano_py.ui.owners import gang_owner, hypernode_label
from volcano_py.ui.topology import topology_json

JSON = dict[str, Any]


def _ref(kind: str, name: str, api: str, controller: bool = True) -> JSON:
    return {"kind": kind, "name": name, "apiVersion": api, "controller": controller, "uid": "u"}


def _job(pg_refs: list[JSON], pod_refs: list[JSON], pod_labels: dict[str, str]) -> JobInfo:
    pg = podgroup("pg", 1)
    if pg_refs:
        pg["metadata"]["ownerReferences"] = pg_refs
    job = JobInfo(pg)
    p = pod("p-0", "pg", {"cpu": 1})
    p["metadata"]["labels"] = {**(p["metadata"].get("labels") or {}), **pod_labels}
    if pod_refs:
        p["metadata"]["ownerReferences"] = pod_refs
    job.add_task(TaskInfo(p))
    return job


@pytest.mark.parametrize(
    ("pg_refs", "pod_refs", "labels", "want"),
    [
        # a Volcano Job owns its PodGroup
        ([_ref("Job", "train", "batch.volcano.sh/v1alpha1")], [], {}, ("Job", "train")),
        # pg-controller copies the pod's ReplicaSet: shown as the Deployment
        (
            [_ref("ReplicaSet", "web-5d4f8b7c9", "apps/v1")],
            [],
            {"pod-template-hash": "5d4f8b7c9"},
            ("Deployment", "web"),
        ),
        # a ReplicaSet that is not a Deployment's stays a ReplicaSet
        ([_ref("ReplicaSet", "lonely", "apps/v1")], [], {}, ("ReplicaSet", "lonely")),
        ([_ref("StatefulSet", "db", "apps/v1")], [], {}, ("StatefulSet", "db")),
        ([_ref("RayCluster", "ray", "ray.io/v1")], [], {}, ("RayCluster", "ray")),
        # a hand-made PodGroup: the pods' controller says
        ([], [_ref("PyTorchJob", "bert", "kubeflow.org/v1")], {}, ("PyTorchJob", "bert")),
        # the controller reference wins over another owner
        (
            [_ref("ConfigMap", "x", "v1", controller=False), _ref("Job", "batch", "batch/v1")],
            [],
            {},
            ("Job", "batch"),
        ),
    ],
)
def test_gang_owner(
    pg_refs: list[JSON], pod_refs: list[JSON], labels: dict[str, str], want: tuple[str, str]
) -> None:
    owner = gang_owner(_job(pg_refs, pod_refs, labels))
    assert owner is not None
    assert (owner["kind"], owner["name"]) == want


def test_gang_without_any_owner_has_none() -> None:
    assert gang_owner(_job([], [], {})) is None


def test_hypernode_label_is_the_label_value_of_its_tier_or_the_ufm_leaves() -> None:
    discovered = {
        "metadata": {
            "name": "hypernode-a3-tier1-x7k2p",
            "labels": {"volcano.sh/hypernode": "rack-17", "volcano.sh/hypercluster": "pod-2"},
        }
    }
    assert hypernode_label(discovered, "volcano.sh/hypernode") == "rack-17"
    assert hypernode_label(discovered, "volcano.sh/hypercluster") == "pod-2"
    assert hypernode_label({"metadata": {"name": "rack-a"}}, "rack") == ""
    port = {"description": "Computer IB Port", "system_name": "", "peer_node_name": ""}
    ports = [
        {**port, "system_name": "n1", "peer_node_name": "leaf-sw-2"},
        {**port, "system_name": "n1", "peer_node_name": "leaf-sw-1"},
        {**port, "system_name": "n2", "peer_node_name": "leaf-sw-3"},
        {**port, "system_name": "n2", "peer_node_name": "leaf-sw-1"},
    ]
    leaf = ufm_hypernodes(ports)[0]
    assert leaf["metadata"]["annotations"] == {
        UFM_LEAVES_ANNOTATION: "leaf-sw-1,leaf-sw-2,leaf-sw-3"
    }
    assert hypernode_label(leaf, "") == "leaf-sw-1, leaf-sw-2 +1"


def test_topology_json_carries_labels_owners_and_queues() -> None:
    # the quota plugins' computed deserved is process-wide (the /metrics series): a session
    # another test ran for a queue named "team" must not be read as this cluster's
    delete_queue("team")
    cache = SchedulerCache()
    cache.update_node(node("n1", {"nvidia.com/gpu": 8}))
    rack = hypernode("hypernode-a3-tier1-abcde", 1, nodes=["n1"], tier_name="volcano.sh/hypernode")
    rack["metadata"]["labels"] = {
        NETWORK_TOPOLOGY_SOURCE_LABEL: "label",
        "volcano.sh/hypernode": "rack-17",
    }
    cache.update_hypernode(rack)
    cache.update_queue(queue("team", weight=3, capability={"nvidia.com/gpu": "8"}))
    running = podgroup("pg-run", 1, phase="Running", queue="team")
    running["metadata"]["ownerReferences"] = [_ref("Job", "train", "batch.volcano.sh/v1alpha1")]
    cache.update_podgroup(running)
    cache.update_pod(pod("run-0", "pg-run", {"nvidia.com/gpu": 6}, node_name="n1", phase="Running"))
    cache.update_podgroup(podgroup("pg-wait", 2, phase="Pending", queue="team"))
    for i in range(2):
        cache.update_pod(pod(f"wait-{i}", "pg-wait", {"nvidia.com/gpu": 4}))
    data = topology_json(cache.snapshot(), cache.hypernodes.objects())
    assert data["hyperNodes"]["hypernode-a3-tier1-abcde"]["label"] == "rack-17"
    owners = {g["name"]: g["owner"] for g in data["gangs"]}
    assert owners["pg-run"] == {
        "kind": "Job",
        "name": "train",
        "apiVersion": "batch.volcano.sh/v1alpha1",
    }
    team = next(q for q in data["queues"] if q["name"] == "team")
    assert team["weight"] == 3
    assert team["allocated"] == {"gpu": 6, "cpu": 0, "memory": 0}
    assert team["capability"] == {"gpu": 8}
    assert team["deserved"] == {}
    assert team["pendingGangs"] == 1
    assert team["runningGangs"] == 1
    assert {q["name"] for q in data["queues"]} >= {"team", "default", "root"}
