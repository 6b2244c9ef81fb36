"""Kubernetes label selectors (``metav1.LabelSelector``) and the name/label validators.

``LabelSelector.from_dict`` reads a selector from JSON. Shape errors (a list where an object
belongs, a number where a string belongs) always raise ``FieldError``; the API server's own
checks (known operator, values present for ``In``/``NotIn`` and absent for ``Exists``/
``DoesNotExist``, valid label keys and values) raise too unless ``strict=False``, which keeps
the problems in ``.errors`` instead: a CRD such as HyperNode gets no such checks from the API
server, so a cached object may carry a selector Kubernetes could not turn into a
``labels.Selector``. Such a selector matches nothing, as the failed conversion does in Volcano.

``matches`` follows the API server: ``matchLabels`` and every expression must hold; ``NotIn``
and ``DoesNotExist`` hold when the key is absent; an empty selector matches everything
(HyperNode ``labelMatch`` treats empty as nothing; ``hypernode.py`` handles that).

The validators return Kubernetes' error strings, so the webhook's CEL ``format`` functions
and our validation messages read exactly like the API server's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from enum import StrEnum
from typing import Any

from volcano_py.api.errors import FieldError, child, forbidden, index, invalid, key, required


class Operator(StrEnum):
    """``matchExpressions[].operator``."""

    IN = "In"
    NOT_IN = "NotIn"
    EXISTS = "Exists"
    DOES_NOT_EXIST = "DoesNotExist"


@dataclass(frozen=True, slots=True)
class Requirement:
    """One ``matchExpressions`` entry: ``key``, ``operator`` and the set of ``values``."""

    key: str
    operator: str
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether ``labels`` satisfy this requirement."""
        op = self.operator
        if op == Operator.IN:
            value = labels.get(self.key)
            return value is not None and value in self.values
        if op == Operator.NOT_IN:
            value = labels.get(self.key)
            return value is None or value not in self.values
        if op == Operator.EXISTS:
            return self.key in labels
        if op == Operator.DOES_NOT_EXIST:
            return self.key not in labels
        return False


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """A parsed ``metav1.LabelSelector``; ``errors`` lists what the API server would reject."""

    match_labels: tuple[tuple[str, str], ...] = ()
    match_expressions: tuple[Requirement, ...] = ()
    errors: tuple[FieldError, ...] = dataclass_field(default=(), compare=False)

    @classmethod
    def from_dict(cls, data: Any, field: str = "", *, strict: bool = True) -> LabelSelector:
        """Read a selector from JSON; ``field`` is where it sits, used in error messages.

        Raises:
            FieldError: a shape error, or (when ``strict``) the first API-server check failing.
        """
        if data is None:
            return cls()
        if not isinstance(data, Mapping):
            raise invalid(field, data, "must be an object")
        match_labels = _read_match_labels(data.get("matchLabels"), child(field, "matchLabels"))
        expressions = _read_expressions(
            data.get("matchExpressions"), child(field, "matchExpressions")
        )
        errors = tuple(_validate(match_labels, expressions, field))
        if strict and errors:
            raise errors[0]
        requirements = tuple(Requirement(k, op, frozenset(vs)) for k, op, vs in expressions)
        return cls(match_labels, requirements, errors)

    @property
    def is_empty(self) -> bool:
        """No ``matchLabels`` and no ``matchExpressions``."""
        return not self.match_labels and not self.match_expressions

    @property
    def is_valid(self) -> bool:
        """Whether the API server would accept it (and Kubernetes could build a selector)."""
        return not self.errors

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether ``labels`` satisfy every term. Empty matches all; invalid matches none."""
        if self.errors:
            return False
        for name, value in self.match_labels:
            if labels.get(name) != value:
                return False
        return all(requirement.matches(labels) for requirement in self.match_expressions)

    def to_dict(self) -> dict[str, Any]:
        """Back to JSON (values of each expression sorted)."""
        out: dict[str, Any] = {}
        if self.match_labels:
            out["matchLabels"] = dict(self.match_labels)
        if self.match_expressions:
            out["matchExpressions"] = [
                {"key": r.key, "operator": r.operator, "values": sorted(r.values)}
                if r.values
                else {"key": r.key, "operator": r.operator}
                for r in self.match_expressions
            ]
        return out


def _read_match_labels(data: Any, field: str) -> tuple[tuple[str, str], ...]:
    if data is None:
        return ()
    if not isinstance(data, Mapping):
        raise invalid(field, data, "must be an object of label keys to values")
    pairs = []
    for name, value in data.items():
        if not isinstance(value, str):
            raise invalid(key(field, str(name)), value, "must be a string")
        pairs.append((str(name), value))
    return tuple(sorted(pairs))


_RawExpression = tuple[str, str, tuple[str, ...]]


def _read_expressions(data: Any, field: str) -> tuple[_RawExpression, ...]:
    if data is None:
        return ()
    if not isinstance(data, list):
        raise invalid(field, data, "must be a list")
    expressions = []
    for i, item in enumerate(data):
        path = index(field, i)
        if not isinstance(item, Mapping):
            raise invalid(path, item, "must be an object")
        key = _required_string(item, "key", path)
        operator = _required_string(item, "operator", path)
        values = item.get("values") or []
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise invalid(child(path, "values"), values, "must be a list of strings")
        expressions.append((key, operator, tuple(values)))
    return tuple(expressions)


def _required_string(item: Mapping[str, Any], name: str, path: str) -> str:
    value = item.get(name)
    if value is None:
        raise required(child(path, name), "")
    if not isinstance(value, str):
        raise invalid(child(path, name), value, "must be a string")
    return value


def _validate(
    match_labels: tuple[tuple[str, str], ...],
    expressions: tuple[_RawExpression, ...],
    field: str,
) -> list[FieldError]:
    """The API server's ``ValidateLabelSelector``, in its order."""
    errors: list[FieldError] = []
    labels_path = child(field, "matchLabels")
    for name, value in match_labels:
        errors += [invalid(labels_path, name, msg) for msg in is_qualified_name(name)]
        errors += [invalid(labels_path, value, msg) for msg in is_valid_label_value(value)]
    for i, (name, op, values) in enumerate(expressions):
        path = index(child(field, "matchExpressions"), i)
        values_path = child(path, "values")
        if op in (Operator.IN, Operator.NOT_IN):
            if not values:
                detail = "must be specified when `operator` is 'In' or 'NotIn'"
                errors.append(required(values_path, detail))
        elif op in (Operator.EXISTS, Operator.DOES_NOT_EXIST):
            if values:
                detail = "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
                errors.append(forbidden(values_path, detail))
        else:
            errors.append(invalid(child(path, "operator"), op, "not a valid selector operator"))
        errors += [invalid(child(path, "key"), name, msg) for msg in is_qualified_name(name)]
        for j, value in enumerate(values):
            value_path = index(values_path, j)
            errors += [invalid(value_path, value, msg) for msg in is_valid_label_value(value)]
    return errors


# --- validators (k8s.io/apimachinery: content.IsLabelKey, IsLabelValue, IsDNS1123Subdomain) ----

_LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_KEY_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_LABEL_VALUE_FMT = f"({_LABEL_KEY_FMT})?"
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
    "or '.', and must start and end with an alphanumeric character"
)
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + r"(\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character"
)
_LABEL_KEY_RE = re.compile(_LABEL_KEY_FMT)
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT)
_DNS1123_LABEL_RE = re.compile(_DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN_RE = re.compile(_DNS1123_SUBDOMAIN_FMT)


def regex_error(message: str, fmt: str, *examples: str) -> str:
    """Kubernetes' ``RegexError`` wording (including its ``',  or '`` double space)."""
    if not examples:
        return f"{message} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{example}', " for example in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{fmt}')"


def _max_len(limit: int, unit: str) -> str:
    return f"must be no more than {limit} {unit}"


def is_qualified_name(value: str) -> list[str]:
    """Errors for a label key / qualified name (``example.com/MyName``); empty when valid."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs += ["prefix part " + msg for msg in _dns1123_subdomain(prefix, "bytes")]
    else:
        return [
            "a valid label key "
            + regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif _byte_len(name) > 63:
        errs.append("name part " + _max_len(63, "bytes"))
    if not _LABEL_KEY_RE.fullmatch(name):
        detail = regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
        errs.append("name part " + detail)
    return errs


def is_valid_label_value(value: str) -> list[str]:
    """Errors for a label value (empty is valid); empty list when valid."""
    errs: list[str] = []
    if _byte_len(value) > 63:
        errs.append(_max_len(63, "bytes"))
    if not _LABEL_VALUE_RE.fullmatch(value):
        errs.append(regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def is_dns1123_subdomain(value: str) -> list[str]:
    """Errors for a lowercase RFC 1123 subdomain (most object names); empty when valid."""
    return _dns1123_subdomain(value, "characters")


def is_dns1123_label(value: str) -> list[str]:
    """Errors for a lowercase RFC 1123 label (namespace names); empty when valid."""
    errs: list[str] = []
    if _byte_len(value) > 63:
        errs.append(_max_len(63, "characters"))
    if not _DNS1123_LABEL_RE.fullmatch(value):
        if _DNS1123_SUBDOMAIN_RE.fullmatch(value):
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(_DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def _dns1123_subdomain(value: str, unit: str) -> list[str]:
    # The label-key prefix check uses the newer wording ("bytes"), object names the older one.
    errs: list[str] = []
    if _byte_len(value) > 253:
        errs.append(_max_len(253, unit))
    if not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        errs.append(regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def _byte_len(value: str) -> int:
    """Go's ``len``: UTF-8 bytes."""
    return len(value) if value.isascii() else len(value.encode("utf-8"))
