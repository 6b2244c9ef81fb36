"""``/podgroups/mutate``: Volcano's PodGroup mutation (``mutatepodgroup.volcano.sh``, CREATE).

A PodGroup created in the ``default`` queue (the CRD's default when it names none) whose
namespace carries the ``scheduling.volcano.sh/queue-name`` annotation is moved to that queue:
a namespace can send all its gangs to its team's queue. ``namespace_of(name)`` reads the
Namespace (the shared Namespace cache in the manager); a namespace not found leaves the
PodGroup as it is, as Volcano does.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from volcano_py.api.constants import DEFAULT_QUEUE, QUEUE_NAME_ANNOTATION
from webhooks.admission import allowed
from webhooks.router import AdmissionRouter, rule_for

MUTATE_PATH = "/podgroups/mutate"
MUTATE_NAME = "mutatepodgroup.volcano.sh"
MUTATE_RULES = (rule_for("scheduling.volcano.sh/v1beta1", "podgroups", "*", "CREATE"),)
NamespaceLookup = Callable[[str], Mapping[str, Any] | None]

__all__ = ["MUTATE_PATH", "queue_patch", "register"]


def queue_patch(podgroup: Mapping[str, Any], namespace: Mapping[str, Any] | None) -> list[Any]:
    """The JSON patch moving ``podgroup`` to its namespace's queue, or ``[]``."""
    spec = podgroup.get("spec") or {}
    if (spec.get("queue") or DEFAULT_QUEUE) != DEFAULT_QUEUE or namespace is None:
        return []
    annotations = (namespace.get("metadata") or {}).get("annotations") or {}
    queue = annotations.get(QUEUE_NAME_ANNOTATION)
    if not isinstance(queue, str) or not queue:
        return []
    return [{"op": "add", "path": "/spec/queue", "value": queue}]


def make_mutate(namespace_of: NamespaceLookup) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """The mutating admission function."""

    def mutate(review: Mapping[str, Any]) -> dict[str, Any]:
        request = review.get("request") or {}
        podgroup = request.get("object")
        if request.get("operation") != "CREATE" or not isinstance(podgroup, Mapping):
            return allowed()
        name = request.get("namespace") or (podgroup.get("metadata") or {}).get("namespace")
        patch = queue_patch(podgroup, namespace_of(str(name or "")))
        response = allowed()
        if patch:
            response["patchType"] = "JSONPatch"
            response["patch"] = base64.b64encode(orjson.dumps(patch)).decode()
        return response

    return mutate


def register(router: AdmissionRouter, namespace_of: NamespaceLookup = lambda name: None) -> None:
    """Register ``/podgroups/mutate``."""
    router.register(MUTATE_PATH, make_mutate(namespace_of), MUTATE_RULES, name=MUTATE_NAME)
