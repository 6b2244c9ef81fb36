"""The ReplicaSet/StatefulSet reconcile: delete at 0 replicas, create or update above."""

from __future__ import annotations

import copy

import pytest

from tests.unit.controllers.podgroup.pgfakes import harness, pod, workload
from volcano_py.controllers.podgroup.builder import build_podgroup
from volcano_py.controllers.podgroup.interfaces import Request
from volcano_py.controllers.podgroup.workload import sync_workload

GROUP = "scheduling.k8s.io/group-name"
MIN = "scheduling.volcano.sh/group-min-member"
PG = "podgroup-uid-web"


def rs(replicas: int, **annotations: str) -> dict:
    return workload("ReplicaSet", "web", replicas=replicas, annotations={MIN: "2", **annotations})


def cached_pg(owner: dict, member: dict) -> dict:
    body = build_podgroup(member, dict(owner["metadata"]["annotations"])).body
    body["metadata"]["resourceVersion"] = "5"
    body["spec"]["queue"] = "default"
    return body


def test_sync_workload_deletes_podgroup_at_zero_replicas() -> None:
    owner = rs(0)
    existing = cached_pg(owner, pod("web-1", owner=owner))
    h = harness(replicasets=(owner,), podgroups=(existing,))
    sync_workload(h.sync, "ReplicaSet", "ns/web")
    assert h.client.verbs() == [("delete", "podgroups", PG)]


def test_sync_workload_at_zero_replicas_without_podgroup_makes_no_call() -> None:
    h = harness(replicasets=(rs(0),))
    sync_workload(h.sync, "ReplicaSet", "ns/web")
    assert h.client.calls == []


def test_sync_workload_creates_podgroup_and_queues_unannotated_pods() -> None:
    owner = rs(2)
    pods = (pod("web-2", owner=owner), pod("web-1", owner=owner))
    h = harness(replicasets=(owner,), pods=pods)
    sync_workload(h.sync, "ReplicaSet", "ns/web")
    assert h.client.verbs() == [("create", "podgroups", PG)]
    assert h.client.calls[0].body["spec"]["minMember"] == 2
    assert h.queued == [Request("Pod", "ns/web-1"), Request("Pod", "ns/web-2")]


def test_sync_workload_rolling_update_race_ends_with_a_podgroup() -> None:
    """Add seen with 0 replicas, then the update to 1 after the pod already got its name."""
    owner = rs(0)
    member = pod("web-1", owner=owner, annotations={GROUP: PG})
    h = harness(replicasets=(owner,), pods=(member,))
    sync_workload(h.sync, "ReplicaSet", "ns/web")
    assert h.client.calls == []
    h.sync.caches.replicasets.put("ns/web", rs(1))
    sync_workload(h.sync, "ReplicaSet", "ns/web")
    assert h.client.verbs() == [("create", "podgroups", PG)]


def test_sync_workload_updates_podgroup_when_owner_annotations_change() -> None:
    old = rs(2)
    member = pod("web-1", owner=old, annotations={GROUP: PG}, requests={"cpu": "1"})
    existing = cached_pg(old, member)
    new = rs(3, **{MIN: "3", "volcano.sh/preemptable": "true"})
    h = harness(replicasets=(new,), pods=(member,), podgroups=(existing,))
    sync_workload(h.sync, "ReplicaSet", "ns/web")
    assert h.client.verbs() == [("update", "podgroups", PG)]
    body = h.client.calls[0].body
    assert body["spec"]["minMember"] == 3
    assert body["spec"]["minResources"]["cpu"] == "3"
    assert body["metadata"]["annotations"] == {"volcano.sh/preemptable": "true"}
    assert body["metadata"]["resourceVersion"] == "5"


def test_sync_workload_writes_nothing_when_podgroup_matches() -> None:
    owner = rs(2)
    member = pod("web-1", owner=owner, annotations={GROUP: PG}, requests={"cpu": "1"})
    h = harness(replicasets=(owner,), pods=(member,), podgroups=(cached_pg(owner, member),))
    sync_workload(h.sync, "ReplicaSet", "ns/web")
    assert h.client.calls == []
    assert h.queued == []


def test_sync_workload_skips_pods_grouped_by_someone_else() -> None:
    owner = rs(1)
    member = pod("web-1", owner=owner, annotations={GROUP: "lws-group"})
    h = harness(replicasets=(owner,), pods=(member,))
    sync_workload(h.sync, "ReplicaSet", "ns/web")
    assert h.client.calls == []


def test_sync_workload_ignores_pods_of_other_schedulers() -> None:
    owner = rs(1)
    h = harness(replicasets=(owner,), pods=(pod("web-1", owner=owner, scheduler="default"),))
    sync_workload(h.sync, "ReplicaSet", "ns/web")
    assert h.client.calls == []


def test_sync_workload_ignores_pods_of_another_owner() -> None:
    other = workload("ReplicaSet", "web-old", uid="uid-old")
    h = harness(replicasets=(rs(1),), pods=(pod("web-old-1", owner=other),))
    sync_workload(h.sync, "ReplicaSet", "ns/web")
    assert h.client.calls == []


def test_sync_workload_statefulset_uses_only_update_revision_pods() -> None:
    sts = workload("StatefulSet", "db", replicas=2, annotations={MIN: "2"}, update_revision="r2")
    old = pod("db-0", owner=sts, labels={"controller-revision-hash": "r1"}, requests={"cpu": "1"})
    new = pod("db-1", owner=sts, labels={"controller-revision-hash": "r2"}, requests={"cpu": "2"})
    h = harness(statefulsets=(sts,), pods=(old, new))
    sync_workload(h.sync, "StatefulSet", "ns/db")
    assert h.client.verbs() == [("create", "podgroups", "podgroup-uid-db")]
    assert h.client.calls[0].body["spec"]["minResources"]["cpu"] == "4"
    assert h.queued == [Request("Pod", "ns/db-1")]


def test_sync_workload_statefulset_template_change_updates_podgroup() -> None:
    sts = workload("StatefulSet", "db", replicas=1, update_revision="r1")
    v1 = pod("db-0", owner=sts, labels={"controller-revision-hash": "r1"}, requests={"cpu": "1"})
    existing = cached_pg(sts, v1)
    rolled = copy.deepcopy(sts)
    rolled["status"]["updateRevision"] = "r2"
    v2 = pod(
        "db-0",
        owner=sts,
        labels={"controller-revision-hash": "r2"},
        requests={"cpu": "2"},
        annotations={GROUP: "podgroup-uid-db"},
    )
    h = harness(statefulsets=(rolled,), pods=(v2,), podgroups=(existing,))
    sync_workload(h.sync, "StatefulSet", "ns/db")
    assert h.client.verbs() == [("update", "podgroups", "podgroup-uid-db")]
    assert h.client.calls[0].body["spec"]["minResources"]["cpu"] == "2"


def test_a_statefulset_reconciled_before_its_new_pod_writes_once_the_pod_is_cached() -> None:
    # its status event first: no pod of the update revision yet, nothing to follow
    sts = workload("StatefulSet", "db", replicas=1, update_revision="r2")
    old = pod("db-0", owner=sts, labels={"controller-revision-hash": "r1"}, requests={"cpu": "1"})
    existing = cached_pg(sts, old)
    early = harness(statefulsets=(sts,), pods=(), podgroups=(existing,))
    sync_workload(early.sync, "StatefulSet", "ns/db")
    assert early.client.verbs() == []
    # the pod arrives (its add queues the StatefulSet again: test_pg_sync) and the same
    # reconcile makes the PodGroup follow it
    new = pod("db-0", owner=sts, labels={"controller-revision-hash": "r2"}, requests={"cpu": "2"})
    late = harness(statefulsets=(sts,), pods=(new,), podgroups=(existing,))
    sync_workload(late.sync, "StatefulSet", "ns/db")
    assert late.client.verbs() == [("update", "podgroups", "podgroup-uid-db")]
    assert late.client.calls[0].body["spec"]["minResources"]["cpu"] == "2"


def test_sync_workload_deleted_workload_is_left_to_garbage_collection() -> None:
    h = harness()
    sync_workload(h.sync, "ReplicaSet", "ns/gone")
    assert h.client.calls == []


def test_sync_workload_recreates_a_podgroup_deleted_under_running_pods() -> None:
    owner = rs(1)
    member = pod("web-1", owner=owner, annotations={GROUP: PG})
    h = harness(replicasets=(owner,), pods=(member,))
    sync_workload(h.sync, "ReplicaSet", "ns/web")
    assert h.client.verbs() == [("create", "podgroups", PG)]
    assert h.queued == []


@pytest.mark.parametrize(
    ("replicas", "expected"),
    [(1, 1), (3, 3), (4, 4), (6, 4)],
    ids=["surge-of-1", "scaling-up", "full", "more-than-min-member"],
)
def test_replicaset_gang_is_its_replicas_capped_by_min_member(replicas: int, expected: int) -> None:
    # A rollout's new ReplicaSet grows step by step (maxSurge): each step is a gang of the
    # pods it is asked for, so the rollout never waits for pods that will not come.
    owner = rs(replicas, **{MIN: "4"})
    member = pod("web-1", owner=owner, annotations={GROUP: PG}, requests={"cpu": "1"})
    existing = cached_pg(rs(1, **{MIN: "1"}), member)
    h = harness(replicasets=(owner,), pods=(member,), podgroups=(existing,))
    sync_workload(h.sync, "ReplicaSet", "ns/web")
    if expected == 1:
        assert h.client.calls == []
        return
    assert h.client.verbs() == [("update", "podgroups", PG)]
    body = h.client.calls[0].body
    assert body["spec"]["minMember"] == expected
    assert body["spec"]["minResources"]["cpu"] == str(expected)


def test_a_workload_whose_pods_name_a_native_podgroup_gets_no_volcano_podgroup_and_a_warning() -> (
    None
):
    owner = rs(2)
    native = {"schedulingGroup": {"podGroupName": "kube-gang"}}
    h = harness(pods=(pod("web-1", owner=owner, spec=native),), replicasets=(owner,))
    sync_workload(h.sync, "ReplicaSet", "ns/web")
    assert h.client.calls == []  # one gang object per pod: the native one
    assert [(e[0], e[1]) for e in h.recorder.events] == [("Warning", "GangAnnotationIgnored")]
    assert "kube-gang" in h.recorder.events[0][2]
