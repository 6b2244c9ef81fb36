"""The Queue admission services: ``/queues/validate`` and ``/queues/mutate``.

``register(router, view)`` adds both with Volcano's webhook names and rules
(``validatequeue.volcano.sh`` for CREATE, UPDATE and DELETE, ``mutatequeue.volcano.sh`` for
CREATE, ``scheduling.volcano.sh/v1beta1`` ``queues``). The rules live in ``rules.py``;
``view`` is a ``rules.ClusterView`` over the manager's shared caches. A denial lists every
problem found, each naming its field.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from volcano_py.api.errors import FieldError
from volcano_py.api.quantity import Quantity, add_resource_lists, parse_resource_list
from volcano_py.kube.store import Store
from webhooks.admission import allowed, denied
from webhooks.queues.rules import ClusterView, default_patch, validate, validate_delete
from webhooks.router import AdmissionRouter, rule_for

log = logging.getLogger(__name__)

VALIDATE_PATH = "/queues/validate"
MUTATE_PATH = "/queues/mutate"
VALIDATE_NAME = "validatequeue.volcano.sh"
MUTATE_NAME = "mutatequeue.volcano.sh"
QUEUES = "scheduling.volcano.sh/v1beta1", "queues", "Cluster"
VALIDATE_RULES = (rule_for(*QUEUES, "CREATE", "UPDATE", "DELETE"),)
MUTATE_RULES = (rule_for(*QUEUES, "CREATE"),)

__all__ = ["MUTATE_PATH", "VALIDATE_PATH", "ClusterView", "cluster_view", "register"]


def _object(request: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    obj = request.get(key)
    return obj if isinstance(obj, Mapping) else None


def make_validate(view: ClusterView) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """The validating admission function."""

    def validate_queue(review: Mapping[str, Any]) -> dict[str, Any]:
        request = review.get("request") or {}
        operation = request.get("operation")
        if operation == "DELETE":
            deleted = _object(request, "oldObject") or {}
            state = str((deleted.get("status") or {}).get("state") or "Open")
            problems = validate_delete(str(request.get("name") or ""), view, state)
        elif operation in ("CREATE", "UPDATE"):
            queue = _object(request, "object")
            if queue is None:
                return denied("request.object is not a Queue object", "BadRequest")
            old = _object(request, "oldObject") if operation == "UPDATE" else None
            problems = validate(queue, old, view)
        else:
            return allowed()
        if problems:
            log.info("queue %s %s denied: %s", request.get("name"), operation, "; ".join(problems))
            return denied("; ".join(problems))
        return allowed()

    return validate_queue


def mutate_queue(review: Mapping[str, Any]) -> dict[str, Any]:
    """The mutating admission function: Volcano's defaults as a JSON patch."""
    request = review.get("request") or {}
    queue = _object(request, "object")
    if request.get("operation") != "CREATE" or queue is None:
        return allowed()
    patch = default_patch(queue)
    response = allowed()
    if patch:
        response["patchType"] = "JSONPatch"
        response["patch"] = base64.b64encode(orjson.dumps(patch)).decode()
    return response


def _allocatable(nodes: Store) -> dict[str, Quantity]:
    lists = []
    for node in nodes.list():
        try:
            lists.append(parse_resource_list((node.get("status") or {}).get("allocatable")))
        except FieldError:
            continue
    return add_resource_lists(*lists)


def cluster_view(queues: Store, podgroups: Store, nodes: Store) -> ClusterView:
    """A ``ClusterView`` over the shared Queue, PodGroup and Node caches."""

    def podgroups_in(name: str) -> int:
        return sum(
            1
            for pg in podgroups.list()
            if ((pg.get("spec") or {}).get("queue") or "default") == name
        )

    return ClusterView(queues.list, podgroups_in, lambda: _allocatable(nodes))


def register(router: AdmissionRouter, view: ClusterView) -> None:
    """Register ``/queues/validate`` and ``/queues/mutate``."""
    router.register(VALIDATE_PATH, make_validate(view), VALIDATE_RULES, name=VALIDATE_NAME)
    router.register(MUTATE_PATH, mutate_queue, MUTATE_RULES, name=MUTATE_NAME)
