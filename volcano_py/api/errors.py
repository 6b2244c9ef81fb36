"""The one error type the API layer raises for bad input: a message pinned to a JSON path.

Views (``HyperNode.from_dict``, ``PodGroup.from_dict``), selectors and resource lists
raise ``FieldError`` naming the exact field that is wrong, the way the API server's
``field.Error`` does (``spec.members[2].selector.regexMatch.pattern: ...``). Callers that
turn these into admission denials, events or CLI output use ``str(err)`` as it is.
"""

from __future__ import annotations

import json
from typing import Any


class FieldError(ValueError):
    """A value at ``field`` (a JSON path such as ``spec.members[1].type``) is invalid."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message

    def __reduce__(self) -> tuple[type[FieldError], tuple[str, str]]:
        return (type(self), (self.field, self.message))


def child(path: str, name: str) -> str:
    """``path.name``, or just ``name`` at the root (the API server's ``Path.Child``)."""
    return f"{path}.{name}" if path else name


def index(path: str, i: int) -> str:
    """``path[i]`` (the API server's ``Path.Index``)."""
    return f"{path}[{i}]"


def key(path: str, k: str) -> str:
    """``path[k]`` for a map key (the API server's ``Path.Key``)."""
    return f"{path}[{k}]"


def invalid(field: str, value: Any, detail: str) -> FieldError:
    """The API server's ``field.Invalid``: ``Invalid value: "<value>": <detail>``."""
    return FieldError(field, f"Invalid value: {_render(value)}: {detail}")


def required(field: str, detail: str) -> FieldError:
    """The API server's ``field.Required``: ``Required value: <detail>``."""
    return FieldError(field, f"Required value: {detail}" if detail else "Required value")


def forbidden(field: str, detail: str) -> FieldError:
    """The API server's ``field.Forbidden``: ``Forbidden: <detail>``."""
    return FieldError(field, f"Forbidden: {detail}" if detail else "Forbidden")


def _render(value: Any) -> str:
    """Show a bad value the way ``field.Error`` does: strings quoted, numbers bare, else JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    except (TypeError, ValueError):
        return repr(value)
