"""The Volcano Job admission services: ``/jobs/validate`` and ``/jobs/mutate``.

``register(router, queue_of, children)`` adds both to an ``AdmissionRouter`` with Volcano's
webhook names and rules (``validatejob.volcano.sh`` for CREATE and UPDATE,
``mutatejob.volcano.sh`` for CREATE, ``batch.volcano.sh/v1alpha1`` ``jobs``). The rules live
in ``rules.py``; ``queue_of`` reads a Queue by name (the shared Queue cache in the manager),
``children`` counts a queue's child queues. A denial lists every problem found, each naming
its field.

Both endpoints first refuse an object that is not a ``batch.volcano.sh/v1alpha1`` Job (a
HyperNode sent to ``/jobs/mutate`` is denied, never patched), then check the Job's shape
(``shapes.py``): a wrong type is a denial naming the field, never an exception, so the
mutating webhook, which runs before the CRD schema, never answers 5xx.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from webhooks.admission import allowed, denied
from webhooks.jobs.rules import (
    QueueLookup,
    default_patch,
    plugin_warnings,
    validate_create,
    validate_update,
)
from webhooks.jobs.shapes import kind_problem, shape_problems
from webhooks.router import AdmissionRouter, rule_for

log = logging.getLogger(__name__)

VALIDATE_PATH = "/jobs/validate"
MUTATE_PATH = "/jobs/mutate"
VALIDATE_NAME = "validatejob.volcano.sh"
MUTATE_NAME = "mutatejob.volcano.sh"
JOBS = "batch.volcano.sh/v1alpha1", "jobs", "Namespaced"
VALIDATE_RULES = (rule_for(*JOBS, "CREATE", "UPDATE"),)
MUTATE_RULES = (rule_for(*JOBS, "CREATE"),)

__all__ = ["MUTATE_PATH", "VALIDATE_PATH", "register"]


def _object(request: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    obj = request.get(key)
    return obj if isinstance(obj, Mapping) else None


def _refusal(job: Mapping[str, Any]) -> dict[str, Any] | None:
    """A denial for an object that is not a Job, or a Job of the wrong shape; else None."""
    wrong_kind = kind_problem(job)
    if wrong_kind is not None:
        return denied(wrong_kind, "BadRequest")
    problems = shape_problems(job)
    return denied("; ".join(problems)) if problems else None


def make_validate(
    queue_of: QueueLookup | None, children: Callable[[str], int]
) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """The validating admission function."""

    def validate_job(review: Mapping[str, Any]) -> dict[str, Any]:
        request = review.get("request") or {}
        operation = request.get("operation")
        job = _object(request, "object")
        if job is None:
            return denied("request.object is not a Job object", "BadRequest")
        refusal = _refusal(job)
        if refusal is not None:
            return refusal
        if operation == "CREATE":
            problems = validate_create(job, queue_of, children)
        elif operation == "UPDATE":
            old = _object(request, "oldObject")
            if old is not None and _refusal(old) is not None:
                old = None  # an unreadable stored Job: judge the new one on its own
            problems = validate_update(old, job) if old is not None else []
        else:
            return allowed()
        name = (job.get("metadata") or {}).get("name")
        if problems:
            log.info("job %s %s denied: %s", name, operation, "; ".join(problems))
            return denied("; ".join(problems))
        return allowed(plugin_warnings(job) if operation == "CREATE" else ())

    return validate_job


def mutate_job(review: Mapping[str, Any]) -> dict[str, Any]:
    """The mutating admission function: Volcano's defaults as a JSON patch."""
    request = review.get("request") or {}
    job = _object(request, "object")
    if request.get("operation") != "CREATE":
        return allowed()
    if job is None:
        return denied("request.object is not a Job object", "BadRequest")
    refusal = _refusal(job)
    if refusal is not None:
        return refusal
    patch = default_patch(job)
    response = allowed()
    if patch:
        response["patchType"] = "JSONPatch"
        response["patch"] = base64.b64encode(orjson.dumps(patch)).decode()
    return response


def register(
    router: AdmissionRouter,
    queue_of: QueueLookup | None = None,
    children: Callable[[str], int] = lambda name: 0,
) -> None:
    """Register ``/jobs/validate`` and ``/jobs/mutate``."""
    validate = make_validate(queue_of, children)
    router.register(VALIDATE_PATH, validate, VALIDATE_RULES, name=VALIDATE_NAME)
    router.register(MUTATE_PATH, mutate_job, MUTATE_RULES, name=MUTATE_NAME)
