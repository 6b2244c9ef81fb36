"""A compiler from celpy parse trees to Python closures, for the CEL the HyperNode rules use.

celpy interprets its lark parse tree: every evaluation walks ~20-60 grammar nodes through a
visitor, clones an activation and wraps values in ``celtypes``, ~0.3 ms per rule. A
1,000-member HyperNode of new members needs ~7,000 rule evaluations, seconds. This module
turns a parse tree, once, into nested closures (built by ``celclosures.py``) that run
directly on the decoded JSON (``dict``/``list``/``str``/``int``/``float``/``bool``/``None``),
a few microseconds per rule.

**Exactness by construction.** The closures only handle the cases whose celpy result is
certain and common (a field that is there, ``!`` of a bool, ``==`` of two strings, ``all``
over a list of bools...). Anything else - a missing field outside ``has()``, a type
mismatch, an overflow, an identifier that is not bound, a non-bool where a bool is due -
raises ``Fallback`` and the caller re-runs the *whole* expression with celpy's interpreter
(expressions are pure, so re-running is exact). Errors therefore always come from celpy,
with celpy's text. Constructs the compiler does not know make ``compile_tree`` return
``None``: that expression is always interpreted. ``tests/unit/webhooks/test_celcompile.py``
compares both engines on generated values, rule by rule.

Compiled: ternary, ``||``/``&&`` (CEL's commutative error rule: ``false && <anything>`` is
false, ``true || <anything>`` is true), ``!``, unary ``-``, ``==``/``!=`` (string, int,
bool), ``<``/``<=``/``>``/``>=`` and ``+``/``-`` (int, int64 range), ``in`` (a string or int
in a list of that type), literals (int, double, string, bool, null), list literals,
parentheses, identifiers, field selection, ``has()``, ``size()``, the ``all``/``exists``
macros over lists, and methods from the caller's function table (``format.qualifiedName()
.validate(s).hasValue()``), called with celpy values exactly as the interpreter calls them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import celpy
import lark
from celpy import celtypes

from webhooks.hypernodes import celclosures as closures
from webhooks.hypernodes.celclosures import RAW, Code, from_cel

Tree = lark.Tree[Any]
# celpy's grammar nodes that, with a single child, only pass that child's value up
# (``cel._flatten`` keeps ``primary`` nodes: celpy's evaluator dispatches from them)
CHAIN = frozenset(
    {
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
)
_CHAIN = CHAIN | {"paren_expr"}  # ``(e)`` compiles as ``e``


class _Unsupported(Exception):
    """A construct the compiler does not know (the expression stays interpreted)."""


def compile_tree(tree: Tree, functions: Mapping[str, Callable[..., Any]]) -> Code | None:
    """Closures for ``tree`` (``None`` when it uses a construct the compiler lacks).

    ``functions``: the extra functions the interpreter runs with; a method call compiles
    only when its name is one of them.
    """
    try:
        return _Compiler(functions).node(tree)
    except _Unsupported:
        return None


class _Compiler:
    def __init__(self, functions: Mapping[str, Callable[..., Any]]) -> None:
        self.functions = functions

    def node(self, tree: Any, has: bool = False) -> Code:
        """One grammar node; ``has``: inside ``has()``, where a missing field is no error."""
        if not isinstance(tree, lark.Tree):
            raise _Unsupported(repr(tree))
        kind, kids = str(tree.data), tree.children
        if kind in _CHAIN and len(kids) == 1:
            return self.node(kids[0], has)
        if kind == "expr" and len(kids) == 3:
            return closures.ternary(self.node(kids[0]), self.node(kids[1]), self.node(kids[2]))
        if kind == "conditionalor" and len(kids) == 2:
            return closures.logical_or(self.node(kids[0]), self.node(kids[1]))
        if kind == "conditionaland" and len(kids) == 2:
            return closures.logical_and(self.node(kids[0]), self.node(kids[1]))
        if kind in ("relation", "addition") and len(kids) == 2:
            op, right = kids
            if (
                not isinstance(op, lark.Tree)
                or len(op.children) != 1
                or op.data not in closures.BINARY_OPS
            ):
                raise _Unsupported(kind)
            return closures.binary(str(op.data), self.node(op.children[0]), self.node(right))
        if kind == "unary" and len(kids) == 2:
            op = kids[0]
            operand = self.node(kids[1])
            if isinstance(op, lark.Tree) and op.data == "unary_not":
                return closures.logical_not(operand)
            if isinstance(op, lark.Tree) and op.data == "unary_neg":
                return closures.negate(operand)
            raise _Unsupported(kind)
        if kind == "member_dot":
            path = _path(tree)
            if path is not None and not has:  # inside has(), a path compiles to has_path
                return closures.select_path(*path)
            base, name = kids
            return closures.select(self.node(base, has), str(name), has)
        if kind == "member_dot_arg":
            return self.call(tree)
        if kind == "ident":
            return closures.ident(str(kids[0]))
        if kind == "literal":
            return closures.constant(_literal(tree))
        if kind == "list_lit":
            items = [self.node(c) for c in (kids[0].children if kids else [])]
            return closures.list_of(items)
        if kind == "ident_arg":
            return self.function(tree)
        raise _Unsupported(kind)

    def function(self, tree: Tree) -> Code:
        """``has(e.f)`` and ``size(x)``; other global functions stay interpreted."""
        name = str(tree.children[0])
        args = tree.children[1].children if len(tree.children) == 2 else []
        if name == "has" and len(args) == 1:
            path = _path(args[0])
            if path is not None:
                return closures.has_path(*path)
            inner = self.node(args[0], has=True)
            return lambda env: inner(env) is not closures.MISSING
        if name == "size" and len(args) == 1 and "size" not in self.functions:
            return closures.size(self.node(args[0]))
        raise _Unsupported(name)

    def call(self, tree: Tree) -> Code:
        """``target.method(args)``: the ``all``/``exists`` macros or a function-table method."""
        target, name = tree.children[0], str(tree.children[1])
        args = list(tree.children[2].children) if len(tree.children) == 3 else []
        if name in ("all", "exists") and len(args) == 2:
            var = _ident_name(args[0])
            if var is None:
                raise _Unsupported(name)
            return closures.macro(self.node(target), var, self.node(args[1]), name == "all")
        function = self.functions.get(name)
        if function is None:
            raise _Unsupported(name)
        return closures.method(function, self.node(target), [self.node(a) for a in args])


def _ident_name(tree: Any) -> str | None:
    while isinstance(tree, lark.Tree) and str(tree.data) in _CHAIN and len(tree.children) == 1:
        tree = tree.children[0]
    if isinstance(tree, lark.Tree) and tree.data == "ident":
        return str(tree.children[0])
    return None


def _path(tree: Any) -> tuple[str, tuple[str, ...]] | None:
    """``("a", ("b", "c"))`` when ``tree`` is the field selection ``a.b.c``."""
    names: list[str] = []
    while isinstance(tree, lark.Tree):
        if str(tree.data) in _CHAIN and len(tree.children) == 1:
            tree = tree.children[0]
        elif tree.data == "member_dot":
            names.append(str(tree.children[1]))
            tree = tree.children[0]
        elif tree.data == "ident" and names:
            return str(tree.children[0]), tuple(reversed(names))
        else:
            return None
    return None


def _literal(tree: Tree) -> Any:
    """The literal's value, computed by celpy itself (escapes, hex, ...), as JSON."""
    try:
        value = celpy.Environment().program(tree).evaluate({})
    except Exception as e:  # celpy reports bad literals several ways
        raise _Unsupported("literal") from e
    if isinstance(value, celtypes.UintType | celtypes.BytesType):
        raise _Unsupported("literal")
    value = from_cel(value)
    if type(value) not in RAW:
        raise _Unsupported("literal")
    return value
