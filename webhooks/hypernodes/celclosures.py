"""The closures compiled CEL runs as, and the values they run on (see ``celcompile.py``).

Each builder returns a ``Code``: a function from an activation (names to decoded JSON) to a
decoded-JSON value. A closure answers only where celpy's answer is certain; otherwise it
raises ``Fallback`` and the caller re-runs the whole expression with celpy's interpreter.
Also here: the conversions between decoded JSON and celpy's values (``to_cel``/``from_cel``)
and ``int64_safe``, the condition under which compiled code may run at all.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from celpy import celtypes
from celpy.adapter import json_to_cel

Code = Callable[[dict[str, Any]], Any]

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
RAW = frozenset({dict, list, str, int, float, bool, type(None)})
MISSING = object()  # has(): the selected field is not there


class Fallback(Exception):
    """The compiled code met a case it does not handle: interpret the expression instead."""


_SCALAR_TO_CEL: dict[type, Callable[[Any], Any]] = {
    str: celtypes.StringType,
    int: celtypes.IntType,
    bool: celtypes.BoolType,
    float: celtypes.DoubleType,
}
_SCALAR_FROM_CEL: dict[type, Callable[[Any], Any]] = {
    celtypes.StringType: str,
    celtypes.IntType: int,
    celtypes.BoolType: bool,
    celtypes.DoubleType: float,
}


def to_cel(value: Any) -> Any:
    """A decoded-JSON value as celpy sees it (values that are not raw JSON pass through).

    Scalars are converted as ``celpy.adapter.json_to_cel`` converts them, containers by it.
    """
    scalar = _SCALAR_TO_CEL.get(type(value))
    if scalar is not None:
        return scalar(value)
    return json_to_cel(value) if type(value) in RAW else value


def int64_safe(value: Any) -> bool:
    """No int in ``value`` (decoded JSON) is outside int64, the range celpy can take in.

    celpy refuses an activation holding a bigger int (``json_to_cel`` raises "overflow"),
    whether or not the expression reads it; compiled code runs only when this holds.
    """
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            stack.extend(item.values())
        elif kind is list:
            stack.extend(item)
        elif kind is int and not INT64_MIN <= item <= INT64_MAX:
            return False
    return True


def from_cel(value: Any) -> Any:
    """A celpy value back to decoded JSON (other values, e.g. optionals, pass through)."""
    kind = type(value)
    scalar = _SCALAR_FROM_CEL.get(kind)
    if scalar is not None:
        return scalar(value)
    if kind in RAW:
        return value
    if kind is celtypes.ListType:
        return [from_cel(v) for v in value]
    if kind is celtypes.MapType and all(type(k) is celtypes.StringType for k in value):
        return {str(k): from_cel(v) for k, v in value.items()}
    return value  # optionals, validators, uints, timestamps...: compiled code falls back


def constant(value: Any) -> Code:
    """A literal."""
    return lambda env: value


def ident(name: str) -> Code:
    """An identifier of the activation (unbound: the interpreter names the error)."""

    def run(env: dict[str, Any]) -> Any:
        try:
            return env[name]
        except KeyError:
            raise Fallback from None

    return run


def select(base: Code, name: str, has: bool) -> Code:
    """``base.name`` on a map; inside ``has()`` (``has``) a missing field gives ``MISSING``."""
    if has:

        def probe(env: dict[str, Any]) -> Any:
            value = base(env)
            if value is MISSING:
                return value
            kind = type(value)
            if kind is dict:
                return value.get(name, MISSING)
            if kind in RAW:
                return MISSING  # celpy: "does not support field selection" -> has() false
            raise Fallback

        return probe

    def select(env: dict[str, Any]) -> Any:
        value = base(env)
        if type(value) is dict:
            try:
                return value[name]
            except KeyError:
                raise Fallback from None
        raise Fallback

    return select


def select_path(root: str, names: tuple[str, ...]) -> Code:
    """``root.n1.n2...`` in one closure (as nested ``select`` closures would give)."""

    def select(env: dict[str, Any]) -> Any:
        try:
            value = env[root]
        except KeyError:
            raise Fallback from None
        for name in names:
            if type(value) is not dict:
                raise Fallback
            value = value.get(name, MISSING)
            if value is MISSING:
                raise Fallback
        return value

    return select


def has_path(root: str, names: tuple[str, ...]) -> Code:
    """``has(root.n1.n2...)``: a missing field or a non-map on the way gives false.

    The same answers as nested ``select(..., has=True)`` closures under ``has()``.
    """
    if len(names) == 1:
        (name,) = names

        def has_one(env: dict[str, Any]) -> Any:
            try:
                value = env[root]
            except KeyError:
                raise Fallback from None
            kind = type(value)
            if kind is dict:
                return name in value
            if kind in RAW:
                return False
            raise Fallback

        return has_one

    def has_many(env: dict[str, Any]) -> Any:
        try:
            value = env[root]
        except KeyError:
            raise Fallback from None
        for name in names:
            kind = type(value)
            if kind is dict:
                if name not in value:
                    return False
                value = value[name]
            elif kind in RAW:
                return False
            else:
                raise Fallback
        return True

    return has_many


def ternary(cond: Code, yes: Code, no: Code) -> Code:
    """``cond ? yes : no`` with a bool condition."""

    def run(env: dict[str, Any]) -> Any:
        c = cond(env)
        if c is True:
            return yes(env)
        if c is False:
            return no(env)
        raise Fallback

    return run


def _short_circuit(left: Code, right: Code, decisive: bool) -> Code:
    """CEL's commutative ``&&`` / ``||`` (``decisive``: False / True).

    ``decisive`` on either side wins even if the other side errs; both sides ``not decisive``
    give that; anything else falls back to celpy.
    """
    other = not decisive

    def run(env: dict[str, Any]) -> Any:
        a = left(env)
        if a is decisive:
            return decisive
        b = right(env)
        if b is decisive or (a is other and b is other):
            return b
        raise Fallback

    return run


def logical_and(left: Code, right: Code) -> Code:
    """``&&``: false if either side is false (even if the other errs), true if both are."""
    return _short_circuit(left, right, False)


def logical_or(left: Code, right: Code) -> Code:
    """``||``: true if either side is true (even if the other errs), false if both are."""
    return _short_circuit(left, right, True)


def logical_not(operand: Code) -> Code:
    """``!`` of a bool."""

    def run(env: dict[str, Any]) -> Any:
        value = operand(env)
        if type(value) is bool:
            return not value
        raise Fallback

    return run


def negate(operand: Code) -> Code:
    """Unary ``-`` of an int (int64)."""

    def run(env: dict[str, Any]) -> Any:
        value = operand(env)
        if type(value) is int and INT64_MIN <= -value <= INT64_MAX:
            return -value
        raise Fallback

    return run


def _int_result(value: int) -> int:
    if INT64_MIN <= value <= INT64_MAX:
        return value
    raise Fallback


_EQUATABLE = frozenset({str, int, bool})
BINARY_OPS = frozenset(
    {
        "relation_eq",
        "relation_ne",
        "relation_in",
        *("relation_" + o for o in ("lt", "le", "gt", "ge")),
    }
    | {"addition_add", "addition_sub"}
)
_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "relation_lt": lambda a, b: a < b,
    "relation_le": lambda a, b: a <= b,
    "relation_gt": lambda a, b: a > b,
    "relation_ge": lambda a, b: a >= b,
    "addition_add": lambda a, b: _int_result(a + b),
    "addition_sub": lambda a, b: _int_result(a - b),
}


def binary(op: str, left: Code, right: Code) -> Code:
    """A relation or ``+``/``-``; ``op`` is the grammar's name (``relation_eq``...)."""
    if op in ("relation_eq", "relation_ne"):
        negate = op == "relation_ne"

        def equal(env: dict[str, Any]) -> Any:
            a, b = left(env), right(env)
            kind = type(a)
            if kind is type(b) and kind in _EQUATABLE:
                return (a == b) is not negate
            raise Fallback

        return equal
    if op == "relation_in":

        def contains(env: dict[str, Any]) -> Any:
            item, container = left(env), right(env)
            kind = type(item)
            if (
                kind in (str, int)
                and type(container) is list
                and all(type(x) is kind for x in container)
            ):
                return item in container
            raise Fallback

        return contains
    operation = _COMPARE[op]

    def ints(env: dict[str, Any]) -> Any:
        a, b = left(env), right(env)
        if type(a) is int and type(b) is int:
            return operation(a, b)
        raise Fallback

    return ints


def list_of(items: list[Code]) -> Code:
    """A list literal."""
    return lambda env: [item(env) for item in items]


def size(operand: Code) -> Code:
    """``size()`` of a string, list or map (celpy: ``size(null)`` is 0)."""

    def run(env: dict[str, Any]) -> Any:
        value = operand(env)
        if value is None:
            return 0
        if type(value) in (str, list, dict):
            return len(value)
        raise Fallback

    return run


def macro(target: Code, var: str, body: Code, every: bool) -> Code:
    """``all`` (``every``) or ``exists`` over a list whose bodies all give bools."""
    stop = not every  # the body result that decides the answer

    def run(env: dict[str, Any]) -> Any:
        items = target(env)
        if type(items) is not list:
            raise Fallback
        scope = dict(env)
        for item in items:
            scope[var] = item
            result = body(scope)
            if result is stop:
                return stop
            if result is not every:
                raise Fallback
        return every

    return run


def method(function: Callable[..., Any], target: Code, args: list[Code]) -> Code:
    """A function-table method, given celpy values exactly as the interpreter gives them."""
    if not args:

        def call0(env: dict[str, Any]) -> Any:
            value = target(env)
            try:
                return from_cel(function(to_cel(value)))
            except (TypeError, ValueError, AttributeError, LookupError):
                raise Fallback from None

        return call0
    if len(args) == 1:
        (arg,) = args

        def call1(env: dict[str, Any]) -> Any:
            value, argument = target(env), arg(env)
            try:
                return from_cel(function(to_cel(value), to_cel(argument)))
            except (TypeError, ValueError, AttributeError, LookupError):
                raise Fallback from None

        return call1

    def call(env: dict[str, Any]) -> Any:
        raw = [target(env), *(a(env) for a in args)]
        try:
            return from_cel(function(*[to_cel(v) for v in raw]))
        except (TypeError, ValueError, AttributeError, LookupError):
            raise Fallback from None

    return call
