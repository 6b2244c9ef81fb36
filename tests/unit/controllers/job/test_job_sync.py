"""The vcjob reconcile: preloaded caches in, recorded client calls and Events out."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.unit.controllers.job.jobfakes import (
    harness,
    job_pod,
    load_job,
    podgroup_for,
    with_phase,
)
from volcano_py.kube.clock import FakeClock
from volcano_py.kube.errors import Invalid, NotFound

JOB = load_job("""
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: job}
spec:
  schedulerName: volcano
  minAvailable: 3
  queue: default
  tasks:
    - name: worker
      replicas: 3
      template:
        spec:
          containers: [{name: c, image: nginx, resources: {requests: {cpu: "1"}}}]
""")


def test_new_job_gets_pending_status_and_a_podgroup_but_no_pods() -> None:
    h = harness(jobs=(JOB,))
    h.run()
    assert h.client.verbs() == [  # the PodGroup first, so the scheduler can admit it sooner
        ("create", "podgroups", "job-uid-1"),
        ("update", "jobs/status", "job"),
    ]
    (status,) = h.status_writes()
    assert status["state"]["phase"] == "Pending"
    assert status["minAvailable"] == 3
    assert status["conditions"][0]["status"] == "Pending"
    pg = h.client.of("create", "podgroups")[0].body
    assert pg["spec"]["minMember"] == 3
    assert pg["spec"]["minResources"]["cpu"] == "3"
    assert pg["metadata"]["ownerReferences"][0]["uid"] == "uid-1"


def test_unsupported_plugins_are_named_in_one_warning_when_the_job_starts() -> None:
    # admitted with the webhook off: names Volcano does not know either
    job = {**JOB, "spec": {**JOB["spec"], "plugins": {"nope": [], "other": [], "env": []}}}
    h = harness(jobs=(job,))
    h.run()
    assert h.recorder.events[0] == (
        "Warning", "PluginError",
        "job plugins are not supported yet, the job runs without them: nope, other",
    )  # fmt: skip
    assert ("create", "podgroups", "job-uid-1") in h.client.verbs()


def test_pods_wait_while_the_podgroup_is_pending() -> None:
    job = with_phase(JOB, "Pending", minAvailable=3)
    h = harness(jobs=(job,), podgroups=(podgroup_for(job, "Pending"),))
    h.run()
    assert h.client.calls == []


def test_inqueue_podgroup_lets_every_pod_be_created_with_volcanos_names() -> None:
    job = with_phase(JOB, "Pending", minAvailable=3)
    h = harness(jobs=(job,), podgroups=(podgroup_for(job, "Inqueue"),))
    h.run()
    assert [c.name for c in h.client.of("create", "pods")] == [
        "job-worker-0", "job-worker-1", "job-worker-2",
    ]  # fmt: skip
    (status,) = h.status_writes()
    assert status["pending"] == 3
    assert status["taskStatusCount"] == {"worker": {"phase": {"Pending": 3}}}
    assert status["state"]["phase"] == "Pending"


def test_job_turns_running_when_min_available_pods_run_and_records_an_event() -> None:
    job = with_phase(JOB, "Pending", minAvailable=3)
    pods = tuple(job_pod(job, "worker", i, "Running") for i in range(3))
    h = harness(jobs=(job,), pods=pods, podgroups=(podgroup_for(job, "Running"),))
    h.run()
    assert h.client.of("create", "pods") == []
    (status,) = h.status_writes()
    assert status["state"]["phase"] == "Running"
    assert status["running"] == 3
    assert [c["status"] for c in status["conditions"]] == ["Running"]
    assert ("Normal", "JobPhaseChanged", "Job phase changed from Pending to Running") in (
        h.recorder.events
    )


def test_unchanged_status_is_not_written_again() -> None:
    job = with_phase(JOB, "Running", minAvailable=3, running=3,
                     taskStatusCount={"worker": {"phase": {"Running": 3}}})  # fmt: skip
    pods = tuple(job_pod(job, "worker", i, "Running") for i in range(3))
    h = harness(jobs=(job,), pods=pods, podgroups=(podgroup_for(job, "Running"),))
    h.run()
    assert h.client.calls == []


def test_all_pods_succeeded_completes_the_job() -> None:
    job = with_phase(JOB, "Running", minAvailable=3, running=3)
    pods = tuple(job_pod(job, "worker", i, "Succeeded") for i in range(3))
    h = harness(jobs=(job,), pods=pods, podgroups=(podgroup_for(job, "Running"),))
    h.run()
    assert h.status_writes()[-1]["state"]["phase"] == "Completed"


def test_finished_job_deletes_its_podgroup_and_keeps_finished_pods() -> None:
    job = with_phase(JOB, "Completed", minAvailable=3)
    pods = (job_pod(job, "worker", 0, "Succeeded"), job_pod(job, "worker", 1, "Running"))
    h = harness(jobs=(job,), pods=pods, podgroups=(podgroup_for(job, "Running"),))
    h.run()
    assert h.client.of("delete", "pods")[0].name == "job-worker-1"
    assert len(h.client.of("delete", "pods")) == 1
    assert [c.name for c in h.client.of("delete", "podgroups")] == ["job-uid-1"]
    assert h.status_writes()[-1]["version"] == 1


def test_surplus_pods_are_deleted_but_never_a_pod_another_owner_controls() -> None:
    job = with_phase(JOB, "Running", minAvailable=3)
    ours = tuple(job_pod(job, "worker", i, "Running") for i in range(4))
    foreign = job_pod(job, "worker", 7, "Running", uid="someone-else")
    h = harness(jobs=(job,), pods=(*ours, foreign), podgroups=(podgroup_for(job, "Running"),))
    h.run()
    assert [c.name for c in h.client.of("delete", "pods")] == ["job-worker-3"]


def test_restart_job_kills_every_pod_and_goes_restarting() -> None:
    job = with_phase(JOB, "Running", minAvailable=3)
    pods = tuple(job_pod(job, "worker", i, "Running") for i in range(3))
    h = harness(jobs=(job,), pods=pods, podgroups=(podgroup_for(job, "Running"),))
    h.run(action="RestartJob")
    assert len(h.client.of("delete", "pods")) == 3
    status = h.status_writes()[-1]
    assert status["state"]["phase"] == "Restarting"
    assert status["retryCount"] == 1
    assert status["version"] == 1
    assert status["terminating"] == 3
    assert ("Normal", "ExecuteAction", "Start to execute action RestartJob ") in (h.recorder.events)


def test_pod_failed_event_runs_the_jobs_policy() -> None:
    job = with_phase(JOB, "Running", minAvailable=3)
    job["spec"]["policies"] = [{"event": "PodFailed", "action": "AbortJob"}]
    pods = (job_pod(job, "worker", 0, "Failed"), job_pod(job, "worker", 1, "Running"))
    h = harness(jobs=(job,), pods=pods, podgroups=(podgroup_for(job, "Running"),))
    h.run(event="PodFailed", task="worker", pod="job-worker-0", version=0)
    assert [c.name for c in h.client.of("delete", "pods")] == ["job-worker-1"]
    assert h.status_writes()[-1]["state"]["phase"] == "Aborting"


def test_policy_with_timeout_is_delayed_not_run() -> None:
    job = with_phase(JOB, "Running", minAvailable=3)
    job["spec"]["policies"] = [{"event": "PodFailed", "action": "RestartJob", "timeout": "1m30s"}]
    h = harness(jobs=(job,), podgroups=(podgroup_for(job, "Running"),))
    h.run(event="PodFailed", task="worker", pod="job-worker-0", version=0)
    assert h.client.calls == []
    ((request, delay),) = h.delayed
    assert (request.action, delay) == ("RestartJob", 90.0)


def test_invalid_job_gets_one_warning_naming_the_field_and_no_hot_loop() -> None:
    job = with_phase(JOB, "Pending")
    job["spec"]["tasks"][0]["replicas"] = "three"
    h = harness(jobs=(job,))
    h.run()
    ((kind, reason, message),) = h.recorder.events
    assert (kind, reason) == ("Warning", "InvalidSpec")
    assert "spec.tasks[0].replicas" in message
    state = h.status_writes()[0]["state"]
    assert (state["reason"], state["phase"]) == ("InvalidSpec", "Pending")
    # The written status is what the next sync reads: nothing more to do.
    h2 = harness(jobs=(h.client.calls[0].body,))
    h2.run()
    assert h2.client.calls == []


def test_pod_the_api_server_rejects_gives_a_warning_and_a_retry() -> None:
    job = with_phase(JOB, "Pending", minAvailable=3)
    h = harness(jobs=(job,), podgroups=(podgroup_for(job, "Inqueue"),))
    h.client.fail("create", Invalid(422, "Invalid", "spec.containers: Required value"))
    with pytest.raises(RuntimeError, match="job-worker-0"):  # failed: retried with backoff
        h.run()
    assert h.reasons() == ["FailedCreate"]


def test_our_status_write_is_read_back_before_the_cache_shows_it() -> None:
    h = harness(jobs=(JOB,))
    h.run()
    h.client.calls.clear()
    h.run()  # the cache still shows no status: our own write must be used
    assert ("update", "jobs/status", "job") not in h.client.verbs()


def test_deleted_job_is_ignored() -> None:
    h = harness()
    h.run("ns/gone")
    assert h.client.calls == []


@pytest.mark.parametrize(("elapsed", "deleted", "delay"), [(30, False, 30.0), (61, True, None)],
                         ids=["not-yet", "expired"])  # fmt: skip
def test_ttl_seconds_after_finished_deletes_the_finished_job(
    elapsed: int, deleted: bool, delay: float | None
) -> None:
    job = with_phase(JOB, "Completed", minAvailable=3)
    job["spec"]["ttlSecondsAfterFinished"] = 60
    job["status"]["state"]["lastTransitionTime"] = "2025-01-01T00:00:00Z"
    clock = FakeClock(wall_start=datetime(2025, 1, 1, tzinfo=UTC) + timedelta(seconds=elapsed))
    h = harness(jobs=(job,), clock=clock)
    h.run()
    assert (("delete", "jobs", "job") in h.client.verbs()) is deleted
    assert [d for _, d in h.delayed] == ([] if delay is None else [delay])


def test_pods_created_but_not_yet_cached_are_counted_not_created_again() -> None:
    job = with_phase(JOB, "Pending", minAvailable=3)
    h = harness(jobs=(job,), podgroups=(podgroup_for(job, "Inqueue"),))
    h.run()
    assert len(h.client.of("create", "pods")) == 3
    h.client.calls.clear()
    h.run()  # the pod cache is still empty
    assert h.client.of("create", "pods") == []


def test_command_is_deleted_first_then_its_action_runs() -> None:
    job = with_phase(JOB, "Running", minAvailable=3)
    pods = tuple(job_pod(job, "worker", i, "Running") for i in range(3))
    h = harness(jobs=(job,), pods=pods, podgroups=(podgroup_for(job, "Running"),))
    h.run(action="AbortJob", event="CommandIssued", command="suspend-job-x")
    assert h.client.verbs()[0] == ("delete", "commands", "suspend-job-x")
    assert h.reasons()[0] == "CommandIssued"
    assert h.status_writes()[-1]["state"]["phase"] == "Aborting"


def test_command_already_taken_is_not_run_again() -> None:
    job = with_phase(JOB, "Running", minAvailable=3)
    h = harness(jobs=(job,), podgroups=(podgroup_for(job, "Running"),))
    h.client.fail("delete", NotFound(404, "NotFound", 'commands "x" not found'))
    h.run(action="AbortJob", event="CommandIssued", command="x")
    assert h.client.verbs() == [("delete", "commands", "x")]
