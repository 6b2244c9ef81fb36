"""Memory bounded by what exists: huge ``replicas`` cost a sync its pods plus one batch."""

from __future__ import annotations

import copy
import tracemalloc

import pytest

from tests.unit.controllers.job.jobfakes import (
    harness,
    job_pod,
    load_job,
    podgroup_for,
    with_phase,
)
from volcano_py.controllers.job.interfaces import Request
from volcano_py.controllers.job.podwork import MAX_CREATES_PER_SYNC
from volcano_py.kube.errors import Invalid

INT32_MAX = 2147483647


def _job(replicas: int, *, tasks: int = 1, plugins: str = "{}") -> dict:
    task_list = "\n".join(
        f"""    - name: t{i}
      replicas: {replicas}
      template:
        spec:
          containers: [{{name: c, image: nginx}}]"""
        for i in range(tasks)
    )
    text = f"""
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {{name: big}}
spec:
  minAvailable: 1
  plugins: {plugins}
  tasks:
{task_list}
"""
    return with_phase(load_job(text), "Pending", minAvailable=1)


@pytest.mark.parametrize("tasks", [1, 3], ids=["one-task", "three-tasks"])
def test_int32_max_replicas_create_one_bounded_batch_and_come_back(tasks: int) -> None:
    job = _job(INT32_MAX, tasks=tasks)
    h = harness(jobs=(job,), podgroups=(podgroup_for(job, "Inqueue"),))
    tracemalloc.start()
    try:
        h.run("ns/big")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    created = [c.name for c in h.client.of("create", "pods")]
    assert created == [f"big-t0-{i}" for i in range(MAX_CREATES_PER_SYNC)]
    assert (Request("ns/big"), 0.0) in h.delayed  # the rest in later syncs
    assert peak < 64 << 20  # the pods of one batch, not a list of 2^31 slots
    (status,) = h.status_writes()
    assert status["pending"] == MAX_CREATES_PER_SYNC


def test_a_later_sync_counts_what_exists_and_creates_the_next_batch() -> None:
    job = _job(INT32_MAX)
    existing = tuple(job_pod(job, "t0", i, "Running") for i in range(600))
    h = harness(jobs=(job,), pods=existing, podgroups=(podgroup_for(job, "Inqueue"),))
    h.run("ns/big")
    created = [c.name for c in h.client.of("create", "pods")]
    assert created[0] == "big-t0-600"
    assert len(created) == MAX_CREATES_PER_SYNC


def test_slow_start_stops_creating_after_a_batch_with_a_failure() -> None:
    job = _job(10)
    h = harness(jobs=(job,), podgroups=(podgroup_for(job, "Inqueue"),))
    rejected = Invalid(422, "Invalid", "spec.containers[0].image: Required value")
    calls: list[str] = []
    real_create = h.client.create

    def create(resource, body, namespace=None):  # type: ignore[no-untyped-def]
        calls.append(body["metadata"]["name"])
        if body["metadata"]["name"] == "big-t0-2":
            raise rejected
        return real_create(resource, body, namespace)

    h.client.create = create  # type: ignore[method-assign]
    with pytest.raises(RuntimeError, match="big-t0-2"):
        h.run("ns/big")
    # batches of 1 then 2: the failure in the second stops the sync at 3 requests, not 10
    assert calls == ["big-t0-0", "big-t0-1", "big-t0-2"]
    assert h.reasons() == ["FailedCreate"]


def test_pods_beyond_a_scaled_down_task_are_deleted_and_kept_ones_counted() -> None:
    job = _job(2)
    pods = tuple(job_pod(job, "t0", i, "Running") for i in range(4))
    odd = copy.deepcopy(pods[0])
    odd["metadata"]["name"] = "big-t0-01"  # not a slot name: never counted as index 1
    odd["metadata"]["uid"] = "pod-odd"
    h = harness(jobs=(job,), pods=(*pods, odd), podgroups=(podgroup_for(job, "Running"),))
    h.run("ns/big")
    deleted = sorted(c.name for c in h.client.of("delete", "pods"))
    assert deleted == ["big-t0-01", "big-t0-2", "big-t0-3"]
    assert h.client.of("create", "pods") == []


def test_svc_hosts_too_large_for_one_object_fail_the_plugin_step_naming_the_field() -> None:
    job = _job(INT32_MAX, plugins="{svc: []}")
    job["status"]["state"]["phase"] = "Pending"
    h = harness(jobs=(job,), podgroups=(podgroup_for(job, "Inqueue"),))
    with pytest.raises(Exception, match=r"spec\.tasks\[0\]\.replicas"):
        h.run("ns/big")
    (event,) = [e for e in h.recorder.events if e[1] == "PluginError"]
    assert event[0] == "Warning"
    assert "spec.tasks[0].replicas" in event[2]
    assert h.client.of("create", "configmaps") == []
