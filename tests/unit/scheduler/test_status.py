"""PodGroup phase/conditions/annotation and pod conditions computed from a job."""

from __future__ import annotations

import pytest

from tests.unit.scheduler.objects import pod, podgroup
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.task_info import TaskInfo
from volcano_py.scheduler.framework.interface import JobFit
from volcano_py.scheduler.status import pod_unschedulable_condition, podgroup_status

NOW = "2026-01-01T00:00:00Z"


def _job(pg: dict[str, object], pods: list[dict[str, object]]) -> JobInfo:
    job = JobInfo(pg)  # type: ignore[arg-type]
    for p in pods:
        job.add_task(TaskInfo(p))  # type: ignore[arg-type]
    return job


def test_podgroup_running_with_scheduled_condition_and_annotation() -> None:
    pg = podgroup("g", 2, phase="Inqueue")
    job = _job(pg, [pod(f"p{i}", "g", node_name="n", phase="Running") for i in range(2)])
    job.allocated_hypernode = "tor-1"
    new = podgroup_status(pg, job, None, now=NOW, transition_id="t")
    assert new is not None
    assert new["status"]["phase"] == "Running"
    assert new["status"]["running"] == 2
    assert new["status"]["conditions"][0]["type"] == "Scheduled"
    assert new["metadata"]["annotations"]["volcano.sh/job-allocated-hypernode"] == "tor-1"
    assert pg.get("status") == {"phase": "Inqueue"}, "input must not be mutated"


def test_podgroup_unschedulable_condition_then_no_change_when_same() -> None:
    pg = podgroup("g", 2, phase="Inqueue")
    job = _job(pg, [pod("p0", "g")])
    fit = JobFit("NotEnoughResources", "tier 1: 0/4 fit (nvidia.com/gpu short by 4)")
    new = podgroup_status(pg, job, fit, now=NOW, transition_id="t")
    assert new is not None
    cond = new["status"]["conditions"][0]
    assert (cond["type"], cond["status"], cond["message"]) == (
        "Unschedulable",
        "True",
        fit.message,
    )
    again = podgroup_status(new, _job(new, [pod("p0", "g")]), fit, now="later", transition_id="u")
    assert again is None


def test_podgroup_unschedulable_cleared_once_running() -> None:
    pg = podgroup("g", 1, phase="Inqueue")
    pg["status"]["conditions"] = [
        {"type": "Unschedulable", "status": "True", "reason": "x", "message": "y"}
    ]
    job = _job(pg, [pod("p0", "g", node_name="n")])
    new = podgroup_status(pg, job, None, now=NOW, transition_id="t")
    assert new is not None
    by_type = {c["type"]: c for c in new["status"]["conditions"]}
    assert by_type["Unschedulable"]["status"] == "False"
    assert by_type["Scheduled"]["status"] == "True"


def test_podgroup_running_count_follows_pods_bound_after_the_gang_is_running() -> None:
    pg = podgroup("g", 2, phase="Inqueue")
    first = _job(pg, [pod(f"p{i}", "g", node_name="n") for i in range(2)] + [pod("p2", "g")])
    running = podgroup_status(pg, first, None, now=NOW, transition_id="t")
    assert running is not None
    assert (running["status"]["phase"], running["status"]["running"]) == ("Running", 2)
    # The third pod binds later: phase, conditions and annotation are unchanged, the count is not.
    later = _job(running, [pod(f"p{i}", "g", node_name="n") for i in range(3)])
    updated = podgroup_status(running, later, None, now="later", transition_id="u")
    assert updated is not None
    assert updated["status"]["running"] == 3
    again = _job(updated, [pod(f"p{i}", "g", node_name="n") for i in range(3)])
    assert podgroup_status(updated, again, None, now="later", transition_id="v") is None


def test_pod_condition_only_when_message_changes() -> None:
    p = pod("p0", "g")
    cond = pod_unschedulable_condition(p, "why", now=NOW)
    assert cond is not None
    assert cond["status"] == "False"
    assert cond["reason"] == "Unschedulable"
    p["status"]["conditions"] = [cond]
    assert pod_unschedulable_condition(p, "why", now=NOW) is None
    assert pod_unschedulable_condition(p, "other", now=NOW) is not None


def _terminating(p: dict[str, object]) -> dict[str, object]:
    p["metadata"]["deletionTimestamp"] = NOW  # type: ignore[index]
    return p


PHASE_CASES = [
    # (phase before, pods as (phase, on a node, terminating), gang unschedulable, phase after)
    ("Running", [("Running", True, True), ("Running", True, True)], False, "Running"),
    ("Running", [("Pending", False, False), ("Pending", False, False)], True, "Pending"),
    ("Running", [], False, "Pending"),
    ("Unknown", [("Pending", False, False)], True, "Pending"),
    ("Running", [("Running", True, False), ("Pending", False, False)], True, "Unknown"),
    ("Running", [("Succeeded", True, False), ("Succeeded", True, False)], False, "Completed"),
    ("Running", [("Succeeded", True, False), ("Failed", True, False)], False, "Completed"),
    ("Inqueue", [("Failed", True, False), ("Failed", True, False)], False, "Completed"),
    ("Inqueue", [("Pending", False, False)], True, "Inqueue"),
    ("Inqueue", [("Pending", False, True), ("Pending", False, True)], False, "Inqueue"),
    ("Completed", [], False, "Completed"),
]


@pytest.mark.parametrize(
    ("before", "pods", "unschedulable", "after"),
    PHASE_CASES,
    ids=[
        "terminating-members-keep-running",
        "all-pods-replaced-goes-pending-not-unknown",
        "all-pods-gone-goes-pending",
        "unknown-without-running-goes-pending",
        "running-member-and-unplaceable-gang-is-unknown",
        "all-succeeded-completed",
        "succeeded-and-failed-completed",
        "failed-batch-job-completed",
        "inqueue-stays-inqueue",
        "pending-pods-deleted-are-not-scheduled",
        "completed-is-final",
    ],
)
def test_podgroup_phase_as_volcano(
    before: str, pods: list[tuple[str, bool, bool]], unschedulable: bool, after: str
) -> None:
    pg = podgroup("g", 2, phase=before)
    objs = []
    for i, (phase, placed, terminating) in enumerate(pods):
        p = pod(f"p{i}", "g", node_name="n" if placed else None, phase=phase)
        objs.append(_terminating(p) if terminating else p)
    job = _job(pg, objs)
    fit = JobFit("NotEnoughResources", "no room") if unschedulable else None
    new = podgroup_status(pg, job, fit, now=NOW, transition_id="t")
    assert (new or pg)["status"]["phase"] == after
