"""Volcano's Job admission rules: denials name the field; defaults as a JSON patch."""

from __future__ import annotations

import base64
import copy
from pathlib import Path
from typing import Any

import orjson
import pytest

from webhooks import jobs
from webhooks.jobs.rules import default_patch, validate_create, validate_update
from webhooks.router import AdmissionRouter

JSON = dict[str, Any]


def job(**spec: Any) -> JSON:
    base: JSON = {
        "minAvailable": 2,
        "queue": "default",
        "tasks": [{"name": "w", "replicas": 2, "template": {"spec": {"containers": [{}]}}}],
    }
    base.update(spec)
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": "j", "namespace": "n"}, "spec": base}  # fmt: skip


def task(name: str = "w", replicas: int = 2, **more: Any) -> JSON:
    return {"name": name, "replicas": replicas, "template": {}, **more}


OPEN = {"metadata": {"name": "default"}, "status": {"state": "Open"}}


def queues(*items: JSON) -> Any:
    by_name = {q["metadata"]["name"]: q for q in items}
    return by_name.get


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (job(tasks=[]), "spec.tasks: Required value"),
        (job(tasks=[task(minAvailable=3)]), "spec.tasks[0].minAvailable: Invalid value: 3"),
        (job(tasks=[task(), task()]), "spec.tasks[1].name: Duplicate value: 'w'"),
        (job(minAvailable=5), "spec.minAvailable: Invalid value: 5"),
        (job(policies=[{"event": "PodFailed", "exitCode": 1, "action": "AbortJob"}]),
         "spec.policies[0]: must not specify event and exitCode"),
        (job(policies=[{"event": "OutOfSync", "action": "AbortJob"}]),
         "spec.policies[0].event: Unsupported value: 'OutOfSync'"),
        (job(policies=[{"event": "PodFailed", "action": "SyncJob"}]),
         "spec.policies[0].action: Unsupported value: 'SyncJob'"),
        (job(policies=[{"exitCode": 0, "action": "AbortJob"}]), "spec.policies[0].exitCode"),
        (job(policies=[{"event": "*", "action": "AbortJob"},
                       {"event": "PodFailed", "action": "RestartJob"}]),
         "no other event"),
        (job(tasks=[task(policies=[{"action": "AbortJob"}])]),
         "spec.tasks[0].policies[0]: either event or exitCode"),
        (job(tasks=[task(replicas=8, partitionPolicy={"totalPartitions": 3, "partitionSize": 4})]),
         "spec.tasks[0].replicas: Invalid value: 8: must equal totalPartitions x partitionSize"),
        (job(tasks=[task(replicas=8, minAvailable=6, partitionPolicy={
            "totalPartitions": 2, "partitionSize": 4, "minPartitions": 1})]),
         "spec.tasks[0].minAvailable: Invalid value: 6: must equal minPartitions x partitionSize"),
        (job(networkTopology={"highestTierAllowed": 1, "highestTierName": "rack"}),
         "spec.networkTopology: must not specify"),
        (job(tasks=[task("x" * 62)]), f"spec.tasks[0].name: pod name 'j-{'x' * 62}-0'"),
        (job(tasks=[task("a", dependsOn={"name": ["b"]}), task("b", dependsOn={"name": ["a"]})],
             minAvailable=1), "directed acyclic graph"),
        (job(volumes=[{"mountPath": "/d"}]), "spec.volumes[0]: either volumeClaim"),
        (job(queue="missing"), "spec.queue: Not found: 'missing'"),
    ],
    ids=["no-tasks", "task-min-over-replicas", "duplicate-task", "min-over-total",
         "event-and-exit-code", "internal-event", "internal-action", "exit-code-zero",
         "star-not-alone", "neither", "partition-arithmetic", "partition-min", "two-tiers",
         "pod-name", "cycle", "volume", "missing-queue"],
)  # fmt: skip
def test_validate_create_denies_naming_the_field(body: JSON, fragment: str) -> None:
    problems = validate_create(body, queues(OPEN))
    assert any(fragment in p for p in problems), problems


def test_validate_create_allows_the_guides_partitioned_job() -> None:
    body = job(minAvailable=4, tasks=[task("t0", replicas=8, partitionPolicy={
        "totalPartitions": 2, "partitionSize": 4,
        "networkTopology": {"mode": "hard", "highestTierAllowed": 1}})])  # fmt: skip
    assert validate_create(body, queues(OPEN)) == []


@pytest.mark.parametrize(
    ("queue", "children", "fragment"),
    [
        ({"metadata": {"name": "default"}, "status": {"state": "Closed"}}, 0, "Open queue"),
        ({"metadata": {"name": "default"}, "status": {"state": "Open"}}, 2, "2 child queues"),
    ],
    ids=["closed", "not-a-leaf"],
)
def test_validate_create_checks_the_queue(queue: JSON, children: int, fragment: str) -> None:
    problems = validate_create(job(), queues(queue), lambda name: children)
    assert any(fragment in p for p in problems), problems


def test_validate_update_allows_scaling_and_denies_other_changes() -> None:
    old = job()
    scaled = copy.deepcopy(old)
    scaled["spec"]["tasks"][0]["replicas"] = 4
    scaled["spec"]["minAvailable"] = 3
    assert validate_update(old, scaled) == []
    moved = copy.deepcopy(old)
    moved["spec"]["queue"] = "other"
    assert validate_update(old, moved)[0].startswith("spec: Forbidden")
    grown = copy.deepcopy(old)
    grown["spec"]["tasks"].append(task("x"))
    assert validate_update(old, grown) == [
        "spec.tasks: Forbidden: job updates may not add or remove tasks"
    ]


def test_default_patch_fills_volcanos_defaults() -> None:
    body = job(minAvailable=0, queue="", tasks=[
        {"replicas": 8, "template": {"spec": {"hostNetwork": True}},
         "partitionPolicy": {"totalPartitions": 2, "partitionSize": 4, "minPartitions": 1}},
        task("ps", replicas=1),
    ])  # fmt: skip
    patch = {op["path"]: op["value"] for op in default_patch(body)}
    assert patch["/spec/queue"] == "default"
    assert patch["/spec/schedulerName"] == "volcano"
    assert patch["/spec/maxRetry"] == 3
    assert patch["/spec/minAvailable"] == 9  # replicas where no task minimum is set yet
    first, second = patch["/spec/tasks"]
    assert (first["name"], first["minAvailable"], first["maxRetry"]) == ("default0", 4, 3)
    assert first["template"]["spec"]["dnsPolicy"] == "ClusterFirstWithHostNet"
    assert (second["name"], second["minAvailable"]) == ("ps", 1)


def test_default_patch_adds_the_plugins_framework_plugins_need() -> None:
    patch = {op["path"]: op["value"] for op in default_patch(job(plugins={"mpi": ["--port=2222"]}))}
    assert patch["/spec/plugins"] == {"mpi": ["--port=2222"], "svc": [], "ssh": []}
    own = {"pytorch": ["--master=m"], "svc": ["--disable-network-policy=true"]}
    assert "/spec/plugins" not in {op["path"] for op in default_patch(job(plugins=own))}
    patch = {op["path"]: op["value"] for op in default_patch(job(plugins={"tensorflow": []}))}
    assert patch["/spec/plugins"] == {"tensorflow": [], "svc": []}
    assert "/spec/plugins" not in {op["path"] for op in default_patch(job(plugins={"env": []}))}


def test_admission_functions_through_the_router() -> None:
    router = AdmissionRouter()
    jobs.register(router, queues(OPEN))
    bad = job(minAvailable=5)
    review = {"request": {"uid": "u", "operation": "CREATE", "object": bad}}
    response = router.get("/jobs/validate").func(review)
    assert response["allowed"] is False
    assert "spec.minAvailable" in response["status"]["message"]
    with_plugins = job(plugins={"ssh": [], "ray": []})
    response = router.get("/jobs/validate").func({"request": {"operation": "CREATE",
                                                              "object": with_plugins}})  # fmt: skip
    assert response["allowed"] is True
    assert "warnings" not in response  # every plugin Volcano ships runs here
    mutated = router.get("/jobs/mutate").func({"request": {"operation": "CREATE",
                                                           "object": job(queue="")}})  # fmt: skip
    assert mutated["patchType"] == "JSONPatch"
    ops = orjson.loads(base64.b64decode(mutated["patch"]))
    assert {"op": "add", "path": "/spec/queue", "value": "default"} in ops
    assert [s.name for s in router] == ["mutatejob.volcano.sh", "validatejob.volcano.sh"]


def test_validate_command_checks_vcjobs_offline(tmp_path: Any) -> None:
    from volcano_py.commands.validate import read_documents, validate_documents

    path = tmp_path / "jobs.yaml"
    good = job(plugins={"svc": [], "ray": []})
    good["metadata"]["name"] = "good"
    bad = job(minAvailable=9)
    bad["metadata"]["name"] = "bad"
    path.write_text(orjson.dumps(good).decode() + "\n---\n" + orjson.dumps(bad).decode())
    lines, denied = validate_documents(read_documents(str(path)), [])
    assert denied
    assert lines == [
        "OK good",
        "DENIED bad: spec.minAvailable: Invalid value: 9: must not be greater than the tasks' "
        "replicas (2) (job 'minAvailable' should not be greater than total replicas in tasks)",
    ]


def test_the_standalone_webhook_serves_every_path_the_manifests_register(tmp_path: Path) -> None:
    from volcano_py.cli import build_parser
    from volcano_py.commands.webhook import _build_app

    args = build_parser().parse_args(["webhook", "--no-cluster", "--cert-dir", str(tmp_path)])
    app = _build_app(args, use_cluster=False).test_client()
    request = {"uid": "u", "operation": "CREATE", "object": job(minAvailable=9)}
    review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}
    denied = app.post("/jobs/validate", json=review).get_json()["response"]
    assert denied["allowed"] is False
    assert "spec.minAvailable" in denied["status"]["message"]
    mutated = app.post("/jobs/mutate", json=review).get_json()["response"]
    assert mutated["allowed"] is True
    assert mutated["patchType"] == "JSONPatch"
