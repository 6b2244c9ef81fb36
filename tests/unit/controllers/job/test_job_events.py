"""Events and status as Volcano writes them: PodGroupPending, TaskFailed, runningDuration."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.unit.controllers.job.jobfakes import (
    harness,
    job_pod,
    load_job,
    podgroup_for,
    with_phase,
)
from volcano_py.controllers.job.controller import pod_event, task_failed
from volcano_py.controllers.job.status import go_duration

JOB = load_job("""
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: job, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  minAvailable: 2
  tasks:
    - name: worker
      replicas: 2
      maxRetry: 2
      template:
        spec:
          containers: [{name: c, image: nginx}]
""")
REASON = "6/6 tasks in gang unschedulable: 6 Insufficient cpu"


def _unschedulable(job: dict[str, Any], message: str = REASON) -> dict[str, Any]:
    pg = podgroup_for(job, "Pending")
    pg["status"]["conditions"] = [
        {"type": "Scheduled", "status": "True", "lastTransitionTime": "2026-01-01T00:00:01Z"},
        {"type": "Unschedulable", "status": "True", "message": message,
         "lastTransitionTime": "2026-01-01T00:00:05Z"},
    ]  # fmt: skip
    return pg


def test_an_unschedulable_podgroup_is_one_podgroup_pending_warning_on_the_job() -> None:
    job = with_phase(JOB, "Pending", minAvailable=2)
    h = harness(jobs=(job,), podgroups=(_unschedulable(job),))
    h.run()
    h.run()  # the same condition again: no second Event
    assert [e for e in h.recorder.events if e[1] == "PodGroupPending"] == [
        ("Warning", "PodGroupPending", f"PodGroup ns:job unschedulable, reason: {REASON}")
    ]


def test_a_new_reason_is_reported_and_a_scheduled_podgroup_is_not() -> None:
    job = with_phase(JOB, "Pending", minAvailable=2)
    h = harness(jobs=(job,), podgroups=(_unschedulable(job),))
    h.run()
    changed = _unschedulable(job, "2/2 tasks in gang unschedulable")
    h.caches.podgroups.put(f"ns/{changed['metadata']['name']}", changed)
    h.run()
    scheduled = copy.deepcopy(changed)
    scheduled["status"]["conditions"][0]["lastTransitionTime"] = "2026-01-01T00:01:00Z"
    h.caches.podgroups.put(f"ns/{scheduled['metadata']['name']}", scheduled)
    h.run()
    messages = [m for _, r, m in h.recorder.events if r == "PodGroupPending"]
    assert len(messages) == 2
    assert messages[1].endswith("reason: 2/2 tasks in gang unschedulable")


def _restarted(phase: str, restarts: int) -> dict[str, Any]:
    pod = job_pod(JOB, "worker", 0, phase)
    pod["status"]["containerStatuses"] = [{"name": "c", "restartCount": restarts}]
    return pod


@pytest.mark.parametrize(
    ("max_retry", "restarts", "failed"),
    [(2, 2, True), (2, 1, False), (0, 3, True), (0, 2, False), (-1, 100, False)],
    ids=["at-max", "below", "unset-means-3", "unset-below", "unlimited"],
)
def test_task_failed_counts_restarts_against_max_retry(
    max_retry: int, restarts: int, failed: bool
) -> None:
    assert task_failed([_restarted("Running", restarts)], max_retry) is failed


def test_a_running_pod_past_max_retry_raises_task_failed_unless_its_phase_just_changed() -> None:
    old, new = _restarted("Running", 1), _restarted("Running", 2)
    assert pod_event(old, new, [new], 2) == ("TaskFailed", None)
    assert pod_event(_restarted("Pending", 1), new, [new], 2) == ("PodRunning", None)
    assert pod_event(old, new, [new], None) == ("OutOfSync", None)


def test_status_writes_carry_running_duration_from_creation_to_the_last_transition() -> None:
    job = with_phase(JOB, "Pending", minAvailable=2)
    job["status"]["state"]["lastTransitionTime"] = "2026-01-01T00:01:30Z"
    h = harness(jobs=(job,), podgroups=(podgroup_for(job, "Inqueue"),))
    h.run()
    (status,) = h.status_writes()
    assert status["runningDuration"] == "1m30s"


@pytest.mark.parametrize(
    ("seconds", "text"), [(0, "0s"), (59, "59s"), (90, "1m30s"), (3600, "1h0m0s"), (-5, "-5s")]
)
def test_go_duration_prints_as_go_does(seconds: int, text: str) -> None:
    assert go_duration(seconds) == text


def test_a_missing_priority_class_is_one_warning_and_a_reason_on_the_job_not_a_retry_loop() -> None:
    from volcano_py.controllers.job.interfaces import Request
    from volcano_py.controllers.job.sync_step import PRIORITY_CLASS_RECHECK_S
    from volcano_py.kube.errors import Forbidden

    job = with_phase(JOB, "Pending", minAvailable=2)
    h = harness(jobs=(job,), podgroups=(podgroup_for(job, "Inqueue"),))
    refusal = 'pods "job-worker-0" is forbidden: no PriorityClass with name gone was found'
    h.client.fail("create", Forbidden(403, "Forbidden", refusal))
    h.run()  # no exception: nothing for the queue's backoff to retry
    assert len(h.client.of("create", "pods")) == 1  # slow start: one request, not one per pod
    (warning,) = [e for e in h.recorder.events if e[1] == "PriorityClassNotFound"]
    assert warning[0] == "Warning"
    assert "no PriorityClass with name gone" in warning[2]
    (status,) = h.status_writes()
    assert status["state"]["reason"] == "PriorityClassNotFound"
    assert "no PriorityClass with name gone" in status["state"]["message"]
    assert (Request("ns/job"), PRIORITY_CLASS_RECHECK_S) in h.delayed
    h.client.calls.clear()
    h.client.fail("create", Forbidden(403, "Forbidden", refusal))
    h.run()  # the next look: still missing, nothing new to say
    assert h.status_writes() == []
    assert len([e for e in h.recorder.events if e[1] == "PriorityClassNotFound"]) == 1
