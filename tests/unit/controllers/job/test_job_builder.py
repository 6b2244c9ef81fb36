"""The PodGroup and pods a vcjob gets, as Volcano builds them (pure functions)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.unit.controllers.job.jobfakes import load_job
from volcano_py.api.vcjob import JobView
from volcano_py.controllers.job.builder import (
    build_pod,
    build_podgroup,
    min_resources,
    updated_podgroup,
)

PARTITIONED = load_job("""
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: network-topology-job
  labels: {team: a}
  annotations: {volcano.sh/preemptable: "true", note: x}
spec:
  schedulerName: volcano
  minAvailable: 4
  networkTopology: {mode: hard, highestTierAllowed: 2}
  tasks:
    - name: t0
      replicas: 8
      partitionPolicy:
        totalPartitions: 2
        partitionSize: 4
        minPartitions: 1
        networkTopology: {mode: hard, highestTierAllowed: 1}
      template:
        metadata: {labels: {app: x}, annotations: {keep: "1"}}
        spec:
          containers:
            - name: c0
              image: nginx:latest
              resources: {requests: {cpu: "4"}, limits: {cpu: "4"}}
""")


def test_podgroup_of_the_guides_partitioned_job() -> None:
    pg = build_podgroup(PARTITIONED, JobView.from_dict(PARTITIONED))
    assert pg["metadata"]["name"] == "network-topology-job-uid-1"
    assert pg["metadata"]["labels"] == {"team": "a"}
    assert pg["metadata"]["annotations"] == {"volcano.sh/preemptable": "true", "note": "x"}
    assert pg["metadata"]["ownerReferences"] == [{
        "apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
        "name": "network-topology-job", "uid": "uid-1", "controller": True,
        "blockOwnerDeletion": True,
    }]  # fmt: skip
    spec = pg["spec"]
    assert spec["minMember"] == 4
    assert spec["minTaskMember"] == {"t0": 4}  # minPartitions * partitionSize
    assert spec["queue"] == "default"
    assert spec["networkTopology"] == {"mode": "hard", "highestTierAllowed": 2}
    assert spec["subGroupPolicy"] == [{
        "name": "t0", "subGroupSize": 4, "minSubGroups": 1,
        "labelSelector": {"matchLabels": {"volcano.sh/task-spec": "t0"}},
        "matchLabelKeys": ["volcano.sh/partition-id"],
        "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
    }]  # fmt: skip
    assert spec["minResources"]["cpu"] == "16"


def test_tier_name_is_used_only_without_a_tier_number() -> None:
    job = dict(PARTITIONED, spec={**PARTITIONED["spec"],
               "networkTopology": {"mode": "soft", "highestTierName": "rack"}})  # fmt: skip
    assert build_podgroup(job, JobView.from_dict(job))["spec"]["networkTopology"] == {
        "mode": "soft", "highestTierName": "rack",
    }  # fmt: skip


def test_pod_carries_volcanos_name_labels_annotations_and_partition() -> None:
    view = JobView.from_dict(PARTITIONED)
    pod = build_pod(PARTITIONED, view, view.tasks[0], 5)
    meta = pod["metadata"]
    assert meta["name"] == "network-topology-job-t0-5"
    assert meta["labels"] == {
        "app": "x", "volcano.sh/task-index": "5", "volcano.sh/job-name": "network-topology-job",
        "volcano.sh/task-spec": "t0", "volcano.sh/job-namespace": "ns",
        "volcano.sh/queue-name": "default", "volcano.sh/partition-id": "1",
    }  # fmt: skip
    assert meta["annotations"] == {
        "keep": "1", "volcano.sh/task-index": "5", "volcano.sh/task-spec": "t0",
        "scheduling.k8s.io/group-name": "network-topology-job-uid-1",
        "volcano.sh/job-name": "network-topology-job", "volcano.sh/queue-name": "default",
        "volcano.sh/job-version": "0", "volcano.sh/template-uid": "network-topology-job-t0",
        "volcano.sh/job-retry-count": "0", "volcano.sh/preemptable": "true",
    }  # fmt: skip
    assert meta["ownerReferences"][0]["kind"] == "Job"
    assert pod["spec"]["schedulerName"] == "volcano"


def test_template_scheduler_name_wins_over_the_jobs() -> None:
    view = JobView.from_dict(PARTITIONED)
    task = view.tasks[0]
    template = {**task.template, "spec": {**task.template["spec"], "schedulerName": "other"}}
    pod = build_pod(PARTITIONED, view, replace(task, template=template), 0)
    assert pod["spec"]["schedulerName"] == "other"


def _job(min_available: int, *tasks: tuple[str, int, int | None, str]) -> JobView:
    spec_tasks = []
    for name, replicas, task_min, cpu in tasks:
        task: dict[str, object] = {
            "name": name, "replicas": replicas,
            "template": {"spec": {"containers": [{"name": "c", "resources":
                                                  {"requests": {"cpu": cpu}}}]}},
        }  # fmt: skip
        if task_min is not None:
            task["minAvailable"] = task_min
        spec_tasks.append(task)
    meta = {"name": "j", "namespace": "n", "uid": "u"}
    return JobView.from_dict(
        {"metadata": meta, "spec": {"minAvailable": min_available, "tasks": spec_tasks}}
    )


@pytest.mark.parametrize(
    ("view", "cpu"),
    [
        (_job(3, ("ps", 1, 1, "1"), ("worker", 4, 4, "2")), "5"),  # first 3 pods: 1 ps + 2 workers
        (_job(5, ("ps", 1, 1, "1"), ("worker", 4, 4, "2")), "9"),  # every task's minAvailable
        (_job(4, ("ps", 2, 1, "1"), ("worker", 4, 2, "2")), "6"),  # mins (1+4), then 1 more ps pod
        (_job(2, ("w", 4, None, "1")), "2"),  # no task minimum: the first minAvailable pods
    ],
    ids=["below-task-minimums", "equal", "above-task-minimums", "no-task-minimum"],
)
def test_min_resources_follow_volcanos_calc(view: JobView, cpu: str) -> None:
    assert str(min_resources(view)["cpu"]) == cpu


def test_existing_podgroup_is_updated_only_when_the_job_changed() -> None:
    view = JobView.from_dict(PARTITIONED)
    existing = build_podgroup(PARTITIONED, view)
    # The API server fills defaults in; that is no change.
    existing["spec"]["subGroupPolicy"][0]["networkTopology"]["mode"] = "hard"
    assert updated_podgroup(existing, view) is None
    spec = {**PARTITIONED["spec"], "minAvailable": 8}
    grown = JobView.from_dict(dict(PARTITIONED, spec=spec))
    body = updated_podgroup(existing, grown)
    assert body is not None
    assert body["spec"]["minMember"] == 8
    assert body["spec"]["minResources"]["cpu"] == "32"
