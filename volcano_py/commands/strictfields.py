"""Unknown fields in a HyperNode manifest: what ``kubectl apply`` refuses by default.

kubectl asks the API server for strict field validation (``--validate=strict``, the default
since Kubernetes 1.27), so a misspelt or misplaced field (``spec.member``, ``spec.tierNmae``)
is refused with ``strict decoding error: unknown field "spec.tierNmae"`` instead of being
silently dropped. ``unknown_fields`` walks the CRD's ``openAPIV3Schema`` the same way: an
object schema with ``properties`` and neither ``additionalProperties`` nor
``x-kubernetes-preserve-unknown-fields`` admits only its properties; ``metadata`` is
ObjectMeta, which the CRD leaves open and the API server checks itself.

Not a subcommand itself (it is not listed in ``COMMANDS``).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from webhooks.hypernodes.schema import load_crd


@cache
def hypernode_schema() -> Mapping[str, Any]:
    """The served version's ``openAPIV3Schema`` of the packaged HyperNode CRD."""
    crd = load_crd()
    version = next(v for v in crd["spec"]["versions"] if v.get("served", True))
    schema: Mapping[str, Any] = version["schema"]["openAPIV3Schema"]
    return schema


def unknown_fields(obj: Any, schema: Mapping[str, Any] | None = None, path: str = "") -> list[str]:
    """The JSON paths in ``obj`` that ``schema`` does not know (sorted, depth first)."""
    schema = hypernode_schema() if schema is None else schema
    found: list[str] = []
    if isinstance(obj, Mapping) and schema.get("type") == "object":
        props = schema.get("properties")
        open_ended = schema.get("x-kubernetes-preserve-unknown-fields") or (
            "additionalProperties" in schema
        )
        for key in sorted(obj, key=str):
            child = f"{path}.{key}" if path else str(key)
            if props is not None and key in props:
                if child != "metadata":
                    found += unknown_fields(obj[key], props[key], child)
            elif isinstance(schema.get("additionalProperties"), Mapping):
                found += unknown_fields(obj[key], schema["additionalProperties"], child)
            elif props is not None and not open_ended:
                found.append(child)
    elif isinstance(obj, list) and isinstance(schema.get("items"), Mapping):
        for i, item in enumerate(obj):
            found += unknown_fields(item, schema["items"], f"{path}[{i}]")
    return found
