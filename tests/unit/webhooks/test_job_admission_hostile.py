"""Job admission under hostile input: wrong types and wrong kinds are 4xx denials, never 5xx.

Reviews go through ``handle_review`` (the wire function the Flask app calls), so an exception
inside the rules would show as the ``InternalError`` denial it turns into.
"""

from __future__ import annotations

import base64
import copy
from typing import Any

import orjson
import pytest

from webhooks import jobs
from webhooks.admission import handle_review
from webhooks.jobs.rules import validate_create
from webhooks.router import AdmissionRouter

JSON = dict[str, Any]
OPEN = {"metadata": {"name": "default"}, "status": {"state": "Open"}}


def _job(**spec: Any) -> JSON:
    base: JSON = {
        "minAvailable": 2,
        "queue": "default",
        "tasks": [
            {
                "name": "w",
                "replicas": 2,
                "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}},
            }
        ],
    }
    base.update(spec)
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "j", "namespace": "n"},
        "spec": base,
    }


def _with_task(**fields: Any) -> JSON:
    job = _job()
    job["spec"]["tasks"][0].update(fields)
    return job


def _review(path: str, obj: Any, operation: str = "CREATE") -> JSON:
    router = AdmissionRouter()
    jobs.register(router, {"default": OPEN}.get)
    request = {"uid": "u-1", "operation": operation, "object": obj}
    body = orjson.dumps(
        {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}
    )
    status, payload = handle_review(body, "application/json", router.get(path).func)
    assert status == 200
    response: JSON = payload["response"]
    assert response["uid"] == "u-1"
    return response


_resources = {"spec": {"containers": [{"name": "c", "resources": {"requests": "x"}}]}}
WRONG_TYPES = [
    ({**_job(), "spec": "x"}, "spec: must be an object"),
    ({**_job(), "metadata": ["x"]}, "metadata: must be an object"),
    (_job(tasks="x"), "spec.tasks: must be a list"),
    (_job(tasks=["x"]), "spec.tasks[0]: must be an object"),
    (_with_task(replicas="2"), "spec.tasks[0].replicas: must be an integer"),
    (_with_task(name=7), "spec.tasks[0].name: must be a string"),
    (_with_task(template="x"), "spec.tasks[0].template: must be an object"),
    (
        _with_task(template=_resources),
        "spec.tasks[0].template.spec.containers[0].resources.requests: must be an object",
    ),
    (
        _with_task(policies=[{"event": ["PodFailed"], "action": "AbortJob"}]),
        "spec.tasks[0].policies[0].event: must be a string",
    ),
    (
        _job(policies=[{"exitCode": "3", "action": "AbortJob"}]),
        "spec.policies[0].exitCode: must be an integer",
    ),
    (_with_task(dependsOn={"name": "a"}), "spec.tasks[0].dependsOn.name: must be a list"),
    (_job(plugins="svc"), "spec.plugins: must be an object"),
    (_job(plugins={"svc": "x"}), "spec.plugins[svc]: must be a list"),
    (_job(volumes=[1]), "spec.volumes[0]: must be an object"),
    (_job(minAvailable="1"), "spec.minAvailable: must be an integer"),
]
WRONG_IDS = ["spec", "metadata", "tasks", "task", "replicas", "task-name", "template",
             "resources", "event", "exit-code", "depends-on", "plugins", "plugin-args",
             "volume", "min-available"]  # fmt: skip


@pytest.mark.parametrize("path", ["/jobs/mutate", "/jobs/validate"])
@pytest.mark.parametrize(("body", "message"), WRONG_TYPES, ids=WRONG_IDS)
def test_a_wrong_type_is_a_4xx_denial_naming_the_field(path: str, body: JSON, message: str) -> None:
    response = _review(path, body)
    assert response["allowed"] is False
    assert response["status"]["code"] == 400
    assert response["status"]["reason"] != "InternalError"
    assert message in response["status"]["message"]
    assert "patch" not in response


def test_two_unnamed_tasks_are_named_by_the_mutating_webhook_not_denied() -> None:
    job = _job(tasks=[{"replicas": 1, "template": {}}, {"replicas": 1, "template": {}}])
    response = _review("/jobs/mutate", job)
    assert response["allowed"] is True
    tasks = next(op for op in orjson.loads(base64.b64decode(response["patch"]))
                 if op["path"] == "/spec/tasks")["value"]  # fmt: skip
    assert [t["name"] for t in tasks] == ["default0", "default1"]


@pytest.mark.parametrize("path", ["/jobs/mutate", "/jobs/validate"])
def test_each_endpoint_refuses_kinds_it_does_not_serve(path: str) -> None:
    hypernode = {"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode",
                 "metadata": {"name": "s0"}, "spec": {"tier": 1, "members": []}}  # fmt: skip
    response = _review(path, hypernode)
    assert response["allowed"] is False
    assert "patch" not in response
    assert "HyperNode" in response["status"]["message"]


# Denials Volcano's webhook makes, and where Volcano has a message, ours contains it.
VOLCANO = [
    (_job(tasks=[]), "No task specified in job spec"),
    (_with_task(minAvailable=3), "'minAvailable' is greater than 'replicas' in task: w, job: j"),
    (_job(minAvailable=5), "job 'minAvailable' should not be greater than total replicas in tasks"),
    (_job(plugins={"nope": []}), "unable to find job plugin: nope"),
    (_job(plugins={"mpi": []}), "The specified mpi master task was not found"),
    (
        _job(policies=[{"event": "PodFailed", "exitCode": 1, "action": "AbortJob"}]),
        "must not specify event and exitCode simultaneously",
    ),
    (_job(policies=[{"exitCode": 0, "action": "AbortJob"}]), "0 is not a valid error code"),
    (_job(policies=[{"event": "Nope", "action": "AbortJob"}]), "invalid policy event"),
    (_job(policies=[{"event": "PodFailed", "action": "Nope"}]), "invalid policy action"),
    (
        _job(
            policies=[
                {"event": "*", "action": "AbortJob"},
                {"event": "PodFailed", "action": "RestartJob"},
            ]
        ),
        "if there's * here, no other policy should be here",
    ),
    (
        _job(networkTopology={"highestTierAllowed": 1, "highestTierName": "rack"}),
        "must not specify 'highestTierAllowed' and 'highestTierName' in networkTopology "
        "simultaneously",
    ),
    (
        _with_task(replicas=8, partitionPolicy={"totalPartitions": 3, "partitionSize": 4}),
        "'Replicas' are not equal to TotalPartitions*PartitionSize in task: w, job: j",
    ),
    (
        _job(volumes=[{"mountPath": "/d"}]),
        "either VolumeClaim or VolumeClaimName must be specified",
    ),
    (_job(queue="missing"), 'unable to find job queue: queue.scheduling.volcano.sh "missing"'),
    (
        _job(
            minAvailable=1,
            tasks=[
                {"name": "a", "replicas": 1, "template": {}, "dependsOn": {"name": ["b"]}},
                {"name": "b", "replicas": 1, "template": {}, "dependsOn": {"name": ["a"]}},
            ],
        ),
        "job has dependencies between tasks, but doesn't form a directed acyclic graph(DAG)",
    ),
]
VOLCANO_IDS = ["no-tasks", "task-min", "job-min", "plugin", "mpi-master", "event-and-code",
               "code-0", "event", "action", "star", "tiers", "partition", "volume", "queue",
               "cycle"]  # fmt: skip


@pytest.mark.parametrize(("body", "volcano"), VOLCANO, ids=VOLCANO_IDS)
def test_denials_contain_volcanos_message(body: JSON, volcano: str) -> None:
    response = _review("/jobs/validate", body)
    assert response["allowed"] is False
    assert volcano in response["status"]["message"]


def _cpu(requests: Any, limits: Any = None) -> JSON:
    resources: JSON = {"requests": {"cpu": requests}}
    if limits is not None:
        resources["limits"] = {"cpu": limits}
    return {"spec": {"containers": [{"name": "c", "resources": resources}]}}


AT = "spec.tasks[0].template.spec.containers[0].resources"
ADMITTED_BEFORE = [
    (
        _with_task(template=_cpu("-1")),
        f'{AT}.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0',
    ),
    (
        _with_task(template=_cpu("2", "1")),
        f'{AT}.requests[cpu]: Invalid value: "2": must be less than or equal to cpu limit of 1',
    ),
    (_with_task(template=_cpu("lots")), f'{AT}.requests[cpu]: Invalid value: "lots"'),
    (_with_task(dependsOn={"name": ["ghost"]}), "spec.tasks[0].dependsOn.name[0]: Not found"),
    (_job(minSuccess=3), "spec.minSuccess: Invalid value: 3"),
]


@pytest.mark.parametrize(("body", "fragment"), ADMITTED_BEFORE,
                         ids=["negative-cpu", "request-over-limit", "bad-quantity",
                              "depends-on-ghost", "min-success"])  # fmt: skip
def test_meaningless_specs_are_denied_naming_the_field(body: JSON, fragment: str) -> None:
    problems = validate_create(body, {"default": OPEN}.get)
    assert any(fragment in p for p in problems), problems


def test_every_plugin_volcano_ships_is_allowed_without_a_warning() -> None:
    plugins = {name: [] for name in ("env", "svc", "ssh", "pytorch", "tensorflow", "ray",
                                      "hcclrank")}  # fmt: skip
    response = _review("/jobs/validate", _job(plugins=plugins))
    assert response["allowed"] is True
    assert "warnings" not in response


def test_a_valid_job_is_still_admitted_and_defaulted() -> None:
    job = copy.deepcopy(_job(queue=""))
    assert _review("/jobs/validate", _job())["allowed"] is True
    response = _review("/jobs/mutate", job)
    assert response["allowed"] is True
    ops = orjson.loads(base64.b64decode(response["patch"]))
    assert {"op": "add", "path": "/spec/queue", "value": "default"} in ops


def test_a_duplicated_task_name_is_left_to_the_validating_webhooks_words() -> None:
    task = {"name": "w", "replicas": 1, "template": {}}
    body = _job(tasks=[task, dict(task)])
    assert _review("/jobs/mutate", body)["allowed"] is True
    denied = _review("/jobs/validate", body)
    assert "spec.tasks[1].name: Duplicate value: 'w'" in denied["status"]["message"]
