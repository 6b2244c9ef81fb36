from __future__ import annotations

import copy

import pytest

from bench.objects import node, pod
from volcano_py.api.resources import NATIVE_WORKLOADS
from volcano_py.kube.transforms import SubtreeSharer, default_transform, slim_node, slim_pod


def test_slim_pod_keeps_what_consumers_read_and_drops_the_rest() -> None:
    raw = pod(1, node="node-00001")
    slim = slim_pod(copy.deepcopy(raw), SubtreeSharer())
    assert "managedFields" not in slim["metadata"]
    assert slim["metadata"]["annotations"] == raw["metadata"]["annotations"]
    assert slim["metadata"]["ownerReferences"] == raw["metadata"]["ownerReferences"]
    assert slim["spec"]["containers"] == [
        {"name": "main", "resources": raw["spec"]["containers"][0]["resources"]}
    ]
    assert slim["spec"]["nodeName"] == "node-00001"
    assert slim["spec"]["tolerations"] == raw["spec"]["tolerations"]
    assert "volumes" not in slim["spec"]
    # container statuses keep only what the job controller reads (tests/unit/kube/
    # test_cache_contract.py): no image, ids or timestamps
    kept = {"name", "ready", "restartCount", "state"}
    assert all(set(c) <= kept for c in slim["status"]["containerStatuses"])
    assert len(slim["status"]["containerStatuses"]) == len(raw["status"]["containerStatuses"])
    assert slim["status"]["conditions"] == raw["status"]["conditions"]


def test_slim_pod_keeps_only_the_claims_of_its_volumes() -> None:
    raw = pod(1)
    raw["spec"]["volumes"] = [
        {"name": "token", "projected": {"sources": []}},
        {"name": "data", "persistentVolumeClaim": {"claimName": "data-0", "readOnly": True}},
        {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
        {"name": "cfg", "configMap": {"name": "cfg"}},
    ]
    slim = slim_pod(raw, SubtreeSharer())
    assert slim["spec"]["volumes"] == [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data-0"}},
        {"name": "scratch", "ephemeral": {}},
    ]


def test_slim_pod_shares_equal_subtrees_between_pods_of_one_workload() -> None:
    sharer = SubtreeSharer()
    a = slim_pod(pod(1), sharer)  # pods 1 and 2 belong to the same ReplicaSet
    b = slim_pod(pod(2), sharer)
    c = slim_pod(pod(100), sharer)  # another ReplicaSet
    assert a["metadata"]["ownerReferences"] is b["metadata"]["ownerReferences"]
    assert a["spec"]["tolerations"] is b["spec"]["tolerations"]
    assert a["spec"]["containers"] is b["spec"]["containers"]
    assert a["metadata"]["ownerReferences"] is not c["metadata"]["ownerReferences"]
    assert a["metadata"]["name"] != b["metadata"]["name"]


def test_subtree_sharer_is_bounded() -> None:
    sharer = SubtreeSharer(limit=3)
    for i in range(10):
        sharer.share({"k": i})
    assert len(sharer) <= 6  # two generations of at most 3
    assert sharer.share({}) == {}


def test_subtree_sharer_keeps_subtrees_in_use_and_drops_old_unique_ones() -> None:
    sharer = SubtreeSharer(limit=2)
    hot = sharer.share({"app": "web"})
    for i in range(5):
        assert sharer.share({"app": "web"}) is hot  # still arriving: stays shared
        sharer.share({"unique": i})
    cold = {"unique": 0}
    assert sharer.share(cold) is cold  # long gone: forgotten, not kept for ever


def test_slim_node_drops_images_and_keeps_allocatable() -> None:
    raw = node(3)
    slim = slim_node(copy.deepcopy(raw))
    assert "images" not in slim["status"]
    assert slim["status"]["allocatable"] == raw["status"]["allocatable"]
    assert slim["metadata"]["labels"] == raw["metadata"]["labels"]


def test_subtree_sharer_keys_cost_their_size_not_orjson_buffers() -> None:
    """orjson's bytes keep its ~4 KiB output buffer: 2,000 keys would hold ~8 MiB."""
    import tracemalloc

    sharer = SubtreeSharer(limit=4096)
    subtrees = [{"scheduling.k8s.io/group-name": f"churn-{i}"} for i in range(2000)]
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for subtree in subtrees:
            sharer.share(subtree)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(sharer) == 2000
    assert grown < 2000 * 400, f"{grown / 2000:.0f} bytes per entry"


def test_subtree_sharer_sweeps_out_subtrees_no_cached_object_uses() -> None:
    sharer = SubtreeSharer(limit=8)
    live = [slim_pod(pod(1), sharer), slim_pod(pod(2), sharer)]  # one workload, still cached
    for i in range(3, 400):  # pods of other workloads come and go (nothing keeps them)
        slim_pod(pod(i * 100), sharer)
        assert len(sharer) < 2 * 8
    sharer.sweep()
    owners = live[0]["metadata"]["ownerReferences"]
    assert slim_pod(pod(3), sharer)["metadata"]["ownerReferences"] is owners  # still shared
    kept = {id(v) for v in sharer._shared.values()}
    assert id(owners) in kept
    assert id(live[0]["spec"]["containers"]) in kept
    del live, owners
    assert sharer.sweep() <= 3  # what the last pod (not held either) and its workload left


def test_subtree_sharer_keeps_at_most_limit_subtrees_in_use() -> None:
    sharer = SubtreeSharer(limit=4)
    held = [sharer.share({"unique": i}) for i in range(50)]  # all in use
    assert len(sharer) < 2 * 4
    assert sharer.share({"unique": 49}) is held[49]  # the newest are the ones kept


def test_subtree_sharer_limit_must_be_positive() -> None:
    with pytest.raises(ValueError, match="limit"):
        SubtreeSharer(limit=0)


def test_the_workload_transform_keeps_its_identity_and_template_names_only() -> None:
    template = {
        "name": "worker",
        "schedulingPolicy": {"gang": {"minCount": 4}},
        "schedulingConstraints": {"topology": [{"key": "example.com/rack"}]},
    }
    workload = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "Workload",
        "metadata": {
            "name": "train",
            "namespace": "ml",
            "uid": "u1",
            "resourceVersion": "7",
            "managedFields": [{"manager": "kube-controller-manager"}],
            "labels": {"a": "b"},
        },
        "spec": {
            "controllerRef": {"kind": "Job", "name": "train"},
            "podGroupTemplates": [template, {"name": "launcher"}],
        },
    }
    slim = default_transform(NATIVE_WORKLOADS)(copy.deepcopy(workload))
    assert slim == {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "Workload",
        "metadata": {"name": "train", "namespace": "ml", "uid": "u1", "resourceVersion": "7"},
        "spec": {"podGroupTemplates": [{"name": "worker"}, {"name": "launcher"}]},
    }
