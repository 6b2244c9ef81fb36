"""Native groups shown by the workload people know them by (``Job trainer``, ``Workload x``).

The Job controller names a Job's PodGroup ``<job>-<hash>-<template>-<hash>``: ``simulate``,
``explain`` and the UI show the Job (the PodGroup's controller ownerReference) or, for a
standalone PodGroup, the Workload its ``spec.workloadRef`` names.
"""

from __future__ import annotations

from typing import Any

from tests.unit.scheduler.objects import hypernode, node
from tests.unit.scheduler.test_native_groups import _member, _native
from volcano_py.api.native_groups import volcano_view, workload_of
from volcano_py.commands.explain import explain, text
from volcano_py.commands.simulate import table
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.framework.framework import close_session
from volcano_py.scheduler.simulator import Simulator
from volcano_py.ui.owners import gang_owner

GANG = {"gang": {"minCount": 2}}
JOB_REFS = [
    {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload", "name": "trainer-x1"},
    {"apiVersion": "batch/v1", "kind": "Job", "name": "trainer", "controller": True},
]


def _job_group() -> dict[str, Any]:
    return _native("trainer-x1-w-y2", GANG, ownerReferences=JOB_REFS)


def _standalone() -> dict[str, Any]:
    pg = _native("train", GANG)
    pg["spec"]["workloadRef"] = {"workloadName": "train-wl", "templateName": "workers"}
    return pg


def test_a_jobs_podgroup_is_named_by_its_job_and_a_standalone_one_by_its_workload() -> None:
    assert workload_of(_job_group()) == "Job trainer"
    assert workload_of(_standalone()) == "Workload train-wl"
    assert workload_of(_native("bare", GANG)) == ""


def test_the_ui_owner_of_a_native_gang_is_its_job_or_its_workload() -> None:
    owner = gang_owner(JobInfo(volcano_view(_job_group())))
    assert owner is not None
    assert (owner["kind"], owner["name"]) == ("Job", "trainer")
    owner = gang_owner(JobInfo(volcano_view(_standalone())))
    assert owner is not None
    assert (owner["kind"], owner["name"]) == ("Workload", "train-wl")


def _sim() -> Simulator:
    return Simulator(
        [
            node("n0", {"nvidia.com/gpu": 4}),
            hypernode("tor", 1, nodes=["n0"], tier_name="example.com/rack"),
            _job_group(),
            *(_member(f"w-{i}", "trainer-x1-w-y2", 1) for i in range(2)),
        ]
    )


def test_simulate_shows_a_native_group_with_its_job() -> None:
    result = _sim().run()
    assert result.podgroups["default/trainer-x1-w-y2"]["workload"] == "Job trainer"
    assert "default/trainer-x1-w-y2 (Job trainer)" in table(result)


def test_explain_names_the_job_of_a_native_gang() -> None:
    ssn = _sim().open_session()
    try:
        report = explain(ssn, "default/trainer-x1-w-y2")
    finally:
        close_session(ssn)
    assert report["workload"] == "Job trainer"
    report |= {"summary": "", "shortfall": {}, "evictions": {}}
    assert "default/trainer-x1-w-y2: the gang of Job trainer" in text(report).splitlines()
