"""Hostile Volcano Jobs through the real API server with the manager's webhooks installed.

Issue 42's shapes: a Job asking for 2^31-1 pods, Jobs with wrong types (the mutating
webhook runs before the CRD schema), a Job whose plugin objects' names are taken, and a Job
naming a PriorityClass that does not exist. After each, a 2-pod probe gang still binds and
the manager's worker stays within the Deployment's memory limit under its address-space
limit; no answer is a 5xx. No verdict depends on wall-clock time: the probe's deadline
(``gang_bind_seconds``, 30 s) only bounds a failure; the bind time is printed.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.hostile.conftest import Hostile, memory_limit
from tests.integration.scheduler.conftest import wait_for
from volcano_py.api import resources as R
from volcano_py.kube.errors import ApiError, NotFound

pytestmark = pytest.mark.timeout(600)

INT32_MAX = 2**31 - 1


def vcjob(name: str, namespace: str, **spec: Any) -> dict[str, Any]:
    task = {
        "name": "t0",
        "replicas": 2,
        # never placeable, so the Job's pods never compete with the probe gang
        "template": {"spec": {"nodeSelector": {"hostile-jobs/never": "true"},
                              "containers": [{"name": "c", "image": "busybox"}]}},
    }  # fmt: skip
    body: dict[str, Any] = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"minAvailable": 1, "schedulerName": "volcano", "tasks": [task]},
    }
    body["spec"].update(spec)
    return body


def queue_ready(hostile: Hostile) -> None:
    """The scheduler makes the default Queue at start; admission needs it (generous wait)."""

    def exists() -> bool:
        try:
            hostile.client.get(R.QUEUES, "default")
        except NotFound:
            return False
        return True

    wait_for(exists, timeout=120, interval=0.5)


def still_serving(hostile: Hostile, namespace: str) -> None:
    """The probe gang binds (a generous deadline), the worker fits its limit, no crash."""
    seconds = hostile.gang_bind_seconds(namespace)
    rss = hostile.worker_rss()
    print(f"hostile jobs: probe gang bound in {seconds:.2f} s, worker RSS {rss / 2**20:.0f} MiB")
    assert rss < memory_limit(), f"worker RSS {rss / 2**20:.0f} MiB"
    assert hostile.manager.proc.poll() is None, hostile.manager.log()[-3000:]


def events_of(hostile: Hostile, namespace: str, name: str) -> list[dict[str, Any]]:
    selector = f"involvedObject.name={name}"
    items: list[dict[str, Any]] = hostile.client.list(R.EVENTS, namespace, field_selector=selector)[
        "items"
    ]
    return items


def job_pods(hostile: Hostile, namespace: str, name: str) -> list[dict[str, Any]]:
    selector = f"volcano.sh/job-name={name}"
    return list(hostile.client.list(R.PODS, namespace, label_selector=selector)["items"])


def test_int32_max_replicas_create_pods_in_bounded_batches_and_the_gang_binds(
    hostile: Hostile, namespace: str
) -> None:
    queue_ready(hostile)
    body = vcjob("huge", namespace)
    body["spec"]["tasks"][0]["replicas"] = INT32_MAX
    hostile.client.create(R.VCJOBS, body)  # Volcano's range: admitted
    wait_for(lambda: len(job_pods(hostile, namespace, "huge")) >= 10, timeout=120)
    still_serving(hostile, namespace)
    status = hostile.client.get(R.VCJOBS, "huge", namespace).get("status") or {}
    assert status.get("state", {}).get("phase") == "Pending"
    hostile.client.delete(R.VCJOBS, "huge", namespace)
    still_serving(hostile, namespace)


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ({"tasks": "x"}, "spec.tasks"),
        ({"tasks": [{"name": "t0", "replicas": "2", "template": {}}]}, "spec.tasks[0].replicas"),
        ({"policies": [{"exitCode": "3", "action": "RestartJob"}]}, "spec.policies[0].exitCode"),
        ({"plugins": {"svc": "x"}}, "spec.plugins"),
    ],
    ids=["tasks", "replicas", "exit-code", "plugin-args"],
)
def test_wrong_types_are_a_4xx_naming_the_field(
    hostile: Hostile, namespace: str, spec: dict[str, Any], field: str
) -> None:
    queue_ready(hostile)
    body = vcjob("typo", namespace, **spec)
    with pytest.raises(ApiError) as err:
        hostile.client.create(R.VCJOBS, body)
    print(f"hostile jobs: {field}: {err.value.status} {err.value.message}")
    assert 400 <= err.value.status < 500, err.value
    assert field in err.value.message
    assert "internal error" not in err.value.message
    still_serving(hostile, namespace)


def test_a_taken_plugin_object_name_is_a_warning_not_an_adoption(
    hostile: Hostile, namespace: str
) -> None:
    queue_ready(hostile)
    theirs = {"metadata": {"name": "clash-ssh", "namespace": namespace},
              "stringData": {"id_rsa": "not yours"}}  # fmt: skip
    hostile.client.create(R.SECRETS, theirs, namespace)
    hostile.client.create(R.VCJOBS, vcjob("clash", namespace, plugins={"ssh": [], "svc": []}))

    def plugin_warning() -> list[dict[str, Any]]:
        return [e for e in events_of(hostile, namespace, "clash") if e["reason"] == "PluginError"]

    (warning, *_) = wait_for(plugin_warning, timeout=120, interval=0.5)
    assert "clash-ssh" in warning["message"]
    secret = hostile.client.get(R.SECRETS, "clash-ssh", namespace)
    assert not secret["metadata"].get("ownerReferences")  # not adopted
    assert job_pods(hostile, namespace, "clash") == []  # nothing mounts it
    still_serving(hostile, namespace)


def test_a_missing_priority_class_is_a_warning_and_a_reason_on_the_job(
    hostile: Hostile, namespace: str
) -> None:
    queue_ready(hostile)
    hostile.client.create(R.VCJOBS, vcjob("nopc", namespace, priorityClassName="no-such-pc"))

    def reason() -> str:
        state = (hostile.client.get(R.VCJOBS, "nopc", namespace).get("status") or {}).get(
            "state"
        ) or {}
        return str(state.get("reason") or "")

    wait_for(lambda: reason() == "PriorityClassNotFound", timeout=120, interval=0.5)
    warnings = [e for e in events_of(hostile, namespace, "nopc")
                if e["reason"] == "PriorityClassNotFound"]  # fmt: skip
    assert warnings
    assert "no-such-pc" in warnings[0]["message"]
    still_serving(hostile, namespace)
