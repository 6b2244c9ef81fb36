"""The scheduler's PodGroup status write: a merge patch that leaves exactly the computed status.

The scheduler is the one writer of a Volcano PodGroup's status (``writer.py``): it sends a
JSON merge patch of ``status`` and its two annotations, without a ``resourceVersion``. Here:
what the patch holds, that applied as the API server applies it (RFC 7386) it leaves the
status computed (a count that dropped to 0 is removed, not left behind), and that the job
updater's guard sees a status the object already has as no change.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.controllers.hypernode.hnfakes import merge_patch
from tests.unit.scheduler.objects import podgroup
from volcano_py.api.constants import (
    JOB_ALLOCATED_HYPERNODE_ANNOTATION,
    NOMINATED_HYPERNODE_ANNOTATION,
)
from volcano_py.scheduler.writer import (
    KubeWriter,
    podgroup_status_changes,
    podgroup_status_patch,
)

SCHEDULED = {"type": "Scheduled", "status": "True", "reason": "tasks in gang are ready"}


def _pg(status: dict[str, Any], annotations: dict[str, str] | None = None) -> dict[str, Any]:
    pg = podgroup("job", 2)
    pg["metadata"].update(uid="u-1", resourceVersion="7", annotations=dict(annotations or {}))
    pg["status"] = status
    return pg


def test_podgroup_status_is_a_merge_patch_of_status_and_the_schedulers_annotations() -> None:
    calls: list[tuple[str, str, str, object, str]] = []

    class RecordingClient:
        def patch(self, resource, name, body, namespace, *, patch_type="merge", **kw):  # type: ignore[no-untyped-def]
            calls.append((resource.plural, name, namespace, body, patch_type))
            return {}

        def update(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            raise AssertionError("a Volcano PodGroup's status is never PUT whole")

    pg = _pg(
        {"phase": "Running", "running": 2, "conditions": [SCHEDULED]},
        {JOB_ALLOCATED_HYPERNODE_ANNOTATION: "rack-1", "owner/note": "theirs"},
    )
    pg["spec"]["minMember"] = 99  # a stale spec is not written back
    writer = KubeWriter(RecordingClient(), None, workers=1)  # type: ignore[arg-type]
    try:
        writer.update_podgroup(pg)
        assert writer.statuses.flush(30)
    finally:
        writer.close()
    [(plural, name, namespace, body, patch_type)] = calls
    assert (plural, name, namespace, patch_type) == ("podgroups", "job", "default", "merge")
    assert body == {
        "metadata": {
            "uid": "u-1",
            "annotations": {
                JOB_ALLOCATED_HYPERNODE_ANNOTATION: "rack-1",
                NOMINATED_HYPERNODE_ANNOTATION: None,  # dropped when served
            },
        },
        "status": {**pg["status"], "succeeded": None, "failed": None},  # 0: not on the object
    }


def test_the_patch_leaves_exactly_the_computed_status_when_counts_drop_to_zero() -> None:
    stored = _pg(
        {"phase": "Running", "running": 2, "succeeded": 1, "conditions": [SCHEDULED]},
        {NOMINATED_HYPERNODE_ANNOTATION: "rack-2", "owner/note": "theirs"},
    )
    computed = _pg({"phase": "Pending", "conditions": []}, {"owner/note": "theirs"})
    written = merge_patch(stored, podgroup_status_patch(computed))
    assert written["status"] == {"phase": "Pending", "conditions": []}
    assert written["metadata"]["annotations"] == {"owner/note": "theirs"}
    assert written["spec"] == stored["spec"]
    assert not podgroup_status_changes(written, computed)  # so the next cycle writes nothing


@pytest.mark.parametrize(
    ("stored", "computed", "changes"),
    [
        ({"phase": "Pending"}, {"phase": "Pending", "conditions": []}, False),
        ({"phase": "Running"}, {"phase": "Running", "running": 0}, False),
        ({"phase": "Running", "running": 2}, {"phase": "Pending"}, True),
        ({"phase": "Running", "running": 2}, {"phase": "Running", "running": 1}, True),
        ({"phase": "Running"}, {"phase": "Running", "conditions": [SCHEDULED]}, True),
    ],
    ids=["no-conditions-is-empty", "zero-count-is-absent", "count-gone", "count", "condition"],
)
def test_a_status_the_object_already_has_is_no_change(
    stored: dict[str, Any], computed: dict[str, Any], changes: bool
) -> None:
    assert podgroup_status_changes(_pg(stored), _pg(computed)) is changes


def test_an_annotation_of_the_schedulers_is_a_change_and_anyone_elses_is_not() -> None:
    status = {"phase": "Running"}
    stored = _pg(status, {JOB_ALLOCATED_HYPERNODE_ANNOTATION: "rack-1"})
    assert podgroup_status_changes(stored, _pg(status))  # the scheduler removes it
    assert not podgroup_status_changes(
        stored, _pg(status, {JOB_ALLOCATED_HYPERNODE_ANNOTATION: "rack-1", "other": "x"})
    )


def _annotated(pg: dict[str, Any], value: str | None, rv: str) -> dict[str, Any]:
    meta = dict(pg["metadata"], resourceVersion=rv)
    meta["annotations"] = {NOMINATED_HYPERNODE_ANNOTATION: value} if value else {}
    return {**pg, "metadata": meta}


def test_a_nomination_written_is_shown_before_its_echo_and_over_older_objects() -> None:
    from volcano_py.scheduler.cache import SchedulerCache

    cache = SchedulerCache()
    pg = _pg({"phase": "Inqueue"})
    cache.update_podgroup(_annotated(pg, None, "1"))
    cache.assume_nomination(_annotated(pg, "rack-a", "1"))  # the cycle that evicted for it

    def shown() -> str | None:
        got = cache.podgroup("default/job") or {}
        return (got["metadata"].get("annotations") or {}).get(NOMINATED_HYPERNODE_ANNOTATION)

    assert shown() == "rack-a"  # the next cycle knows, though nothing came back yet
    cache.update_podgroup(_annotated(pg, None, "2"))  # an older write's echo, still in flight
    assert shown() == "rack-a"
    assert cache.podgroup("default/job")["metadata"]["resourceVersion"] == "2"  # type: ignore[index]
    cache.update_podgroup(_annotated(pg, "rack-a", "3"))  # the echo: the assumption ends
    cache.update_podgroup(_annotated(pg, None, "4"))  # served, removed by a later write
    assert shown() is None
