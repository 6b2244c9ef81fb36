"""Unschedulable / Scheduled Events on PodGroups (Volcano's RecordJobStatusEvent), told once."""

from __future__ import annotations

import pytest

from tests.unit.scheduler.objects import node, pod, podgroup
from volcano_py.kube.events import FakeRecorder
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.task_info import TaskInfo
from volcano_py.scheduler.framework.interface import JobFit
from volcano_py.scheduler.podgroup_events import PodGroupEvents, job_event
from volcano_py.scheduler.simulator import Simulator, load_scheduler_conf


def _job(pods: int) -> JobInfo:
    job = JobInfo(podgroup("pg", 2))  # type: ignore[arg-type]
    for i in range(pods):
        job.add_task(TaskInfo(pod(f"p{i}", "pg")))  # type: ignore[arg-type]
    return job


@pytest.mark.parametrize(
    ("phase", "fit", "written", "expected"),
    [
        (
            "Pending",
            "queue is full",
            False,
            ("Warning", "Unschedulable", "2/2 tasks in gang unschedulable: queue is full"),
        ),
        (
            "Inqueue",
            "1/2 tasks in gang unschedulable: x",
            True,
            ("Warning", "Unschedulable", "1/2 tasks in gang unschedulable: x"),
        ),
        (
            "Unknown",
            "no room",
            True,
            ("Warning", "Unschedulable", "2/2 tasks in gang unschedulable: no room"),
        ),
        ("Inqueue", None, True, None),
        ("Running", None, True, ("Normal", "Scheduled", "pod group is ready")),
        ("Running", "scaling up", True, ("Normal", "Scheduled", "pod group is ready")),
        ("Running", None, False, None),
    ],
    ids=[
        "pending",
        "inqueue-gang-message-kept",
        "unknown",
        "inqueue-no-reason",
        "running-written",
        "running-scaling-up",
        "running-unchanged",
    ],
)
def test_job_event_as_volcano_records(
    phase: str, fit: str | None, written: bool, expected: tuple[str, str, str] | None
) -> None:
    why = JobFit("NotEnoughResources", fit) if fit is not None else None
    assert job_event(_job(2), phase, why, written) == expected


def test_podgroup_events_told_once_per_change() -> None:
    recorder = FakeRecorder()
    events = PodGroupEvents(recorder)
    pg = podgroup("pg", 1)
    pg["metadata"]["uid"] = "u-1"
    lookup = {"default/pg": pg}.get
    waiting = {"default/pg": ("Warning", "Unschedulable", "0/1 no room")}
    assert events.record(waiting, lookup) == 1
    assert events.record(waiting, lookup) == 0  # an idle cluster: no write per cycle
    assert events.record({"default/pg": ("Normal", "Scheduled", "pod group is ready")}, lookup) == 1
    assert events.record(waiting, lookup) == 1  # unschedulable again: news
    assert events.record({"default/gone": waiting["default/pg"]}, lookup) == 0
    assert [e[1] for e in recorder.events] == ["Unschedulable", "Scheduled", "Unschedulable"]
    assert recorder.references[0]["kind"] == "PodGroup"
    assert PodGroupEvents(None).record(waiting, lookup) == 0


def test_cycle_reports_unschedulable_then_scheduled_podgroups() -> None:
    objects = [
        node("n1", {"cpu": "4"}),
        podgroup("small", 1),
        pod("s0", "small", {"cpu": "2"}),
        podgroup("big", 2),
        pod("b0", "big", {"cpu": "3"}),
        pod("b1", "big", {"cpu": "3"}),
    ]
    sim = Simulator(objects, load_scheduler_conf(None))
    result = sim.cycle()
    assert result.job_events["default/small"] == ("Normal", "Scheduled", "pod group is ready")
    kind, reason, message = result.job_events["default/big"]
    assert (kind, reason) == ("Warning", "Unschedulable")
    assert message.startswith("2/2 tasks in gang unschedulable")
