"""Volcano Job admission end to end: the API server calls the whole process over TLS.

The session's manager serves ``/jobs/validate`` and ``/jobs/mutate``; ``install_webhook``
registers manifests/' Validating- and MutatingWebhookConfiguration pointing at it (each
entry at its own path). An invalid Job is denied by the API server with the field named; a
valid one without schedulerName, minAvailable or task names comes back from the API with
Volcano's defaults, which only the mutating webhook fills (the CRD's schema defaults cover
queue and maxRetry, not these).
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.e2e.conftest import ManagerProcess
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient, resource_path
from volcano_py.kube.errors import ApiError, Conflict


def vcjob(name: str, namespace: str, tasks: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    """A ``batch.volcano.sh/v1alpha1`` Job with ``tasks`` and any other ``spec`` fields."""
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"tasks": tasks, **spec},
    }


def task(replicas: int, name: str | None = None) -> dict[str, Any]:
    """A task of ``replicas`` pause pods (``name`` left out when None)."""
    pod = {"containers": [{"name": "main", "image": "pause", "resources": {}}]}
    body: dict[str, Any] = {"replicas": replicas, "template": {"spec": pod}}
    if name is not None:
        body["name"] = name
    return body


def admitted_dry_run(client: KubeClient, namespace: str) -> dict[str, Any] | None:
    """A dry-run create of a valid Job: the stored form once both webhooks answer, else None.

    Until the API server has picked up the configurations (asynchronously) the answer lacks
    the mutating webhook's defaults; until the manager's Queue cache holds the ``default``
    queue (the scheduler creates it) the validating webhook denies ``spec.queue``.
    """
    body = vcjob("probe", namespace, [task(1, "probe")])
    try:
        answer = client.request(
            "POST",
            resource_path(R.VCJOBS, namespace),
            query={"dryRun": "All"},
            body=body,
        )
    except ApiError as e:
        if "spec.queue" in e.message:
            return None
        raise
    return answer if answer["spec"].get("schedulerName") else None


@pytest.fixture
def admission(manager: ManagerProcess, client: KubeClient, namespace: str) -> str:
    """``namespace``, once the API server sends Jobs created there to the manager."""
    deadline = time.monotonic() + 60
    while admitted_dry_run(client, namespace) is None:
        assert time.monotonic() < deadline, (
            "the Job webhooks never answered:\n" + manager.log()[-4000:]
        )
        time.sleep(0.5)
    return namespace


def test_an_invalid_job_is_denied_by_the_api_server_naming_the_field(
    admission: str, client: KubeClient
) -> None:
    too_many = vcjob("too-many", admission, [task(2, "worker")], minAvailable=3)
    with pytest.raises(ApiError) as info:
        client.create(R.VCJOBS, too_many, admission)
    assert "validatejob.volcano.sh" in info.value.message
    assert "spec.minAvailable: Invalid value: 3" in info.value.message

    twice = vcjob("twice", admission, [task(1, "worker"), task(1, "worker")])
    with pytest.raises(ApiError) as info:
        client.create(R.VCJOBS, twice, admission)
    assert "spec.tasks[1].name: Duplicate value: 'worker'" in info.value.message

    # nothing was stored
    names = [j["metadata"]["name"] for j in client.list(R.VCJOBS, admission)["items"]]
    assert names == []


def test_a_valid_job_comes_back_with_volcanos_defaults_from_the_mutating_webhook(
    admission: str, client: KubeClient
) -> None:
    client.create(R.VCJOBS, vcjob("defaults", admission, [task(2), task(1, "ps")]), admission)
    try:
        spec = client.get(R.VCJOBS, "defaults", admission)["spec"]
        assert spec["schedulerName"] == "volcano"
        assert spec["queue"] == "default"
        assert spec["maxRetry"] == 3
        assert spec["minAvailable"] == 3  # the tasks' replicas summed
        assert [t["name"] for t in spec["tasks"]] == ["default0", "ps"]
        assert [t["minAvailable"] for t in spec["tasks"]] == [2, 1]
    finally:
        client.delete(R.VCJOBS, "defaults", admission)


def test_an_update_changing_a_frozen_field_is_denied(admission: str, client: KubeClient) -> None:
    client.create(R.VCJOBS, vcjob("frozen", admission, [task(1, "worker")]), admission)
    try:
        for _ in range(20):  # the job controller writes the Job too: retry a stale version
            job = client.get(R.VCJOBS, "frozen", admission)
            job["spec"]["schedulerName"] = "other"
            with pytest.raises(ApiError) as info:
                client.update(R.VCJOBS, job)
            if not isinstance(info.value, Conflict):
                break
        assert "spec: Forbidden" in info.value.message
        assert client.get(R.VCJOBS, "frozen", admission)["spec"]["schedulerName"] == "volcano"
    finally:
        client.delete(R.VCJOBS, "frozen", admission)
