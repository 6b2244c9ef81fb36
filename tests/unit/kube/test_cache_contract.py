"""The Pod cache's contract: every consumer's declared reads survive the real Pod transform."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from volcano_py.controllers.job.interfaces import POD_READS as JOB_READS
from volcano_py.controllers.podgroup.interfaces import POD_READS as PODGROUP_READS
from volcano_py.kube.transforms import CacheReads, example_object, lost_fields, slim_pod
from volcano_py.scheduler.api.task_info import POD_READS as SCHEDULER_READS

CONSUMERS = [JOB_READS, PODGROUP_READS, SCHEDULER_READS]
ROOT = Path(__file__).resolve().parents[3] / "volcano_py"
# Where each consumer wires itself to the shared Pod cache.
WIRING = {
    "controllers/job/controller.py": JOB_READS,
    "controllers/podgroup/controller.py": PODGROUP_READS,
    "scheduler/cache/scheduler_cache.py": SCHEDULER_READS,
}


@pytest.mark.parametrize("reads", CONSUMERS, ids=[r.consumer for r in CONSUMERS])
def test_every_field_a_consumer_reads_survives_the_pod_transform(reads: CacheReads) -> None:
    assert lost_fields(reads) == []


def test_the_check_fails_for_the_transform_that_dropped_container_statuses() -> None:
    def old_slim_pod(obj: dict) -> dict:  # type: ignore[type-arg]
        out = slim_pod(obj)
        out.get("status", {}).pop("containerStatuses", None)
        return out

    assert lost_fields(JOB_READS, old_slim_pod) == [
        "status.containerStatuses[].ready",
        "status.containerStatuses[].restartCount",
        "status.containerStatuses[].state.terminated.exitCode",
    ]


def test_every_module_wired_to_the_pod_cache_has_a_declaration() -> None:
    pattern = re.compile(r"informer\(R\.PODS\)|\(PODS, self\.")
    wired = {
        str(path.relative_to(ROOT))
        for path in ROOT.rglob("*.py")
        if pattern.search(path.read_text())
    }
    assert wired <= set(WIRING), f"declare POD_READS for: {sorted(wired - set(WIRING))}"


def test_a_terminated_container_keeps_its_exit_code_and_drops_the_rest() -> None:
    pod = {
        "metadata": {"name": "p"},
        "status": {
            "phase": "Failed",
            "containerStatuses": [
                {
                    "name": "c",
                    "ready": False,
                    "restartCount": 2,
                    "image": "busybox",
                    "imageID": "sha256:...",
                    "containerID": "containerd://abc",
                    "lastState": {"terminated": {"exitCode": 1}},
                    "state": {"terminated": {"exitCode": 3, "reason": "Error", "message": "x"}},
                }
            ],
        },
    }
    slim = slim_pod(pod)
    assert slim["status"]["containerStatuses"] == [
        {"name": "c", "ready": False, "restartCount": 2,
         "state": {"terminated": {"exitCode": 3, "reason": "Error"}}}
    ]  # fmt: skip


def test_example_object_carries_list_items_and_nested_leaves() -> None:
    obj = example_object(("a.b[].c", "a.b[].d", "a.e"))
    assert obj == {"a": {"b": [{"c": "probe-value", "d": "probe-value"}], "e": "probe-value"}}
