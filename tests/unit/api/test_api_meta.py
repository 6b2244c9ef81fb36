from __future__ import annotations

import pickle
from typing import Any

import pytest

from volcano_py.api.errors import FieldError, child, forbidden, index, invalid, key, required
from volcano_py.api.meta import (
    annotations_of,
    controller_ref,
    copy_annotations,
    is_being_deleted,
    labels_of,
    name_of,
    namespace_of,
    object_key,
    owner_references_of,
    read_int,
    read_list,
    read_only,
    read_section,
    read_str,
    resource_version_of,
    split_key,
    uid_of,
)

POD: dict[str, Any] = {
    "metadata": {
        "name": "p",
        "namespace": "ns",
        "uid": "u",
        "resourceVersion": "3",
        "labels": {"a": "1"},
        "annotations": {"b": "2"},
        "ownerReferences": [
            {"kind": "ReplicaSet", "name": "rs-old", "uid": "1"},
            {"kind": "ReplicaSet", "name": "rs", "uid": "2", "controller": True},
        ],
    }
}


def test_meta_reads_common_fields() -> None:
    assert (name_of(POD), namespace_of(POD), uid_of(POD), resource_version_of(POD)) == (
        "p",
        "ns",
        "u",
        "3",
    )
    assert labels_of(POD) == {"a": "1"}
    assert annotations_of(POD) == {"b": "2"}
    assert [r["uid"] for r in owner_references_of(POD)] == ["1", "2"]
    assert not is_being_deleted(POD)


@pytest.mark.parametrize(
    "obj",
    [{}, {"metadata": None}, {"metadata": {"labels": None, "annotations": None}}],
    ids=["no-metadata", "null-metadata", "null-maps"],
)
def test_meta_missing_fields_read_as_empty(obj: dict[str, Any]) -> None:
    assert labels_of(obj) == {}
    assert annotations_of(obj) == {}
    assert name_of(obj) == ""
    assert namespace_of(obj) == ""
    assert owner_references_of(obj) == []
    assert controller_ref(obj) is None


def test_meta_controller_ref_is_the_one_marked_controller() -> None:
    ref = controller_ref(POD)
    assert ref is not None
    assert ref["name"] == "rs"
    only_owner = {"metadata": {"ownerReferences": [{"uid": "1", "controller": False}]}}
    assert controller_ref(only_owner) is None


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        ({"metadata": {"name": "p", "namespace": "ns"}}, "ns/p"),
        ({"metadata": {"name": "node-1"}}, "node-1"),
        ({"metadata": {"name": "n", "namespace": ""}}, "n"),
    ],
    ids=["namespaced", "cluster-scoped", "empty-namespace"],
)
def test_meta_object_key(obj: dict[str, Any], expected: str) -> None:
    key_ = object_key(obj)
    assert key_ == expected
    namespace, name = split_key(key_)
    assert name == obj["metadata"]["name"]
    assert namespace == (obj["metadata"].get("namespace") or None)


@pytest.mark.parametrize(
    "bad", ["", "a/b/c", "/a", "a/"], ids=["empty", "two-slashes", "no-ns", "no-name"]
)
def test_meta_split_key_rejects_malformed_keys(bad: str) -> None:
    with pytest.raises(ValueError, match="unexpected key format"):
        split_key(bad)


def test_meta_is_being_deleted() -> None:
    assert is_being_deleted({"metadata": {"deletionTimestamp": "2025-01-01T00:00:00Z"}})


def test_meta_readers_name_the_field() -> None:
    assert read_str({"a": "x"}, "a", "spec") == "x"
    assert read_str({}, "a", "spec") == ""
    with pytest.raises(FieldError, match=r"^spec\.a: must be a string$"):
        read_str({"a": 1}, "a", "spec")
    assert read_int(3.0, "f") == 3
    assert read_int(None, "f") is None
    with pytest.raises(FieldError, match=r"^f: must be an integer$"):
        read_int(False, "f")
    assert read_list(None, "f") == []
    with pytest.raises(FieldError, match=r"^f: must be a list$"):
        read_list("x", "f")
    assert read_section({"spec": None}, "spec") == {}
    with pytest.raises(FieldError, match=r"^spec: must be an object$"):
        read_section({"spec": []}, "spec")
    view = read_only({"a": "1"})
    assert read_only(view) is view
    with pytest.raises(TypeError):
        view["b"] = "2"  # type: ignore[index]


def test_field_error_str_and_attributes() -> None:
    err = FieldError("spec.members[2].selector.regexMatch.pattern", "bad pattern")
    assert str(err) == "spec.members[2].selector.regexMatch.pattern: bad pattern"
    assert (err.field, err.message) == (
        "spec.members[2].selector.regexMatch.pattern",
        "bad pattern",
    )
    assert isinstance(err, ValueError)
    assert str(FieldError("", "whole object")) == "whole object"
    copy = pickle.loads(pickle.dumps(err))
    assert (copy.field, copy.message) == (err.field, err.message)


def test_field_error_paths_and_kinds_read_like_the_api_server() -> None:
    path = key(child(index(child(child("", "spec"), "members"), 1), "minResources"), "cpu")
    assert path == "spec.members[1].minResources[cpu]"
    assert (
        str(invalid("spec.tier", -1, "must be >= 0"))
        == "spec.tier: Invalid value: -1: must be >= 0"
    )
    assert str(invalid("f", "x", "bad")) == 'f: Invalid value: "x": bad'
    assert str(invalid("f", ["a"], "bad")) == 'f: Invalid value: ["a"]: bad'
    assert str(invalid("f", True, "bad")) == "f: Invalid value: true: bad"
    assert str(required("f", "give one")) == "f: Required value: give one"
    assert str(required("f", "")) == "f: Required value"
    assert str(forbidden("f", "not here")) == "f: Forbidden: not here"


def test_copy_annotations_copies_the_keys_present_and_one_budget_min_available_first() -> None:
    target = {"kept": "1"}
    source = {
        "a": "x",
        "other": "y",
        "volcano.sh/jdb-min-available": "2",
        "volcano.sh/jdb-max-unavailable": "1",
    }
    copy_annotations(source, target, ("a", "missing"))
    assert target == {"kept": "1", "a": "x", "volcano.sh/jdb-min-available": "2"}
    only_max = {"volcano.sh/jdb-max-unavailable": "1"}
    budget: dict[str, str] = {}
    copy_annotations(only_max, budget, ())
    assert budget == only_max
