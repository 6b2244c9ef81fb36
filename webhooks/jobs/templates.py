"""The pod template checks of Job admission: what Volcano's ``ValidatePodTemplate`` call denies.

Volcano validates each task's template with Kubernetes' own pod-template validation and
prefixes the errors with ``spec.task[<i>].``. volcano-py checks the part of it a Job can get
wrong without the pods ever being created (the API server checks the rest when a pod is
created): each container's (and init container's) ``resources`` quantities parse, are not
negative, and requests do not exceed limits. Messages carry Kubernetes' wording after our
field path, e.g. ``spec.tasks[0].template.spec.containers[0].resources.requests[cpu]:
Invalid value: "-1": must be greater than or equal to 0``.

Runs after ``shapes.py``, so the fields read here have their types.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from volcano_py.api.quantity import Quantity, QuantityError, parse_quantity

ZERO = Quantity(0)


def _quantity(value: Any) -> Quantity:
    return parse_quantity(value if isinstance(value, str) else str(value))


def _container(container: Mapping[str, Any], path: str) -> list[str]:
    resources = container.get("resources") or {}
    problems: list[str] = []
    parsed: dict[str, dict[str, Quantity]] = {"requests": {}, "limits": {}}
    for part in ("requests", "limits"):
        for name, value in (resources.get(part) or {}).items():
            at = f"{path}.resources.{part}[{name}]"
            try:
                amount = _quantity(value)
            except QuantityError as e:
                problems.append(f'{at}: Invalid value: "{value}": {e.reason}')
                continue
            if amount < ZERO:
                problems.append(
                    f'{at}: Invalid value: "{value}": must be greater than or equal to 0'
                )
                continue
            parsed[part][str(name)] = amount
    for name, request in parsed["requests"].items():
        limit = parsed["limits"].get(name)
        if limit is not None and request > limit:
            wanted, raw = resources["requests"][name], resources["limits"][name]
            problems.append(
                f'{path}.resources.requests[{name}]: Invalid value: "{wanted}": '
                f"must be less than or equal to {name} limit of {raw}"
            )
    return problems


def template_problems(template: Mapping[str, Any], path: str) -> list[str]:
    """The problems of one task's pod template at ``path`` (see the module docstring)."""
    spec = template.get("spec") or {}
    problems: list[str] = []
    for field in ("initContainers", "containers"):
        for j, container in enumerate(spec.get(field) or []):
            problems += _container(container, f"{path}.spec.{field}[{j}]")
    return problems
