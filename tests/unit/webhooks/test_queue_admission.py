"""Queue admission: Volcano's rules for /queues/validate and /queues/mutate, and ours."""

from __future__ import annotations

import base64
from typing import Any

import orjson
import pytest

from volcano_py.api.quantity import parse_quantity
from webhooks.queues import make_validate, mutate_queue
from webhooks.queues.rules import ClusterView, default_patch, validate, validate_delete

JSON = dict[str, Any]


def queue(
    name: str = "q", *, parent: str = "", annotations: JSON | None = None, **spec: Any
) -> JSON:
    if parent:
        spec["parent"] = parent
    obj: JSON = {"metadata": {"name": name, "annotations": annotations or {}}, "spec": spec}
    return obj


def view(*queues: JSON, podgroups: dict[str, int] | None = None, cpu: str = "") -> ClusterView:
    held = podgroups or {}
    total = {"cpu": parse_quantity(cpu)} if cpu else {}
    return ClusterView(lambda: list(queues), lambda n: held.get(n, 0), lambda: total)


EMPTY = view()


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ({"capability": {"cpu": "-1"}}, "spec.capability[cpu]: Invalid value: -1: must not"),
        ({"deserved": {"memory": "-1Gi"}}, "spec.deserved[memory]"),
        ({"guarantee": {"resource": {"cpu": "-2"}}}, "spec.guarantee.resource[cpu]"),
        ({"capability": {"cpu": "lots"}}, "spec.capability[cpu]"),
        ({"guarantee": {"resource": {"cpu": "2"}}}, "spec.deserved[cpu]: Invalid value: <nil>"),
        (
            {"guarantee": {"resource": {"cpu": "2"}}, "deserved": {"cpu": "1"}},
            "must be >= guarantee",
        ),
        ({"deserved": {"cpu": "4"}, "capability": {"cpu": "2"}}, "must be <= capability[cpu]=2"),
        ({"weight": -1}, "spec.weight"),
        ({"weight": 70000}, "spec.weight"),
        ({"weight": "3"}, "spec.weight"),
    ],
    ids=[
        "neg-cap",
        "neg-deserved",
        "neg-guarantee",
        "not-quantity",
        "guarantee-no-deserved",
        "deserved-below-guarantee",
        "deserved-above-cap",
        "weight-neg",
        "weight-big",
        "weight-str",
    ],
)
def test_bad_quantities_and_weight_are_refused_naming_the_field(spec: JSON, needle: str) -> None:
    problems = validate(queue(**spec), None, EMPTY)
    assert any(needle in p for p in problems), problems


def test_good_queue_is_allowed() -> None:
    spec = {
        "weight": 2,
        "capability": {"cpu": "8"},
        "deserved": {"cpu": "4"},
        "guarantee": {"resource": {"cpu": "2"}},
    }
    assert validate(queue(**spec), None, view(cpu="16")) == []


def test_state_other_than_open_or_closed_is_refused() -> None:
    obj = dict(queue(), status={"state": "Closing"})
    assert validate(obj, None, EMPTY)[0].startswith("status.state")
    assert validate(dict(queue(), status={"state": "Closed"}), None, EMPTY) == []


def test_guarantee_larger_than_the_cluster_is_refused_naming_the_field() -> None:
    spec = {"deserved": {"cpu": "1e15"}, "guarantee": {"resource": {"cpu": "1e15"}}}
    [problem] = validate(queue(**spec), None, view(cpu="64"))
    assert problem.startswith("spec.guarantee.resource[cpu]: Invalid value: 1e15")
    assert "64" in problem
    assert validate(queue(**spec), None, EMPTY) == []  # no nodes known yet: not judged


@pytest.mark.parametrize(
    ("annotations", "needle"),
    [
        (
            {"volcano.sh/hierarchy": "root/a", "volcano.sh/hierarchy-weights": "1"},
            "the same length",
        ),
        ({"volcano.sh/hierarchy": "root/a", "volcano.sh/hierarchy-weights": "1/x"}, "not a number"),
        (
            {"volcano.sh/hierarchy": "root/a", "volcano.sh/hierarchy-weights": "1/0"},
            "larger than 0",
        ),
        ({"volcano.sh/hierarchy": "root/a/root", "volcano.sh/hierarchy-weights": "1/1/1"}, "loop"),
        (
            {"volcano.sh/hierarchy": "root//a", "volcano.sh/hierarchy-weights": "1/1/1"},
            "empty part",
        ),
        ({"volcano.sh/hierarchy": "root/sci", "volcano.sh/hierarchy-weights": "1/1"}, "prefix"),
    ],
    ids=["lengths", "nan", "zero", "cycle", "empty", "prefix-of-other"],
)
def test_hierarchy_annotations_must_be_consistent(annotations: JSON, needle: str) -> None:
    other = queue(
        "dev",
        annotations={
            "volcano.sh/hierarchy": "root/sci/dev",
            "volcano.sh/hierarchy-weights": "1/2/3",
        },
    )
    problems = validate(queue(annotations=annotations), None, view(other))
    assert problems, problems
    assert needle in problems[0]
    assert problems[0].startswith("metadata.annotations")


@pytest.mark.parametrize(
    ("parent", "queues", "needle"),
    [
        ("q", (), "its own parent"),
        ("nope", (), "Not found: 'nope'"),
        ("a", (queue("a", parent="b"), queue("b", parent="q")), "loop"),
        ("a", (dict(queue("a"), status={"allocated": {"pods": "3"}}),), "3 allocated pods"),
    ],
    ids=["self", "missing", "cycle", "leaf-with-pods"],
)
def test_parent_rules(parent: str, queues: tuple[JSON, ...], needle: str) -> None:
    problems = validate(queue(parent=parent), None, view(*queues))
    assert problems, problems
    assert needle in problems[0]
    assert problems[0].startswith("spec.parent")


def test_parent_not_rechecked_when_an_update_keeps_it() -> None:
    obj = queue(parent="gone")
    assert validate(obj, obj, EMPTY) == []


def test_children_sums_and_capability_stay_within_the_parent() -> None:
    parent = queue(
        "p", capability={"cpu": "10"}, deserved={"cpu": "6"}, guarantee={"resource": {"cpu": "4"}}
    )
    sibling = queue("s", parent="p", deserved={"cpu": "4"}, guarantee={"resource": {"cpu": "3"}})
    too_big = queue(parent="p", capability={"cpu": "12"})
    assert "exceeds ancestor p's capability 10" in validate(too_big, None, view(parent, sibling))[0]
    over = queue(parent="p", deserved={"cpu": "3"}, guarantee={"resource": {"cpu": "2"}})
    problems = validate(over, None, view(parent, sibling))
    assert any("add up to 5, more than its 4" in p for p in problems), problems
    assert any("add up to 7, more than its 6" in p for p in problems), problems
    fits = queue(parent="p", deserved={"cpu": "2"}, guarantee={"resource": {"cpu": "1"}})
    assert validate(fits, None, view(parent, sibling)) == []


@pytest.mark.parametrize(
    ("name", "needle"),
    [
        ("root", "can not be deleted"),
        ("default", "can not be deleted"),
        ("p", "1 child queues: c"),
        ("busy", "2 PodGroups still name it"),
    ],
    ids=["root", "default", "parent", "busy"],
)
def test_delete_refused(name: str, needle: str) -> None:
    v = view(queue("p"), queue("c", parent="p"), queue("busy"), podgroups={"busy": 2})
    [problem] = validate_delete(name, v)
    assert needle in problem


def test_delete_of_an_empty_leaf_is_allowed() -> None:
    assert validate_delete("idle", view(queue("idle"))) == []


@pytest.mark.parametrize("state", ["Closed", "Closing"])
def test_delete_of_a_closed_queue_that_podgroups_name_is_allowed(state: str) -> None:
    # Volcano allows it; its e2e cleanup closes a queue and deletes it while standalone
    # PodGroups of the spec still name it (jobseq "Queue Job Status Transition")
    assert validate_delete("busy", view(queue("busy"), podgroups={"busy": 2}), state) == []


def test_mutation_defaults_weight_reclaimable_and_roots_the_hierarchy() -> None:
    obj = queue(
        annotations={"volcano.sh/hierarchy": "sci/dev", "volcano.sh/hierarchy-weights": "2/3"}
    )
    patch = default_patch(obj)
    assert {"op": "add", "path": "/spec/weight", "value": 1} in patch
    assert {"op": "add", "path": "/spec/reclaimable", "value": True} in patch
    assert {
        "op": "add",
        "path": "/metadata/annotations/volcano.sh~1hierarchy",
        "value": "root/sci/dev",
    } in patch
    assert default_patch(queue(weight=3, reclaimable=False)) == []


def _review(operation: str, obj: JSON | None = None, name: str = "q") -> JSON:
    request: JSON = {"uid": "u", "operation": operation, "name": name}
    if obj is not None:
        request["object"] = obj
    return {"request": request}


def test_validate_function_answers_each_operation() -> None:
    func = make_validate(view(queue("busy"), podgroups={"busy": 1}))
    assert func(_review("CREATE", queue(weight=2)))["allowed"] is True
    denied = func(_review("DELETE", name="busy"))
    assert denied["allowed"] is False
    assert "PodGroups" in denied["status"]["message"]
    closed = {**queue("busy"), "status": {"state": "Closed"}}
    delete_closed = _review("DELETE", name="busy")
    delete_closed["request"]["oldObject"] = closed
    assert func(delete_closed)["allowed"] is True
    assert func(_review("CREATE"))["allowed"] is False  # no object: a refusal, not a crash


def test_mutate_function_sends_a_json_patch_on_create() -> None:
    response = mutate_queue(_review("CREATE", queue()))
    assert response["patchType"] == "JSONPatch"
    assert {"op": "add", "path": "/spec/weight", "value": 1} in orjson.loads(
        base64.b64decode(response["patch"])
    )
