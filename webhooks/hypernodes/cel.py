"""CEL rules as data: a ValidatingAdmissionPolicy-shaped document compiled once with celpy.

The HyperNode webhook's first stage runs the rules of ``policy.yaml`` (shipped in this package),
the same ``variables`` + ``validations`` that ``manifests/admission/`` installs as a
``ValidatingAdmissionPolicy``, so the API server and the webhook enforce one text. Rules are
parsed and compiled once, when ``load_policy`` runs (at webhook start), never per request.

cel-python interprets its AST (~0.1-0.6 ms per evaluation), far too slow to walk a
1,000-member HyperNode rule by rule. So each validation is classified at load time:

- **per-member**: ``variables.members.all(<var>, <body>)`` whose body reads nothing but
  ``<var>`` (and the ``format`` library). The body is compiled on its own and evaluated once
  per *distinct member value*; results are memoised on the member's canonical JSON, which is
  sound because the body can observe nothing else. ``all`` over the members is the
  conjunction of the per-member results, with CEL's error rule (a false wins over an error).
- **object-level**: anything else, evaluated once per request over ``object``,
  ``oldObject`` and ``variables``.

Kubernetes CEL functions the rules use and celpy lacks are added here with Kubernetes'
semantics: ``format.qualifiedName().validate(s)`` (an optional list of errors, as
``validation.IsQualifiedName``), ``optional.hasValue()`` / ``.value()``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import celpy
import lark
import yaml
from celpy import celtypes
from celpy.adapter import json_to_cel
from celpy.evaluation import CELEvalError, Evaluator

from volcano_py.api.selectors import is_qualified_name

log = logging.getLogger(__name__)

MEMBERS_VARIABLE = "members"
Tree = lark.Tree[Any]
_CHAIN = {
    "expr",
    "conditionalor",
    "conditionaland",
    "relation",
    "addition",
    "multiplication",
    "unary",
    "member",
    "primary",
}
_PASS_THROUGH = _CHAIN - {"primary"}


class CelError(Exception):
    """A CEL rule failed to evaluate (the admission answer is a denial naming the rule)."""


class PolicyError(ValueError):
    """The policy document is malformed or a rule does not compile."""


# --- Kubernetes CEL library functions celpy lacks -------------------------------------------


class _Format(celtypes.MapType):
    """The value bound to the ``format`` identifier (``format.qualifiedName()``...)."""


@dataclass(frozen=True, slots=True)
class Optional:
    """A CEL ``optional`` value: ``hasValue()`` and ``value()``."""

    item: Any = None
    present: bool = False


@dataclass(frozen=True, slots=True)
class _Validator:
    """What ``format.<name>()`` returns: ``.validate(s)`` gives an optional list of errors."""

    check: Callable[[str], list[str]]


def _qualified_name(fmt: Any) -> _Validator:
    if not isinstance(fmt, _Format):
        raise TypeError("qualifiedName() applies to the format library")
    return _Validator(is_qualified_name)


def _validate(validator: Any, value: Any) -> Optional:
    if not isinstance(validator, _Validator) or not isinstance(value, str):
        raise TypeError("validate() takes a format and a string")
    errors = validator.check(str(value))
    if not errors:
        return Optional()
    return Optional(celtypes.ListType([celtypes.StringType(e) for e in errors]), True)


def _has_value(opt: Any) -> celtypes.BoolType:
    if not isinstance(opt, Optional):
        raise TypeError("hasValue() applies to an optional")
    return celtypes.BoolType(opt.present)


def _value(opt: Any) -> Any:
    if not isinstance(opt, Optional) or not opt.present:
        raise TypeError("value() of an empty optional")
    return opt.item


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "qualifiedName": _qualified_name,
    "validate": _validate,
    "hasValue": _has_value,
    "value": _value,
}
LIBRARY: dict[str, Any] = {"format": _Format()}


# --- the policy document --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Rule:
    """One compiled validation: ``member_var`` is set for per-member rules."""

    expression: str
    message: str
    reason: str
    program: celpy.Runner
    member_var: str | None = None


@dataclass(frozen=True, slots=True)
class Variable:
    """One compiled ``spec.variables[]`` entry."""

    name: str
    expression: str
    program: celpy.Runner


@dataclass(frozen=True, slots=True)
class Policy:
    """A compiled ValidatingAdmissionPolicy: variables, object rules, per-member rules."""

    name: str
    variables: tuple[Variable, ...]
    rules: tuple[Rule, ...]

    @property
    def member_rules(self) -> tuple[Rule, ...]:
        """The rules evaluated per member (memoised)."""
        return tuple(r for r in self.rules if r.member_var is not None)


def read_policy_document(path: Path) -> dict[str, Any]:
    """The ValidatingAdmissionPolicy document in ``path`` (the first of that kind)."""
    for doc in yaml.safe_load_all(path.read_text()):
        if isinstance(doc, dict) and doc.get("kind") == "ValidatingAdmissionPolicy":
            return doc
    raise PolicyError(f"{path}: no ValidatingAdmissionPolicy document")


def load_policy(path: Path) -> Policy:
    """Parse and compile the policy in ``path``; raises ``PolicyError`` naming the bad rule."""
    return compile_policy(read_policy_document(path))


def compile_policy(doc: Mapping[str, Any]) -> Policy:
    """Compile a ValidatingAdmissionPolicy document (a dict)."""
    env = celpy.Environment()
    spec = doc.get("spec") or {}
    variables = []
    for i, var in enumerate(spec.get("variables") or []):
        expression = str(var.get("expression", ""))
        variables.append(
            Variable(str(var["name"]), expression, _program(env, expression, f"variables[{i}]"))
        )
    rules = []
    for i, val in enumerate(spec.get("validations") or []):
        expression = str(val.get("expression", ""))
        where = f"validations[{i}]"
        tree = _parse(env, expression, where)
        message = str(val.get("message") or f"failed expression: {expression.strip()}")
        reason = str(val.get("reason") or "Invalid")
        per_member = _per_member_body(tree)
        if per_member is not None:
            var, body = per_member
            rules.append(Rule(expression, message, reason, _runner(env, body), var))
        else:
            rules.append(Rule(expression, message, reason, _runner(env, tree)))
    name = str((doc.get("metadata") or {}).get("name", ""))
    return Policy(name, tuple(variables), tuple(rules))


def compile_expression(expression: str, where: str = "rule") -> celpy.Runner:
    """Compile one CEL expression with the Kubernetes functions bound (CRD rules use this)."""
    return _program(celpy.Environment(), expression, where)


def _parse(env: celpy.Environment, expression: str, where: str) -> Tree:
    try:
        return env.compile(expression)
    except Exception as e:  # celpy raises several parser error types
        raise PolicyError(f"{where}: {expression!r} does not compile: {e}") from e


def _program(env: celpy.Environment, expression: str, where: str) -> celpy.Runner:
    return _runner(env, _parse(env, expression, where))


class _Runner(celpy.InterpretedRunner):
    """celpy's interpreter with its base activation built once instead of per evaluation.

    ``InterpretedRunner.evaluate`` builds a fresh base ``Activation`` (the function table
    and the well-known type annotations) for every call, ~0.3 ms; the evaluator only ever
    *clones* it before binding the call's variables, so one shared instance is equivalent
    (and safe to share between threads: it is only read).
    """

    def __init__(self, environment: celpy.Environment, ast: Tree, functions: Any) -> None:
        super().__init__(environment, ast, functions)
        self._base = self.new_activation()

    def evaluate(self, context: Any) -> Any:
        return Evaluator(ast=self.ast, activation=self._base).evaluate(context)


def _runner(env: celpy.Environment, tree: Tree) -> celpy.Runner:
    return _Runner(env, _flatten(tree), FUNCTIONS)


def _flatten(node: Any) -> Any:
    """Drop pass-through grammar nodes (a 2-3x faster interpreter, same meaning).

    celpy's evaluator visits ``expr -> conditionalor -> conditionaland -> relation -> ...``
    for every leaf; a node of those kinds with a single subtree only returns that subtree's
    value, so it is replaced by the subtree. ``primary`` nodes stay (the evaluator dispatches
    identifiers and calls from them). Returns a new tree; ``node`` is not modified.
    """
    if not isinstance(node, lark.Tree):
        return node
    children = [_flatten(c) for c in node.children]
    if node.data in _PASS_THROUGH and len(children) == 1 and isinstance(children[0], lark.Tree):
        return children[0]
    return lark.Tree(node.data, children, node.meta if not node.meta.empty else None)


def _unwrap(node: Any) -> Any:
    """Skip the grammar's single-child chain nodes (expr -> conditionalor -> ... -> member)."""
    while (
        isinstance(node, lark.Tree)
        and node.data in _CHAIN
        and len(node.children) == 1
        and isinstance(node.children[0], lark.Tree)
    ):
        node = node.children[0]
    return node


def _per_member_body(tree: Tree) -> tuple[str, Tree] | None:
    """``(var, body)`` when ``tree`` is ``variables.members.all(var, body)`` over ``var`` only."""
    node = _unwrap(tree)
    if not (isinstance(node, lark.Tree) and node.data == "member_dot_arg"):
        return None
    target, method = node.children[0], node.children[1]
    if str(method) != "all" or len(node.children) != 3:
        return None
    target = _unwrap(target)
    if not (
        isinstance(target, lark.Tree)
        and target.data == "member_dot"
        and str(target.children[1]) == MEMBERS_VARIABLE
        and _ident(target.children[0]) == "variables"
    ):
        return None
    args = node.children[2]
    if not isinstance(args, lark.Tree) or len(args.children) != 2:
        return None
    var = _ident(args.children[0])
    body = args.children[1]
    if var is None or not isinstance(body, lark.Tree):
        return None
    allowed = {var, *LIBRARY} | _macro_vars(body)
    if any(str(t.children[0]) not in allowed for t in body.find_data("ident")):
        return None  # the body reads something besides the member: not memoisable
    return var, body


def _ident(node: Any) -> str | None:
    node = _unwrap(node)
    if isinstance(node, lark.Tree) and node.data == "ident":
        return str(node.children[0])
    return None


def _macro_vars(body: Tree) -> set[str]:
    """Identifiers bound by macros nested in ``body`` (``x`` in ``l.exists(x, ...)``)."""
    names = set()
    for call in body.find_data("member_dot_arg"):
        if len(call.children) == 3 and isinstance(call.children[2], lark.Tree):
            args = call.children[2].children
            if len(args) == 2 and (name := _ident(args[0])) is not None:
                names.add(name)
    return names


# --- evaluation -----------------------------------------------------------------------------


def to_cel(value: Any) -> Any:
    """JSON (dicts, lists, scalars) -> celpy values."""
    return json_to_cel(value)


def cel_map(values: Mapping[str, Any]) -> Any:
    """A CEL map from names to values that are already CEL values."""
    return celtypes.MapType({celtypes.StringType(k): v for k, v in values.items()})


def cel_list(values: list[Any]) -> Any:
    """A CEL list of values that are already CEL values."""
    return celtypes.ListType(values)


def evaluate(program: celpy.Runner, activation: Mapping[str, Any]) -> bool:
    """Run a boolean rule; raises ``CelError`` when it errors or is not a bool."""
    try:
        result = program.evaluate({**LIBRARY, **activation})
    except CELEvalError as e:
        raise CelError(_error_text(e)) from e
    except (RecursionError, ValueError, TypeError, KeyError, AttributeError) as e:
        raise CelError(str(e) or type(e).__name__) from e
    if not isinstance(result, bool | celtypes.BoolType):
        raise CelError(f"expected a bool, got {type(result).__name__}")
    return bool(result)


def evaluate_value(program: celpy.Runner, activation: Mapping[str, Any]) -> Any:
    """Run an expression for its value (variables); raises ``CelError``."""
    try:
        return program.evaluate({**LIBRARY, **activation})
    except CELEvalError as e:
        raise CelError(_error_text(e)) from e
    except (RecursionError, ValueError, TypeError, KeyError, AttributeError) as e:
        raise CelError(str(e) or type(e).__name__) from e


def _error_text(error: CELEvalError) -> str:
    first = error.args[0] if error.args else "evaluation error"
    return str(first)
