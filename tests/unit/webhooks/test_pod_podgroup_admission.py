"""/pods/validate (job disruption budget annotations) and /podgroups/mutate (namespace queue)."""

from __future__ import annotations

import base64
from typing import Any

import orjson
import pytest

from webhooks.podgroups import make_mutate, queue_patch
from webhooks.pods import make_validate, validate_pod

JSON = dict[str, Any]
MIN, MAX = "volcano.sh/jdb-min-available", "volcano.sh/jdb-max-unavailable"


def pod(scheduler: str = "volcano", **annotations: str) -> JSON:
    return {"metadata": {"name": "p", "annotations": annotations},
            "spec": {"schedulerName": scheduler}}  # fmt: skip


@pytest.mark.parametrize(
    ("annotations", "needle"),
    [
        ({MIN: "0"}, "positive integer"),
        ({MIN: "-3"}, "positive integer"),
        ({MAX: "100%"}, "percentage which between 1% ~ 99%"),
        ({MAX: "0%"}, "percentage which between 1% ~ 99%"),
        ({MIN: "lots"}, "neither an integer nor a percentage"),
        ({MIN: "2", MAX: "30%"}, "not allow configure multiple annotations"),
    ],
    ids=["zero", "negative", "100pct", "0pct", "word", "both"],
)
def test_bad_budget_annotations_are_refused_naming_them(annotations: JSON, needle: str) -> None:
    [problem] = validate_pod(pod(**annotations), ("volcano",))
    assert needle in problem
    assert problem.startswith("metadata.annotations")


@pytest.mark.parametrize("annotations", [{}, {MIN: "3"}, {MAX: "30%"}], ids=["none", "int", "pct"])
def test_good_budgets_are_allowed(annotations: JSON) -> None:
    assert validate_pod(pod(**annotations), ("volcano",)) == []


def test_pods_of_other_schedulers_are_not_looked_at() -> None:
    assert validate_pod(pod("default-scheduler", **{MIN: "0"}), ("volcano",)) == []


def test_validate_function_denies_through_the_review() -> None:
    review = {"request": {"uid": "u", "operation": "CREATE", "object": pod(**{MIN: "0"})}}
    assert make_validate(("volcano",))(review)["allowed"] is False


def namespace(**annotations: str) -> JSON:
    return {"metadata": {"name": "team", "annotations": annotations}}


def podgroup(queue: str | None = None) -> JSON:
    spec: JSON = {"minMember": 1}
    if queue is not None:
        spec["queue"] = queue
    return {"metadata": {"name": "pg", "namespace": "team"}, "spec": spec}


def test_podgroup_in_default_takes_its_namespaces_queue() -> None:
    ns = namespace(**{"scheduling.volcano.sh/queue-name": "team-q"})
    expected = [{"op": "add", "path": "/spec/queue", "value": "team-q"}]
    assert queue_patch(podgroup("default"), ns) == expected
    assert queue_patch(podgroup(), ns) == expected
    assert queue_patch(podgroup("other"), ns) == []
    assert queue_patch(podgroup("default"), namespace()) == []
    assert queue_patch(podgroup("default"), None) == []


def test_mutate_function_reads_the_namespace_of_the_request() -> None:
    ns = namespace(**{"scheduling.volcano.sh/queue-name": "team-q"})
    mutate = make_mutate(lambda name: ns if name == "team" else None)
    review = {"request": {"uid": "u", "operation": "CREATE", "namespace": "team",
                          "object": podgroup("default")}}  # fmt: skip
    response = mutate(review)
    assert orjson.loads(base64.b64decode(response["patch"]))[0]["value"] == "team-q"
