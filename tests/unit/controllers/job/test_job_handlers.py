"""job-controller's wiring: registered by default, and events turned into requests."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.controllers.job.jobfakes import RecordingClient, job_pod, load_job
from volcano_py.controllers.builtin import register_builtin_controllers
from volcano_py.controllers.framework import ControllerOptions, ControllerRegistry
from volcano_py.controllers.job.controller import JobController, pod_event
from volcano_py.controllers.job.interfaces import Request
from volcano_py.kube.informer import SharedInformerFactory
from volcano_py.kube.store import key_of

JOB = load_job("""
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: job}
spec:
  minAvailable: 1
  policies: [{event: PodFailed, action: RestartJob}]
  tasks: [{name: worker, replicas: 2, template: {}}]
""")


def test_job_controller_is_registered_and_on_by_default() -> None:
    registry = ControllerRegistry()
    register_builtin_controllers(registry)
    assert "job-controller" in registry.enabled(["*"])
    assert "job-controller" not in registry.enabled(["*", "-job-controller"])


def running(phase: str, exit_code: int | None = None) -> dict[str, Any]:
    return job_pod(JOB, "worker", 0, phase, exit_code=exit_code)


@pytest.mark.parametrize(
    ("old", "new", "siblings", "expected"),
    [
        ("Running", "Failed", [], ("PodFailed", 137)),
        ("Running", "Succeeded", ["Succeeded", "Succeeded"], ("TaskCompleted", None)),
        ("Running", "Succeeded", ["Succeeded", "Running"], ("OutOfSync", None)),
        ("Pending", "Running", [], ("PodRunning", None)),
        ("Running", "Running", [], ("OutOfSync", None)),
    ],
    ids=["failed", "task-completed", "task-not-done", "running", "no-change"],
)
def test_pod_event_maps_a_pod_update_to_volcanos_event(
    old: str, new: str, siblings: list[str], expected: tuple[str, int | None]
) -> None:
    task_pods = [running(p) for p in siblings]
    assert pod_event(running(old), running(new, exit_code=137), task_pods) == expected


def controller() -> JobController:
    client: Any = RecordingClient()
    c = JobController()
    c.initialize(ControllerOptions(client=client, informers=SharedInformerFactory(client)))
    assert c.sync_state is not None
    c.sync_state.caches.jobs.put(key_of(JOB), JOB)
    return c


def test_pod_failure_of_a_job_with_policies_is_queued_with_its_event() -> None:
    c = controller()
    old, new = running("Running"), running("Failed", exit_code=3)
    new["metadata"]["resourceVersion"] = "8"
    c._pod_updated(old, new)
    request = c.queue.get()
    assert request == Request("ns/job", event="PodFailed", task="worker", pod="job-worker-0",
                              exit_code=3, version=0, job_uid="uid-1")  # fmt: skip


def test_a_command_for_a_job_is_queued_with_its_action() -> None:
    c = controller()
    c._command_added({
        "metadata": {"name": "suspend", "namespace": "ns"}, "action": "AbortJob",
        "target": {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": "job"},
    })  # fmt: skip
    assert c.queue.get() == Request("ns/job", event="CommandIssued", action="AbortJob",
                                    command="suspend")  # fmt: skip


def test_own_status_writes_do_not_requeue_the_job() -> None:
    c = controller()
    newer = dict(JOB, status={"running": 1})
    c._job_updated(JOB, newer)
    assert len(c.queue) == 0
    c._job_updated(JOB, dict(JOB, spec={**JOB["spec"], "minAvailable": 2}))
    assert len(c.queue) == 1


def test_podgroup_turning_unknown_carries_the_unknown_event() -> None:
    c = controller()
    ref = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": "job",
           "uid": "uid-1", "controller": True}  # fmt: skip
    meta = {"name": "job-uid-1", "namespace": "ns", "ownerReferences": [ref]}
    c._podgroup_updated({"metadata": meta, "status": {"phase": "Running"}},
                        {"metadata": meta, "status": {"phase": "Unknown"}})  # fmt: skip
    assert c.queue.get() == Request("ns/job", event="Unknown")
    c._podgroup_updated({"metadata": meta, "status": {"phase": "Pending"}},
                        {"metadata": meta, "status": {"phase": "Inqueue"}})  # fmt: skip
    assert c.queue.get() == Request("ns/job")


def test_a_podgroup_condition_change_queues_its_job_for_a_report() -> None:
    from tests.unit.controllers.job.jobfakes import podgroup_for

    c = controller()
    old = podgroup_for(JOB, "Pending")
    new = podgroup_for(JOB, "Pending")
    new["status"]["conditions"] = [{"type": "Unschedulable", "status": "True", "message": "m"}]
    c._podgroup_updated(old, old)
    assert len(c.queue) == 0
    c._podgroup_updated(old, new)
    assert list(c.queue._waiting) == [Request("ns/job")]  # one sync, RECOUNT_DELAY_S later
