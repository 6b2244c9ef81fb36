"""The vcjob phase machine (Volcano's state package) and event -> action policies, as tables."""

from __future__ import annotations

from typing import Any

import pytest

from volcano_py.api.vcjob import JobView
from volcano_py.controllers.job.interfaces import Request
from volcano_py.controllers.job.policies import parse_duration, resolve_action
from volcano_py.controllers.job.state import Status, StepKind, plan


def view(phase: str = "Running", *, min_available: int = 3, replicas: int = 4,
         task_min: int | None = None, min_success: int | None = None,
         max_retry: int | None = None, retry_count: int = 0,
         policies: list[Any] | None = None, task_policies: list[Any] | None = None,
         version: int = 0) -> JobView:  # fmt: skip
    task: dict[str, Any] = {"name": "w", "replicas": replicas, "template": {}}
    if task_min is not None:
        task["minAvailable"] = task_min
    if task_policies:
        task["policies"] = task_policies
    spec: dict[str, Any] = {"minAvailable": min_available, "tasks": [task]}
    if min_success is not None:
        spec["minSuccess"] = min_success
    if max_retry is not None:
        spec["maxRetry"] = max_retry
    if policies:
        spec["policies"] = policies
    return JobView.from_dict({
        "metadata": {"name": "j", "namespace": "n", "uid": "u"}, "spec": spec,
        "status": {"state": {"phase": phase}, "retryCount": retry_count, "version": version},
    })  # fmt: skip


def after(job: JobView, action: str = "SyncJob", **counts: Any) -> tuple[StepKind, str]:
    step = plan(job, action)
    status = Status(phase=job.phase, min_available=job.min_available,
                    retry_count=job.retry_count, **counts)  # fmt: skip
    if step.update is not None:
        step.update(status)
    return step.kind, status.phase


@pytest.mark.parametrize(
    ("job", "action", "counts", "expected"),
    [
        (view("Pending"), "SyncJob", {"running": 2}, (StepKind.SYNC, "Pending")),
        (view("Pending"), "SyncJob", {"running": 2, "succeeded": 1}, (StepKind.SYNC, "Running")),
        (view("Running"), "SyncJob", {"succeeded": 4}, (StepKind.SYNC, "Completed")),
        (view("Running"), "SyncJob", {"succeeded": 2, "failed": 2}, (StepKind.SYNC, "Failed")),
        (view("Running", min_success=2), "SyncJob", {"succeeded": 2, "running": 2},
         (StepKind.SYNC, "Completed")),
        (view("Running"), "SyncJob", {"pending": 2, "running": 2}, (StepKind.SYNC, "Pending")),
        (view("Running"), "SyncJob", {"pending": 1, "running": 3}, (StepKind.SYNC, "Running")),
        (view("Running", min_available=2, task_min=3), "SyncJob",
         {"succeeded": 2, "failed": 2, "task_status_count": {"w": {"Succeeded": 2}}},
         (StepKind.SYNC, "Completed")),
        (view("Running"), "RestartJob", {}, (StepKind.KILL, "Restarting")),
        (view("Running"), "RestartTask", {}, (StepKind.KILL_TARGET, "Restarting")),
        (view("Pending"), "AbortJob", {}, (StepKind.KILL, "Aborting")),
        (view("Running"), "CompleteJob", {}, (StepKind.KILL, "Completing")),
        (view("Running"), "TerminateJob", {}, (StepKind.KILL, "Terminating")),
        (view("Restarting", max_retry=2, retry_count=2), "SyncJob", {},
         (StepKind.SYNC, "Failed")),
        (view("Restarting"), "SyncJob", {"terminating": 2}, (StepKind.SYNC, "Restarting")),
        (view("Restarting"), "SyncJob", {"terminating": 1}, (StepKind.SYNC, "Pending")),
        (view("Completing"), "SyncJob", {"running": 1}, (StepKind.KILL, "Completing")),
        (view("Completing"), "SyncJob", {}, (StepKind.KILL, "Completed")),
        (view("Aborting"), "SyncJob", {}, (StepKind.KILL, "Aborted")),
        (view("Aborted"), "ResumeJob", {}, (StepKind.KILL, "Restarting")),
        (view("Terminating"), "SyncJob", {"terminating": 1}, (StepKind.KILL, "Terminating")),
        (view("Failed"), "RestartJob", {}, (StepKind.KILL, "Failed")),
    ],
    ids=["pending-waits", "pending-runs", "all-succeeded", "too-few-succeeded", "min-success",
         "back-to-pending", "running-stays", "task-min-unset-at-job-level",
         "restart-job", "restart-task", "abort", "complete", "terminate", "max-retry",
         "restarting-waits", "restarting-done", "completing-waits", "completed", "aborted",
         "resume", "terminating-waits", "finished-stays"],
)  # fmt: skip
def test_plan_follows_volcanos_state_machine(
    job: JobView, action: str, counts: dict[str, Any], expected: tuple[StepKind, str]
) -> None:
    assert after(job, action, **counts) == expected


def test_restart_increments_retry_count() -> None:
    step = plan(view("Running"), "RestartJob")
    status = Status(phase="Running", retry_count=1)
    assert step.update is not None
    assert step.update(status)
    assert status.retry_count == 2


@pytest.mark.parametrize(
    ("job", "request_", "expected"),
    [
        (view(policies=[{"event": "PodEvicted", "action": "RestartJob"}]),
         Request("n/j", event="PodEvicted", task="w", version=0), ("RestartJob", 0.0)),
        (view(policies=[{"events": ["*"], "action": "AbortJob"}]),
         Request("n/j", event="PodFailed", task="w", version=0), ("AbortJob", 0.0)),
        (view(policies=[{"event": "PodFailed", "action": "AbortJob"}],
              task_policies=[{"event": "PodFailed", "action": "RestartTask"}]),
         Request("n/j", event="PodFailed", task="w", version=0), ("RestartTask", 0.0)),
        (view(policies=[{"exitCode": 3, "action": "CompleteJob"}]),
         Request("n/j", event="PodFailed", task="w", exit_code=3, version=0),
         ("CompleteJob", 0.0)),
        (view(policies=[{"event": "PodPending", "action": "RestartJob"}]),
         Request("n/j", event="PodPending", task="w", version=0), ("SyncJob", 0.0)),
        (view(policies=[{"event": "PodPending", "action": "RestartJob", "timeout": "5m"}]),
         Request("n/j", event="PodPending", task="w", version=0), ("RestartJob", 300.0)),
        (view(policies=[{"event": "PodFailed", "action": "AbortJob"}], version=2),
         Request("n/j", event="PodFailed", task="w", version=1), ("SyncJob", 0.0)),
        (view(policies=[{"event": "PodFailed", "action": "AbortJob"}]),
         Request("n/j", event="PodFailed", task="w", version=0, job_uid="old"), ("SyncJob", 0.0)),
        (view(policies=[{"event": "PodRunning", "action": "AbortJob"}]),
         Request("n/j", event="PodRunning", task="w", version=0), ("SyncJob", 0.0)),
        (view(), Request("n/j", action="ResumeJob"), ("ResumeJob", 0.0)),
    ],
    ids=["event", "any-event", "task-policy-first", "exit-code", "pending-needs-timeout",
         "pending-with-timeout", "stale-version", "other-job-uid", "internal-event",
         "explicit-action"],
)  # fmt: skip
def test_resolve_action_follows_volcanos_apply_policies(
    job: JobView, request_: Request, expected: tuple[str, float]
) -> None:
    decision = resolve_action(job, request_)
    assert (decision.action, decision.delay) == expected


@pytest.mark.parametrize(("text", "seconds"), [("90s", 90.0), ("1m30s", 90.0), ("1.5h", 5400.0),
                                               ("250ms", 0.25), ("0", 0.0)])  # fmt: skip
def test_parse_duration_reads_go_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


def test_parse_duration_rejects_garbage() -> None:
    with pytest.raises(ValueError, match="invalid duration"):
        parse_duration("5 minutes")
