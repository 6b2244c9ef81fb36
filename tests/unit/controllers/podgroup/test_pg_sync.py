"""The pod reconcile: preloaded caches in, recorded client calls out."""

from __future__ import annotations

import pytest

from tests.unit.controllers.podgroup.pgfakes import harness, pod, workload
from volcano_py.controllers.podgroup.controller import PodGroupController
from volcano_py.controllers.podgroup.interfaces import Request
from volcano_py.kube.errors import AlreadyExists, Conflict, Invalid, PermanentError, ServerError

GROUP = "scheduling.k8s.io/group-name"
MIN = "scheduling.volcano.sh/group-min-member"
RS = workload("ReplicaSet", "web-abc", replicas=4, annotations={MIN: "4", "volcano.sh/x": "1"})


def test_sync_pod_creates_podgroup_then_annotates_the_pod() -> None:
    h = harness(pods=(pod("web-abc-1", owner=RS, requests={"cpu": "1"}),), replicasets=(RS,))
    h.sync.sync_pod("ns/web-abc-1")
    assert h.client.verbs() == [
        ("create", "podgroups", "podgroup-uid-web-abc"),
        ("patch", "pods", "web-abc-1"),
    ]
    created = h.client.calls[0].body
    assert created["spec"]["minMember"] == 4
    assert created["spec"]["minResources"]["cpu"] == "4"
    assert created["metadata"]["annotations"] == {"volcano.sh/x": "1"}
    patch = h.client.calls[1]
    assert patch.patch_type == "strategic"
    assert patch.body == {
        "metadata": {
            "resourceVersion": "10",
            "annotations": {GROUP: "podgroup-uid-web-abc"},
        }
    }


def test_sync_pod_only_annotates_when_podgroup_is_cached() -> None:
    existing = {"metadata": {"name": "podgroup-uid-web-abc", "namespace": "ns"}}
    h = harness(pods=(pod("web-abc-1", owner=RS),), podgroups=(existing,), replicasets=(RS,))
    h.sync.sync_pod("ns/web-abc-1")
    assert h.client.verbs() == [("patch", "pods", "web-abc-1")]


def test_sync_pod_treats_already_exists_as_success() -> None:
    h = harness(pods=(pod("a", owner=RS), pod("b", owner=RS)), replicasets=(RS,))
    h.client.fail("create", AlreadyExists(409, "AlreadyExists", "exists"))
    h.sync.sync_pod("ns/a")
    h.sync.sync_pod("ns/b")  # the cache has not caught up: no second create
    assert h.client.verbs() == [
        ("create", "podgroups", "podgroup-uid-web-abc"),
        ("patch", "pods", "a"),
        ("patch", "pods", "b"),
    ]


@pytest.mark.parametrize(
    "p",
    [
        pod("p", scheduler="default-scheduler"),
        pod("p", annotations={GROUP: "someone-elses"}),
        {
            **pod("p"),
            "metadata": {**pod("p")["metadata"], "deletionTimestamp": "2026-01-01T00:00:00Z"},
        },
    ],
    ids=["other-scheduler", "already-grouped", "being-deleted"],
)
def test_sync_pod_leaves_pods_we_do_not_take(p: dict) -> None:
    h = harness(pods=(p,))
    h.sync.sync_pod("ns/p")
    assert h.client.calls == []


def test_sync_pod_accepts_any_configured_scheduler_name() -> None:
    h = harness(pods=(pod("p", scheduler="kube-batch"),), scheduler_names=("volcano", "kube-batch"))
    h.sync.sync_pod("ns/p")
    assert [c.verb for c in h.client.calls] == ["create", "patch"]


def test_sync_pod_missing_from_cache_is_a_no_op() -> None:
    h = harness()
    h.sync.sync_pod("ns/gone")
    assert h.client.calls == []


def test_sync_pod_bare_pod_gets_its_own_podgroup_owned_by_the_pod() -> None:
    h = harness(pods=(pod("solo", uid="u-solo"),))
    h.sync.sync_pod("ns/solo")
    body = h.client.calls[0].body
    assert body["metadata"]["name"] == "podgroup-u-solo"
    assert body["metadata"]["ownerReferences"][0]["kind"] == "Pod"
    assert body["spec"]["minMember"] == 1


def test_sync_pod_does_not_patch_twice_while_cache_lags() -> None:
    h = harness(pods=(pod("p"),))
    h.sync.sync_pod("ns/p")
    h.sync.sync_pod("ns/p")
    assert [c.verb for c in h.client.calls] == ["create", "patch"]


def test_sync_pod_never_overwrites_a_group_name_set_meanwhile() -> None:
    h = harness(pods=(pod("p"),))
    h.client.fail("patch", Conflict(409, "Conflict", "changed"))
    fresh = pod("p", annotations={GROUP: "lws-group"}, resource_version="11")
    h.client.objects[("pods", "ns", "p")] = fresh
    h.sync.sync_pod("ns/p")
    assert [c.verb for c in h.client.calls] == ["create", "patch", "get"]
    assert h.recorder.events == [
        (
            "Warning",
            "PodGroupNameConflict",
            "normal pod ns/p annotations scheduling.k8s.io/group-name value is not "
            "podgroup-uid-p, but lws-group",
        )
    ]


def test_sync_pod_retries_the_patch_on_conflict_with_the_fresh_version() -> None:
    h = harness(pods=(pod("p"),))
    h.client.fail("patch", Conflict(409, "Conflict", "changed"))
    h.client.objects[("pods", "ns", "p")] = pod("p", resource_version="11")
    h.sync.sync_pod("ns/p")
    patches = [c for c in h.client.calls if c.verb == "patch"]
    assert [p.body["metadata"]["resourceVersion"] for p in patches] == ["10", "11"]


def test_sync_pod_server_error_propagates_for_retry() -> None:
    h = harness(pods=(pod("p"),))
    h.client.fail("create", ServerError(500, "InternalError", "boom"))
    with pytest.raises(ServerError):
        h.sync.sync_pod("ns/p")
    h.sync.sync_pod("ns/p")  # retried: creates now
    assert [c.verb for c in h.client.calls] == ["create", "create", "patch"]


def test_sync_pod_invalid_podgroup_is_permanent_with_an_event() -> None:
    h = harness(pods=(pod("p", annotations={"scheduling.volcano.sh/queue-name": "Bad_Q"}),))
    h.client.fail("create", Invalid(422, "Invalid", "spec.queue: Invalid value"))
    with pytest.raises(PermanentError):
        h.sync.sync_pod("ns/p")
    assert [e[1] for e in h.recorder.events] == ["FailedCreatePodGroup"]


def test_sync_pod_records_topology_warnings_on_create() -> None:
    h = harness(pods=(pod("p", annotations={"volcano.sh/network-topology-mode": "strict"}),))
    h.sync.sync_pod("ns/p")
    assert [e[1] for e in h.recorder.events] == ["InvalidNetworkTopologyMode"]
    assert h.client.calls[0].body["spec"]["networkTopology"] == {"mode": "hard"}


def test_owner_annotations_fetch_owner_missing_from_cache() -> None:
    h = harness(pods=(pod("p", owner=RS),))
    h.client.objects[("replicasets", "ns", "web-abc")] = RS
    h.sync.sync_pod("ns/p")
    assert h.client.verbs()[0] == ("get", "replicasets", "web-abc")
    assert h.client.calls[1].body["spec"]["minMember"] == 4


@pytest.mark.parametrize(("kind", "plural"), [("Job", "jobs"), ("DaemonSet", "daemonsets")])
def test_owner_annotations_fetch_jobs_and_daemonsets(kind: str, plural: str) -> None:
    owner = workload(kind, "o", annotations={MIN: "3"})
    h = harness(pods=(pod("p", owner=owner),))
    h.client.objects[(plural, "ns", "o")] = owner
    h.sync.sync_pod("ns/p")
    assert h.client.verbs()[0] == ("get", plural, "o")
    assert h.client.calls[1].body["spec"]["minMember"] == 3


def test_owner_annotations_first_owner_wins_a_key() -> None:
    first = workload("ReplicaSet", "first", annotations={MIN: "2", "volcano.sh/a": "1"})
    second = workload("StatefulSet", "second", annotations={MIN: "9", "volcano.sh/b": "2"})
    p = pod("p", owner=first)
    p["metadata"]["ownerReferences"].append(
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "second", "uid": "uid-second"}
    )
    h = harness(pods=(p,), replicasets=(first,), statefulsets=(second,))
    assert h.sync.owner_annotations(p) == {MIN: "2", "volcano.sh/a": "1", "volcano.sh/b": "2"}


def test_owner_annotations_missing_owner_adds_nothing() -> None:
    h = harness()
    assert h.sync.owner_annotations(pod("p", owner=RS)) == {}
    assert h.client.verbs() == [("get", "replicasets", "web-abc")]


# --- the controller's dispatch and handlers, without threads ----------------------------


def test_controller_handlers_queue_only_pods_we_take() -> None:
    h = harness()
    controller = PodGroupController()
    controller.sync_state = h.sync
    controller._pod_added(pod("mine"))
    controller._pod_added(pod("theirs", scheduler="default-scheduler"))
    controller._pod_added(pod("grouped", annotations={GROUP: "x"}))
    assert len(controller.queue) == 1
    assert controller.queue.get() == Request("Pod", "ns/mine")


def test_a_statefulset_pod_arriving_requeues_its_statefulset() -> None:
    # the StatefulSet's status event can come first and find no pod of its update revision
    h = harness()
    controller = PodGroupController()
    controller.sync_state = h.sync
    controller._pod_added(pod("db-1", owner=workload("StatefulSet", "db")))
    controller._pod_added(pod("web-1", owner=workload("ReplicaSet", "web")))
    queued = [controller.queue.get() for _ in range(len(controller.queue))]
    assert queued == [
        Request("Pod", "ns/db-1"),
        Request("StatefulSet", "ns/db"),
        Request("Pod", "ns/web-1"),
    ]


@pytest.mark.parametrize("event", ["add", "delete"])
def test_controller_podgroup_event_requeues_its_workload(event: str) -> None:
    h = harness()
    controller = PodGroupController()
    controller.sync_state = h.sync
    pg = {
        "metadata": {
            "name": "podgroup-uid-web-abc",
            "namespace": "ns",
            "ownerReferences": [
                {"kind": "ReplicaSet", "name": "web-abc", "uid": "uid-web-abc", "controller": True}
            ],
        }
    }
    (controller._podgroup_added if event == "add" else controller._podgroup_gone)(pg)
    assert controller.queue.get() == Request("ReplicaSet", "ns/web-abc")


def test_controller_ignores_podgroups_it_did_not_name() -> None:
    controller = PodGroupController()
    controller.sync_state = harness().sync
    pg = {
        "metadata": {
            "name": "my-job-pg",
            "namespace": "ns",
            "ownerReferences": [
                {"kind": "ReplicaSet", "name": "web-abc", "uid": "uid-web-abc", "controller": True}
            ],
        }
    }
    controller._podgroup_added(pg)
    assert len(controller.queue) == 0


def test_sync_pod_reads_no_owner_when_inheritance_is_off() -> None:
    h = harness(pods=(pod("p", owner=RS),), inherit_owner_annotations=False)
    h.sync.sync_pod("ns/p")
    assert [c.verb for c in h.client.calls] == ["create", "patch"]
    body = h.client.calls[0].body
    assert body["spec"]["minMember"] == 1
    assert body["metadata"]["annotations"] == {}


def test_controller_sync_dispatches_workloads_and_pods() -> None:
    owner = workload("ReplicaSet", "web", replicas=0)
    existing = {"metadata": {"name": "podgroup-uid-web", "namespace": "ns"}}
    h = harness(replicasets=(owner,), podgroups=(existing,), pods=(pod("solo"),))
    controller = PodGroupController()
    controller.sync_state = h.sync
    controller.sync(Request("ReplicaSet", "ns/web"))
    controller.sync(Request("Pod", "ns/solo"))
    assert h.client.verbs() == [
        ("delete", "podgroups", "podgroup-uid-web"),
        ("create", "podgroups", "podgroup-uid-solo"),
        ("patch", "pods", "solo"),
    ]


# --- a batch/v1 Job's pods when the Job controller made a native PodGroup (WorkloadWithJob) ---

JOB = workload("Job", "train", annotations={MIN: "1", "volcano.sh/x": "1"})


def _native(policy: dict, **spec: object) -> dict:
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {
            "name": "train-abc",
            "namespace": "ns",
            "ownerReferences": [
                {"kind": "Job", "name": "train", "uid": "uid-train", "controller": True}
            ],
        },
        "spec": {"schedulingPolicy": policy, **spec},
    }


def _job_pod() -> dict:
    return pod("train-0", owner=JOB, spec={"schedulingGroup": {"podGroupName": "train-abc"}})


def test_sync_pod_gives_a_jobs_default_native_group_a_volcano_podgroup_of_its_name() -> None:
    h = harness(pods=(_job_pod(),))
    h.client.objects[("podgroups", "ns", "train-abc")] = _native({"basic": {}})
    h.client.objects[("jobs", "ns", "train")] = JOB
    h.sync.sync_pod("ns/train-0")
    assert h.client.verbs() == [
        ("get", "podgroups", "train-abc"),
        ("get", "jobs", "train"),
        ("create", "podgroups", "train-abc"),
        ("patch", "pods", "train-0"),
    ]
    created = h.client.calls[2].body
    assert created["metadata"]["annotations"] == {"volcano.sh/x": "1"}  # the Job's, as Volcano
    assert h.client.calls[3].body["metadata"]["annotations"] == {GROUP: "train-abc"}


@pytest.mark.parametrize(
    "native",
    [
        _native({"gang": {"minCount": 2}}),
        _native({"basic": {}}, schedulingConstraints={"topology": [{"key": "rack"}]}),
    ],
    ids=["gang", "topology"],
)
def test_sync_pod_leaves_a_job_pod_to_a_native_group_that_asks_for_something(native: dict) -> None:
    h = harness(pods=(_job_pod(),))
    h.client.objects[("podgroups", "ns", "train-abc")] = native
    h.sync.sync_pod("ns/train-0")
    assert h.client.verbs() == [("get", "podgroups", "train-abc")]


def test_sync_pod_leaves_a_pod_of_a_native_group_that_no_job_controls() -> None:
    h = harness(pods=(pod("p", spec={"schedulingGroup": {"podGroupName": "g"}}),))
    h.sync.sync_pod("ns/p")
    assert h.client.calls == []
