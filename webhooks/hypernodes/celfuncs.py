"""Kubernetes CEL library functions celpy lacks, with Kubernetes' semantics.

``format.qualifiedName().validate(s)`` returns an optional list of errors, as
``validation.IsQualifiedName`` gives them; ``optional.hasValue()`` / ``.value()``. ``cel.py``
runs every expression with ``FUNCTIONS`` and binds ``LIBRARY`` (the ``format`` identifier);
compiled code calls the same functions with the same celpy values (``celclosures.method``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from celpy import celtypes

from volcano_py.api.selectors import is_qualified_name


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
