"""CEL rules as data: load/compile once, per-member classification, Kubernetes functions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import celpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from webhooks.hypernodes import cel
from webhooks.hypernodes.validator import POLICY_PATH

POLICY = cel.load_policy(POLICY_PATH)


def _doc(*expressions: str) -> dict[str, Any]:
    return {
        "metadata": {"name": "p"},
        "spec": {
            "variables": [{"name": "members", "expression": "object.spec.members"}],
            "validations": [
                {"expression": e, "message": f"m{i}"} for i, e in enumerate(expressions)
            ],
        },
    }


def test_policy_rules_are_classified_object_or_per_member() -> None:
    kinds = [r.member_var for r in POLICY.rules]
    assert kinds == [None, "member", "member", "member", "member", "member"]
    assert POLICY.rules[0].message == "member must have at least one member"


@pytest.mark.parametrize(
    ("expression", "per_member"),
    [
        ("variables.members.all(m, has(m.selector))", True),
        ("variables.members.all(m, m.selector.exactMatch.name != object.metadata.name)", False),
        ("variables.members.exists(m, has(m.selector))", False),
        ("variables.members.all(m, m.values.all(v, v != ''))", True),
        ("size(variables.members) > 0 && variables.members.all(m, true)", False),
    ],
    ids=["simple", "reads-object", "exists", "nested-macro", "compound"],
)
def test_compile_policy_memoises_only_rules_that_read_the_member_alone(
    expression: str, per_member: bool
) -> None:
    rule = cel.compile_policy(_doc(expression)).rules[0]
    assert (rule.member_var is not None) is per_member


def test_compile_policy_names_rule_that_does_not_compile() -> None:
    with pytest.raises(cel.PolicyError, match=r"validations\[1\]"):
        cel.compile_policy(_doc("true", "variables.members.all(m, "))


@pytest.mark.parametrize(
    ("name", "has_errors"),
    [
        ("node-1", False),
        ("example.com/Name_1", False),
        ("n" * 64, True),
        ("-x", True),
        ("a/b/c", True),
        ("/x", True),
    ],
    ids=["dns", "prefixed", "too-long", "leading-dash", "two-slashes", "empty-prefix"],
)
def test_format_qualified_name_follows_kubernetes(name: str, has_errors: bool) -> None:
    program = cel.compile_expression("format.qualifiedName().validate(n).hasValue()")
    assert cel.evaluate(program, {"n": cel.to_cel(name)}) is has_errors


def test_format_validate_value_lists_kubernetes_errors() -> None:
    program = cel.compile_expression("format.qualifiedName().validate(n).value()")
    errors = cel.evaluate_value(program, {"n": cel.to_cel("n" * 64)})
    assert list(errors) == ["name part must be no more than 63 bytes"]


def test_evaluate_raises_cel_error_for_non_bool_result() -> None:
    with pytest.raises(cel.CelError, match="expected a bool"):
        cel.evaluate(cel.compile_expression("1 + 1"), {})


SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.text(max_size=4))
JSONISH = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=2),
        st.dictionaries(
            st.sampled_from(
                ["selector", "exactMatch", "regexMatch", "labelMatch", "name", "pattern", "type"]
            ),
            inner,
            max_size=3,
        ),
    ),
    max_leaves=8,
)


def _outcome(program: Any, value: Any) -> Any:
    try:
        return cel.evaluate(program, {"member": value})
    except cel.CelError:
        return "error"


def _plain_outcome(runner: Any, value: Any) -> Any:
    try:
        result = runner.evaluate({**cel.LIBRARY, "member": value})
    except Exception:  # celpy raises CELEvalError and, rarely, Python errors
        return "error"
    return bool(result) if isinstance(result, celpy.celtypes.BoolType) else "error"


# 40 generated members through celpy's interpreter: ~1 s alone, more on a busy machine, so
# this property test gets more than the unit tests' 2 s.
@pytest.mark.timeout(20)
@settings(max_examples=40, deadline=None)
@given(member=JSONISH)
def test_flattened_programs_agree_with_celpy_on_any_member(member: Any) -> None:
    env = celpy.Environment()
    value = cel.to_cel(member)
    for rule in POLICY.member_rules:
        plain = env.program(env.compile(_body_source(rule.expression)), cel.FUNCTIONS)
        assert _outcome(rule.program, value) == _plain_outcome(plain, value)


def _body_source(expression: str) -> str:
    """The text of ``body`` in ``variables.members.all(member, body)``."""
    text = " ".join(expression.split())
    prefix = "variables.members.all(member, "
    assert text.startswith(prefix)
    assert text.endswith(")")
    return text[len(prefix) : -1]


def test_policy_file_is_shipped_next_to_the_code() -> None:
    assert Path(cel.__file__).with_name("policy.yaml") == POLICY_PATH


def test_compiled_program_does_not_leak_variables_between_evaluations() -> None:
    program = cel.compile_expression("x == 1")
    assert cel.evaluate(program, {"x": cel.to_cel(1)}) is True
    with pytest.raises(cel.CelError):
        cel.evaluate(program, {})


@pytest.mark.parametrize(
    ("member", "errors"),
    [
        ({"selector": {"exactMatch": {"name": "node-1"}}}, False),
        ({"selector": {"exactMatch": {"name": 7}}}, True),
        ({"selector": {"exactMatch": {"name": "-x"}, "regexMatch": {}}}, False),
        ("not-a-map", False),
    ],
    ids=["valid", "name-not-string", "two-selectors", "text"],
)
def test_outcomes_give_each_rule_result_or_error_text_like_evaluate(
    member: Any, errors: bool
) -> None:
    programs = tuple(r.program for r in POLICY.member_rules)
    expected: list[Any] = []
    for program in programs:
        try:
            expected.append(cel.evaluate(program, {"member": member}))
        except cel.CelError as e:
            expected.append(str(e))
    assert cel.outcomes(programs, {"member": member}) == expected
    assert any(isinstance(o, str) for o in expected) is errors
