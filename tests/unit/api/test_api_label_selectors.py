from __future__ import annotations

from typing import Any

import pytest

from volcano_py.api.errors import FieldError
from volcano_py.api.selectors import (
    LabelSelector,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
)

LABELS = {"rack": "r1", "zone": "z1", "gpu": ""}


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "operator": op}
    if values:
        out["values"] = list(values)
    return out


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ({}, True),
        ({"matchLabels": {"rack": "r1"}}, True),
        ({"matchLabels": {"rack": "r2"}}, False),
        ({"matchLabels": {"missing": "x"}}, False),
        ({"matchLabels": {"gpu": ""}}, True),
        ({"matchLabels": {"rack": "r1", "zone": "z2"}}, False),
        ({"matchExpressions": [expr("rack", "In", "r1", "r2")]}, True),
        ({"matchExpressions": [expr("rack", "In", "r2")]}, False),
        ({"matchExpressions": [expr("missing", "In", "r1")]}, False),
        ({"matchExpressions": [expr("rack", "NotIn", "r2")]}, True),
        ({"matchExpressions": [expr("rack", "NotIn", "r1")]}, False),
        ({"matchExpressions": [expr("missing", "NotIn", "r1")]}, True),
        ({"matchExpressions": [expr("gpu", "Exists")]}, True),
        ({"matchExpressions": [expr("missing", "Exists")]}, False),
        ({"matchExpressions": [expr("missing", "DoesNotExist")]}, True),
        ({"matchExpressions": [expr("rack", "DoesNotExist")]}, False),
        (
            {"matchLabels": {"rack": "r1"}, "matchExpressions": [expr("zone", "In", "z2")]},
            False,
        ),
        (
            {
                "matchLabels": {"rack": "r1"},
                "matchExpressions": [expr("zone", "In", "z1"), expr("x", "DoesNotExist")],
            },
            True,
        ),
    ],
    ids=[
        "empty-matches-all",
        "label-equal",
        "label-different",
        "label-absent",
        "label-empty-value",
        "labels-all-must-hold",
        "in",
        "in-not-listed",
        "in-absent-key",
        "notin",
        "notin-listed",
        "notin-absent-key",
        "exists",
        "exists-absent",
        "doesnotexist-absent",
        "doesnotexist-present",
        "labels-and-expressions-fail",
        "labels-and-expressions-hold",
    ],
)
def test_label_selector_matches_like_the_api_server(
    selector: dict[str, Any], expected: bool
) -> None:
    assert LabelSelector.from_dict(selector).matches(LABELS) is expected


@pytest.mark.parametrize(
    ("selector", "field", "message"),
    [
        (
            {"matchExpressions": [expr("rack", "In")]},
            "sel.matchExpressions[0].values",
            "Required value: must be specified when `operator` is 'In' or 'NotIn'",
        ),
        (
            {"matchExpressions": [expr("rack", "Exists"), expr("rack", "NotIn")]},
            "sel.matchExpressions[1].values",
            "Required value: must be specified when `operator` is 'In' or 'NotIn'",
        ),
        (
            {"matchExpressions": [expr("rack", "DoesNotExist", "x")]},
            "sel.matchExpressions[0].values",
            "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        ),
        (
            {"matchExpressions": [expr("rack", "Equals", "x")]},
            "sel.matchExpressions[0].operator",
            'Invalid value: "Equals": not a valid selector operator',
        ),
        (
            {"matchExpressions": [expr("bad key", "Exists")]},
            "sel.matchExpressions[0].key",
            'Invalid value: "bad key": name part must consist of alphanumeric characters, '
            "'-', '_' or '.', and must start and end with an alphanumeric character "
            "(e.g. 'MyName',  or 'my.name',  or '123-abc', "
            "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        ),
        (
            {"matchExpressions": [expr("rack", "In", "ok", "-bad")]},
            "sel.matchExpressions[0].values[1]",
            'Invalid value: "-bad": a valid label must be an empty string or consist of '
            "alphanumeric characters, '-', '_' or '.', and must start and end with an "
            "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
            "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        ),
        (
            {"matchLabels": {"Example.com/rack": "r1"}},
            "sel.matchLabels",
            'Invalid value: "Example.com/rack": prefix part a lowercase RFC 1123 subdomain '
            "must consist of lower case alphanumeric characters, '-' or '.', and must start "
            "and end with an alphanumeric character (e.g. 'example.com', regex used for "
            "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        ),
    ],
    ids=[
        "in-no-values",
        "second-expression",
        "values-with-exists",
        "operator",
        "key",
        "value",
        "label-key-prefix",
    ],
)
def test_label_selector_strict_rejects_naming_the_field(
    selector: dict[str, Any], field: str, message: str
) -> None:
    with pytest.raises(FieldError) as info:
        LabelSelector.from_dict(selector, "sel")
    assert info.value.field == field
    assert info.value.message == message
    assert str(info.value) == f"{field}: {message}"


def test_label_selector_lenient_keeps_errors_and_matches_nothing() -> None:
    selector = LabelSelector.from_dict(
        {"matchExpressions": [expr("rack", "Equals", "r1"), expr("zone", "In")]},
        "spec.labelMatch",
        strict=False,
    )
    assert not selector.is_valid
    assert [e.field for e in selector.errors] == [
        "spec.labelMatch.matchExpressions[0].operator",
        "spec.labelMatch.matchExpressions[1].values",
    ]
    assert selector.matches(LABELS) is False


@pytest.mark.parametrize(
    ("selector", "field"),
    [
        ([], "sel"),
        ({"matchLabels": ["rack"]}, "sel.matchLabels"),
        ({"matchLabels": {"rack": 1}}, "sel.matchLabels[rack]"),
        ({"matchExpressions": {"key": "rack"}}, "sel.matchExpressions"),
        ({"matchExpressions": ["rack"]}, "sel.matchExpressions[0]"),
        ({"matchExpressions": [{"operator": "Exists"}]}, "sel.matchExpressions[0].key"),
        ({"matchExpressions": [{"key": "rack"}]}, "sel.matchExpressions[0].operator"),
        ({"matchExpressions": [{"key": 5, "operator": "Exists"}]}, "sel.matchExpressions[0].key"),
        (
            {"matchExpressions": [{"key": "rack", "operator": "In", "values": "r1"}]},
            "sel.matchExpressions[0].values",
        ),
    ],
    ids=[
        "not-object",
        "labels-list",
        "label-value-int",
        "expressions-object",
        "expression-str",
        "key-missing",
        "operator-missing",
        "key-int",
        "values-str",
    ],
)
def test_label_selector_shape_errors_raise_even_when_lenient(selector: Any, field: str) -> None:
    with pytest.raises(FieldError) as info:
        LabelSelector.from_dict(selector, "sel", strict=False)
    assert info.value.field == field


def test_label_selector_is_empty_and_round_trips() -> None:
    assert LabelSelector.from_dict(None).is_empty
    assert LabelSelector.from_dict({"matchLabels": {}, "matchExpressions": []}).is_empty
    data = {
        "matchLabels": {"rack": "r1"},
        "matchExpressions": [expr("zone", "In", "b", "a"), expr("gpu", "Exists")],
    }
    selector = LabelSelector.from_dict(data)
    assert not selector.is_empty
    assert selector.to_dict() == {
        "matchLabels": {"rack": "r1"},
        "matchExpressions": [expr("zone", "In", "a", "b"), expr("gpu", "Exists")],
    }
    assert LabelSelector.from_dict(selector.to_dict()) == selector


QNAME_REGEX_ERROR = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


@pytest.mark.parametrize(
    ("value", "errors"),
    [
        ("rack", []),
        ("topology.kubernetes.io/rack", []),
        ("a" * 63, []),
        ("My_Name.1", []),
        ("", ["name part must be non-empty", "name part " + QNAME_REGEX_ERROR]),
        ("a" * 64, ["name part must be no more than 63 bytes"]),
        ("-a", ["name part " + QNAME_REGEX_ERROR]),
        ("/a", ["prefix part must be non-empty"]),
        ("a/", ["name part must be non-empty", "name part " + QNAME_REGEX_ERROR]),
        (
            "a/b/c",
            [
                "a valid label key " + QNAME_REGEX_ERROR + " with an optional DNS subdomain "
                "prefix and '/' (e.g. 'example.com/MyName')"
            ],
        ),
        ("x" * 254 + "/a", ["prefix part must be no more than 253 bytes"]),
    ],
    ids=[
        "simple",
        "prefixed",
        "max-length",
        "mixed",
        "empty",
        "too-long",
        "leading-dash",
        "empty-prefix",
        "empty-name",
        "two-slashes",
        "long-prefix",
    ],
)
def test_is_qualified_name_matches_kubernetes_messages(value: str, errors: list[str]) -> None:
    assert is_qualified_name(value) == errors


@pytest.mark.parametrize(
    ("value", "valid"),
    [("", True), ("r1", True), ("a.b_c-d", True), ("-x", False), ("x" * 64, False), ("é", False)],
    ids=["empty", "simple", "punctuation", "leading-dash", "too-long", "non-ascii"],
)
def test_is_valid_label_value(value: str, valid: bool) -> None:
    assert (is_valid_label_value(value) == []) is valid


@pytest.mark.parametrize(
    ("value", "errors"),
    [
        ("node-1.example.com", []),
        (
            "Node",
            [
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                "characters, '-' or '.', and must start and end with an alphanumeric "
                "character (e.g. "
                "'example.com', regex used for validation is "
                "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
            ],
        ),
        ("a" * 254, ["must be no more than 253 characters"]),
    ],
    ids=["valid", "uppercase", "too-long"],
)
def test_is_dns1123_subdomain(value: str, errors: list[str]) -> None:
    assert is_dns1123_subdomain(value) == errors


@pytest.mark.parametrize(
    ("value", "first_error"),
    [("rack-1", None), ("rack.1", "must not contain dots"), ("Rack", "a lowercase RFC 1123 label")],
    ids=["valid", "dots", "uppercase"],
)
def test_is_dns1123_label(value: str, first_error: str | None) -> None:
    errors = is_dns1123_label(value)
    if first_error is None:
        assert errors == []
    else:
        assert errors[0].startswith(first_error)


def test_label_selector_equality_ignores_collected_errors() -> None:
    data = {"matchExpressions": [expr("rack", "Bad")]}
    first = LabelSelector.from_dict(data, field="a", strict=False)
    second = LabelSelector.from_dict(data, field="b", strict=False)
    assert first == second
    assert first.errors[0].field != second.errors[0].field
