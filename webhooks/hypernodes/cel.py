"""CEL rules as data: a ValidatingAdmissionPolicy-shaped document compiled once with celpy.

The HyperNode webhook's first stage runs the rules of ``policy.yaml`` (shipped in this package),
the same ``variables`` + ``validations`` that ``manifests/admission/`` installs as a
``ValidatingAdmissionPolicy``, so the API server and the webhook enforce one text. Rules are
parsed and compiled once, when ``load_policy`` runs (at webhook start), never per request.

cel-python interprets its AST (~0.1-0.6 ms per evaluation), far too slow to walk a
1,000-member HyperNode rule by rule. So every expression is also compiled to Python closures
(``celcompile.py``) that run on the decoded JSON and hand any case they do not handle back
to celpy's interpreter, which stays the reference; and each validation is classified at load
time:

- **per-member**: ``variables.members.all(<var>, <body>)`` whose body reads nothing but
  ``<var>`` (and the ``format`` library). The body is compiled on its own and evaluated once
  per *distinct member value*; results are memoised on the member's canonical JSON, which is
  sound because the body can observe nothing else. ``all`` over the members is the
  conjunction of the per-member results, with CEL's error rule (a false wins over an error).
- **object-level**: anything else, evaluated once per request over ``object``,
  ``oldObject`` and ``variables``.

Kubernetes CEL functions the rules use and celpy lacks (``celfuncs.py``: ``FUNCTIONS`` and
``LIBRARY``, bound for every expression) have Kubernetes' semantics:
``format.qualifiedName().validate(s)`` (an optional list of errors, as
``validation.IsQualifiedName``), ``optional.hasValue()`` / ``.value()``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import celpy
import lark
import yaml
from celpy import celtypes
from celpy.evaluation import CELEvalError, Evaluator

from webhooks.hypernodes.celclosures import Code, Fallback, from_cel
from webhooks.hypernodes.celclosures import int64_safe as _int64_safe
from webhooks.hypernodes.celclosures import to_cel as _to_cel
from webhooks.hypernodes.celcompile import CHAIN, compile_tree
from webhooks.hypernodes.celfuncs import FUNCTIONS as FUNCTIONS  # re-exported
from webhooks.hypernodes.celfuncs import LIBRARY as LIBRARY  # re-exported

log = logging.getLogger(__name__)

# celpy logs a failing function's arguments with ``%s`` at ERROR level. Those arguments are
# request data and nested CELEvalErrors whose text grows with every level: a crafted
# HyperNode made one such log line allocate gigabytes (found by the hypothesis equivalence
# test). Errors reach the admission response through ``CelError``; celpy's own log stays off.
logging.getLogger("celpy").setLevel(logging.CRITICAL + 1)

MEMBERS_VARIABLE = "members"
Tree = lark.Tree[Any]
_PASS_THROUGH = CHAIN - {"primary"}


class CelError(Exception):
    """A CEL rule failed to evaluate (the admission answer is a denial naming the rule)."""


class PolicyError(ValueError):
    """The policy document is malformed or a rule does not compile."""


@dataclass(frozen=True, slots=True)
class Program:
    """One compiled expression: closures (``code``, when it compiles) and celpy's interpreter.

    ``evaluate`` runs ``code`` on decoded JSON and, when it falls back or is missing, the
    interpreter on the same values converted to celpy's types: the interpreter decides
    every case the closures do not.
    """

    expression: str
    runner: celpy.Runner
    code: Code | None

    def interpret(self, activation: Mapping[str, Any]) -> Any:
        """The interpreter's own result (a celpy value; raises ``CELEvalError``)."""
        return self.runner.evaluate({k: _to_cel(v) for k, v in activation.items()})


# --- the policy document --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Rule:
    """One compiled validation: ``member_var`` is set for per-member rules."""

    expression: str
    message: str
    reason: str
    program: Program
    member_var: str | None = None


@dataclass(frozen=True, slots=True)
class Variable:
    """One compiled ``spec.variables[]`` entry."""

    name: str
    expression: str
    program: Program


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


def load_policy(path: Path, *, compiled: bool = True) -> Policy:
    """Parse and compile the policy in ``path``; raises ``PolicyError`` naming the bad rule.

    ``compiled=False`` keeps every expression on celpy's interpreter (benchmarks, tests).
    """
    return compile_policy(read_policy_document(path), compiled=compiled)


def compile_policy(doc: Mapping[str, Any], *, compiled: bool = True) -> Policy:
    """Compile a ValidatingAdmissionPolicy document (a dict)."""
    env = celpy.Environment()
    spec = doc.get("spec") or {}
    variables = []
    for i, var in enumerate(spec.get("variables") or []):
        expression = str(var.get("expression", ""))
        variables.append(
            Variable(
                str(var["name"]), expression, _program(env, expression, f"variables[{i}]", compiled)
            )
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
            rules.append(
                Rule(expression, message, reason, _build(env, expression, body, compiled), var)
            )
        else:
            rules.append(Rule(expression, message, reason, _build(env, expression, tree, compiled)))
    name = str((doc.get("metadata") or {}).get("name", ""))
    return Policy(name, tuple(variables), tuple(rules))


def compile_expression(expression: str, where: str = "rule", *, compiled: bool = True) -> Program:
    """Compile one CEL expression with the Kubernetes functions bound (CRD rules use this)."""
    return _program(celpy.Environment(), expression, where, compiled)


def _parse(env: celpy.Environment, expression: str, where: str) -> Tree:
    try:
        return env.compile(expression)
    except Exception as e:  # celpy raises several parser error types
        raise PolicyError(f"{where}: {expression!r} does not compile: {e}") from e


def _program(env: celpy.Environment, expression: str, where: str, compiled: bool) -> Program:
    return _build(env, expression, _parse(env, expression, where), compiled)


def _build(env: celpy.Environment, expression: str, tree: Tree, compiled: bool) -> Program:
    code = compile_tree(tree, FUNCTIONS) if compiled else None
    if code is None and compiled:
        log.info("CEL expression %r is interpreted (not compilable)", expression)
    return Program(expression, _runner(env, tree), code)


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
        and node.data in CHAIN
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
    """JSON (dicts, lists, scalars) -> celpy values (celpy values pass through)."""
    return _to_cel(value)


def int64_safe(value: Any) -> bool:
    """No int in ``value`` is outside int64 (else celpy, hence every rule, errors)."""
    return _int64_safe(value)


def evaluate(program: Program, activation: Mapping[str, Any], *, checked: bool = False) -> bool:
    """Run a boolean rule; raises ``CelError`` when it errors or is not a bool.

    ``activation`` values are decoded JSON (or celpy values, which are always interpreted).
    ``checked``: the caller already knows ``int64_safe`` holds for every value (the
    validator memoises that per member); otherwise it is checked here.
    """
    if program.code is not None and (checked or _safe(activation)):
        try:
            result = program.code({**LIBRARY, **activation})
        except Fallback:
            pass
        else:
            if type(result) is bool:
                return result
    result = _interpret(program, activation)
    if not isinstance(result, bool | celtypes.BoolType):
        raise CelError(f"expected a bool, got {type(result).__name__}")
    return bool(result)


def outcomes(
    programs: tuple[Program, ...], activation: Mapping[str, Any], *, checked: bool = False
) -> list[bool | str]:
    """Each boolean program's result on one activation, or its error text.

    The same answers as ``evaluate`` per program, with the activation prepared once.
    """
    fast = checked or _safe(activation)
    env = {**LIBRARY, **activation}
    out: list[bool | str] = []
    for program in programs:
        code = program.code
        if fast and code is not None:
            try:
                result = code(env)
            except Fallback:
                result = None
            if type(result) is bool:
                out.append(result)
                continue
        try:
            out.append(evaluate(program, activation, checked=False))
        except CelError as e:
            out.append(str(e))
    return out


def evaluate_value(
    program: Program, activation: Mapping[str, Any], *, checked: bool = False
) -> Any:
    """Run an expression for its value, as decoded JSON (variables); raises ``CelError``."""
    if program.code is not None and (checked or _safe(activation)):
        try:
            return program.code({**LIBRARY, **activation})
        except Fallback:
            pass
    return from_cel(_interpret(program, activation))


def _safe(activation: Mapping[str, Any]) -> bool:
    return all(_int64_safe(v) for v in activation.values())


def _interpret(program: Program, activation: Mapping[str, Any]) -> Any:
    try:
        return program.interpret({**LIBRARY, **activation})
    except CELEvalError as e:
        raise CelError(_error_text(e)) from e
    except (RecursionError, ValueError, TypeError, KeyError, AttributeError) as e:
        raise CelError(str(e) or type(e).__name__) from e


def _error_text(error: CELEvalError) -> str:
    first = error.args[0] if error.args else "evaluation error"
    return str(first)
