"""pg-controller against the real control plane with kube-controller-manager running.

No scheduler here: pods are never bound, so they stay Pending (kwok only runs pods bound to
its nodes), which is all the controller needs. Deployments use the Recreate strategy so a
template change replaces the ReplicaSet without waiting for pods to become ready (they never
do here).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tests.integration.podgroup.conftest import RunningController, wait_until
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import NotFound

JSON = dict[str, Any]
GROUP = "scheduling.k8s.io/group-name"
MIN = "scheduling.volcano.sh/group-min-member"
QUEUE = "scheduling.volcano.sh/queue-name"
MODE = "volcano.sh/network-topology-mode"
TIER = "volcano.sh/network-topology-highest-tier"


def pod_template(
    app: str,
    *,
    cpu: str = "500m",
    memory: str = "256Mi",
    annotations: Mapping[str, str] | None = None,
    scheduler: str = "volcano",
) -> JSON:
    return {
        "metadata": {"labels": {"app": app}, "annotations": dict(annotations or {})},
        "spec": {
            "schedulerName": scheduler,
            "containers": [
                {
                    "name": "main",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": cpu, "memory": memory}},
                }
            ],
        },
    }


def deployment(
    name: str, namespace: str, replicas: int, *, owner: Mapping[str, str] | None = None, **pod: Any
) -> JSON:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "annotations": dict(owner or {})},
        "spec": {
            "replicas": replicas,
            "strategy": {"type": "Recreate"},
            "selector": {"matchLabels": {"app": name}},
            "template": pod_template(name, **pod),
        },
    }


def statefulset(name: str, namespace: str, replicas: int, **pod: Any) -> JSON:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": namespace, "annotations": {MIN: str(replicas)}},
        "spec": {
            "replicas": replicas,
            "serviceName": name,
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": {"app": name}},
            "template": pod_template(name, **pod),
        },
    }


def items(client: KubeClient, resource: R.APIResource, namespace: str) -> list[JSON]:
    return list(client.list(resource, namespace)["items"])


def podgroups(client: KubeClient, namespace: str) -> dict[str, JSON]:
    return {pg["metadata"]["name"]: pg for pg in items(client, R.PODGROUPS, namespace)}


def group_names(client: KubeClient, namespace: str) -> dict[str, str | None]:
    """Live pods (not being deleted) -> their group-name annotation."""
    return {
        p["metadata"]["name"]: (p["metadata"].get("annotations") or {}).get(GROUP)
        for p in items(client, R.PODS, namespace)
        if not p["metadata"].get("deletionTimestamp")
    }


def replicasets(client: KubeClient, namespace: str) -> list[JSON]:
    return items(client, R.REPLICASETS, namespace)


def all_annotated(client: KubeClient, namespace: str, count: int, group: str) -> bool:
    names = group_names(client, namespace)
    return len(names) == count and all(v == group for v in names.values())


def current_rs(client: KubeClient, namespace: str) -> JSON:
    live = [rs for rs in replicasets(client, namespace) if rs["spec"]["replicas"] > 0]
    assert len(live) == 1, [rs["metadata"]["name"] for rs in live]
    return live[0]


def test_deployment_lifecycle_follows_with_podgroups(
    client: KubeClient,
    namespace: str,
    pg_controller: RunningController,
    kubectl: Callable[..., str],
) -> None:
    owner = {MIN: "4", "volcano.sh/preemptable": "true"}
    in_pod = {QUEUE: "gpu-queue", MODE: "soft", TIER: "2"}
    kubectl(
        "apply",
        "-f",
        "-",
        manifest=deployment("train", namespace, 4, owner=owner, annotations=in_pod),
    )

    rs = wait_until(lambda: replicasets(client, namespace), what="ReplicaSet")[0]
    group = f"podgroup-{rs['metadata']['uid']}"
    wait_until(lambda: all_annotated(client, namespace, 4, group), what="4 pods annotated")
    pgs = podgroups(client, namespace)
    assert list(pgs) == [group]
    pg = pgs[group]
    assert pg["spec"]["minMember"] == 4
    assert pg["spec"]["queue"] == "gpu-queue"
    assert pg["spec"]["networkTopology"] == {"mode": "soft", "highestTierAllowed": 2}
    assert pg["spec"]["minResources"] == {
        "count/pods": "4",
        "cpu": "2",
        "memory": "1Gi",
        "pods": "4",
        "requests.cpu": "2",
        "requests.memory": "1Gi",
    }
    assert pg["metadata"]["annotations"]["volcano.sh/preemptable"] == "true"
    assert pg["status"]["phase"] == "Pending"
    (ref,) = pg["metadata"]["ownerReferences"]
    assert (ref["kind"], ref["name"], ref["uid"], ref["controller"]) == (
        "ReplicaSet",
        rs["metadata"]["name"],
        rs["metadata"]["uid"],
        True,
    )

    # Scale up: the new pods join the same PodGroup.
    kubectl("scale", "deployment/train", "--replicas=6", "-n", namespace)
    wait_until(lambda: all_annotated(client, namespace, 6, group), what="6 pods annotated")
    assert list(podgroups(client, namespace)) == [group]

    # Change the template: a new ReplicaSet, a new PodGroup; the old one goes at 0 replicas.
    changed = deployment("train", namespace, 6, owner=owner, annotations=in_pod, cpu="1")
    kubectl("apply", "-f", "-", manifest=changed)
    new_rs = wait_until(
        lambda: next(
            (
                r
                for r in replicasets(client, namespace)
                if r["metadata"]["uid"] != rs["metadata"]["uid"] and r["spec"]["replicas"] > 0
            ),
            None,
        ),
        what="new ReplicaSet",
    )
    new_group = f"podgroup-{new_rs['metadata']['uid']}"
    wait_until(lambda: all_annotated(client, namespace, 6, new_group), what="rolled pods")
    wait_until(lambda: list(podgroups(client, namespace)) == [new_group], what="old PG deleted")
    assert podgroups(client, namespace)[new_group]["spec"]["minResources"]["cpu"] == "4"

    # Scale to 0: the PodGroup goes too.
    kubectl("scale", "deployment/train", "--replicas=0", "-n", namespace)
    wait_until(lambda: podgroups(client, namespace) == {}, what="PG deleted at 0 replicas")

    # Back to 2, then delete: garbage collection removes the PodGroup with its ReplicaSet.
    kubectl("scale", "deployment/train", "--replicas=2", "-n", namespace)
    wait_until(lambda: all_annotated(client, namespace, 2, new_group), what="scaled back")
    assert list(podgroups(client, namespace)) == [new_group]
    kubectl("delete", "deployment/train", "-n", namespace)
    wait_until(lambda: podgroups(client, namespace) == {}, what="PG garbage collected")


def test_owner_annotation_change_updates_the_podgroup(
    client: KubeClient,
    namespace: str,
    pg_controller: RunningController,
    kubectl: Callable[..., str],
) -> None:
    kubectl("apply", "-f", "-", manifest=deployment("web", namespace, 2, owner={MIN: "2"}))
    rs = wait_until(lambda: replicasets(client, namespace), what="ReplicaSet")[0]
    group = f"podgroup-{rs['metadata']['uid']}"
    wait_until(lambda: all_annotated(client, namespace, 2, group), what="pods annotated")
    kubectl("annotate", "deployment/web", f"{MIN}=1", "--overwrite", "-n", namespace)
    wait_until(
        lambda: podgroups(client, namespace)[group]["spec"]["minMember"] == 1,
        what="minMember follows the owner annotation",
    )
    assert podgroups(client, namespace)[group]["spec"]["minResources"]["cpu"] == "500m"

    # A PodGroup deleted by hand under running pods is made again.
    old_uid = podgroups(client, namespace)[group]["metadata"]["uid"]
    client.delete(R.PODGROUPS, group, namespace)
    wait_until(
        lambda: (
            group in podgroups(client, namespace)
            and podgroups(client, namespace)[group]["metadata"]["uid"] != old_uid
        ),
        what="PodGroup recreated",
    )


def test_statefulset_gets_a_podgroup_that_follows_its_update_revision(
    client: KubeClient,
    namespace: str,
    pg_controller: RunningController,
    kubectl: Callable[..., str],
) -> None:
    kubectl("apply", "-f", "-", manifest=statefulset("db", namespace, 2))
    sts = client.get(R.STATEFULSETS, "db", namespace)
    group = f"podgroup-{sts['metadata']['uid']}"
    wait_until(lambda: all_annotated(client, namespace, 2, group), what="2 pods annotated")
    pg = podgroups(client, namespace)[group]
    assert pg["spec"]["minMember"] == 2
    assert pg["spec"]["minResources"]["cpu"] == "1"
    assert pg["metadata"]["ownerReferences"][0]["kind"] == "StatefulSet"

    # A template change: the replacement pod (update revision) drives the PodGroup's resources.
    kubectl("apply", "-f", "-", manifest=statefulset("db", namespace, 2, cpu="2"))
    wait_until(
        lambda: podgroups(client, namespace)[group]["spec"]["minResources"]["cpu"] == "4",
        what="PodGroup follows the update revision",
    )
    assert list(podgroups(client, namespace)) == [group]

    kubectl("scale", "statefulset/db", "--replicas=0", "-n", namespace)
    wait_until(lambda: podgroups(client, namespace) == {}, what="PG deleted at 0 replicas")


def bare_pod(name: str, namespace: str, **template: Any) -> JSON:
    spec = pod_template(name, **template)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {**spec["metadata"], "name": name, "namespace": namespace},
        "spec": spec["spec"],
    }


def test_bare_pod_gets_its_own_podgroup_and_others_are_untouched(
    client: KubeClient,
    namespace: str,
    pg_controller: RunningController,
    kubectl: Callable[..., str],
) -> None:
    kubectl(
        "apply",
        "-f",
        "-",
        manifest=deployment("plain", namespace, 2, owner={MIN: "2"}, scheduler="default-scheduler"),
    )
    client.create(R.PODS, bare_pod("other", namespace, scheduler="default-scheduler"))
    client.create(R.PODS, bare_pod("foreign", namespace, annotations={GROUP: "my-own-group"}))
    created = client.create(R.PODS, bare_pod("solo", namespace, annotations={MODE: "strict"}))
    group = f"podgroup-{created['metadata']['uid']}"

    wait_until(lambda: group_names(client, namespace).get("solo") == group, what="solo annotated")
    pg = podgroups(client, namespace)[group]
    assert pg["spec"]["minMember"] == 1
    assert pg["spec"]["networkTopology"] == {"mode": "hard"}
    (ref,) = pg["metadata"]["ownerReferences"]
    assert (ref["kind"], ref["name"], ref["controller"]) == ("Pod", "solo", True)
    events = wait_until(
        lambda: [
            e
            for e in items(client, R.EVENTS, namespace)
            if e["reason"] == "InvalidNetworkTopologyMode"
        ],
        what="topology mode event",
    )
    assert events[0]["involvedObject"]["name"] == "solo"

    wait_until(lambda: len(group_names(client, namespace)) == 5, what="plain pods exist")
    names = group_names(client, namespace)
    assert names["foreign"] == "my-own-group"
    assert {k: v for k, v in names.items() if k not in ("solo", "foreign")} == {
        k: None for k in names if k not in ("solo", "foreign")
    }
    assert list(podgroups(client, namespace)) == [group]

    client.delete(R.PODS, "solo", namespace)
    wait_until(lambda: podgroups(client, namespace) == {}, what="PG collected with its pod")


def test_restart_midway_leaves_no_duplicate_and_no_pod_missed(
    client: KubeClient,
    namespace: str,
    pg_controller: RunningController,
    kubectl: Callable[..., str],
) -> None:
    kubectl("apply", "-f", "-", manifest=deployment("big", namespace, 30, owner={MIN: "30"}))
    wait_until(lambda: any(group_names(client, namespace).values()), what="some pods annotated")
    pg_controller.stop()
    annotated_at_stop = sum(1 for v in group_names(client, namespace).values() if v)

    # While it is down: more work arrives.
    kubectl("apply", "-f", "-", manifest=deployment("late", namespace, 5, owner={MIN: "5"}))
    wait_until(lambda: len(group_names(client, namespace)) == 35, what="all pods created")
    pg_controller.restart()

    wait_until(lambda: all(group_names(client, namespace).values()), what="every pod annotated")
    by_rs = {rs["metadata"]["uid"]: rs for rs in replicasets(client, namespace)}
    assert sorted(podgroups(client, namespace)) == sorted(f"podgroup-{uid}" for uid in by_rs)
    for name, value in group_names(client, namespace).items():
        rs_name = name.rsplit("-", 1)[0]
        uid = next(u for u, rs in by_rs.items() if rs["metadata"]["name"] == rs_name)
        assert value == f"podgroup-{uid}", name
    assert annotated_at_stop >= 1
    with contextlib.suppress(NotFound):
        client.delete(R.DEPLOYMENTS, "big", namespace)


EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "workloads"


def test_examples_get_their_podgroups(
    client: KubeClient,
    namespace: str,
    pg_controller: RunningController,
    kubectl: Callable[..., str],
) -> None:
    kubectl("apply", "-n", namespace, "-f", str(EXAMPLES))
    wait_until(
        lambda: (
            len(group_names(client, namespace)) == 4 + 8 + 16
            and all(group_names(client, namespace).values())
        ),
        what="all example pods annotated",
    )
    by_owner = {
        pg["metadata"]["ownerReferences"][0]["kind"]: pg
        for pg in podgroups(client, namespace).values()
    }
    assert set(by_owner) == {"ReplicaSet", "StatefulSet", "Job"}
    assert by_owner["ReplicaSet"]["spec"]["minMember"] == 4
    assert by_owner["ReplicaSet"]["spec"]["networkTopology"] == {
        "mode": "hard",
        "highestTierAllowed": 2,
    }
    assert by_owner["StatefulSet"]["spec"]["minMember"] == 8
    assert by_owner["StatefulSet"]["spec"]["minResources"]["nvidia.com/gpu"] == "8"
    assert by_owner["StatefulSet"]["spec"]["networkTopology"] == {
        "mode": "soft",
        "highestTierAllowed": 1,
    }
    job_group = by_owner["Job"]
    assert job_group["spec"]["minMember"] == 16
    [policy] = job_group["spec"]["subGroupPolicy"]
    assert policy["subGroupSize"] == 4
    assert policy["matchLabelKeys"] == ["volcano.sh/partition-id"]
    assert policy["networkTopology"] == {"mode": "hard", "highestTierAllowed": 1}
    partition_of = {
        p["metadata"]["name"]: (
            p["metadata"]["annotations"].get("batch.kubernetes.io/job-completion-index"),
            p["metadata"]["labels"].get("volcano.sh/partition-id"),
        )
        for p in items(client, R.PODS, namespace)
        if p["metadata"]["name"].startswith("tp-training-")
    }
    assert len(partition_of) == 16
    for name, (index, partition) in partition_of.items():
        assert index is not None, name
        assert partition == str(int(index) // 4), name
