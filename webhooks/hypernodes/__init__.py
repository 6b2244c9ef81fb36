"""The HyperNode admission service: ``/hypernodes/validate`` for CREATE and UPDATE.

``register(router, lister)`` adds the service to an ``AdmissionRouter``; the function decodes
the AdmissionReview's object and runs ``HyperNodeValidator`` (schema -> CEL -> RE2 -> tree).
Volcano's webhook name and rules are kept: ``validatehypernode.volcano.sh``,
``topology.volcano.sh/v1alpha1`` ``hypernodes``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from webhooks.admission import allowed, denied
from webhooks.hypernodes.tree import HyperNodeLister
from webhooks.hypernodes.validator import HyperNodeValidator, Verdict
from webhooks.router import AdmissionRouter, AdmissionService, WebhookRule

log = logging.getLogger(__name__)

PATH = "/hypernodes/validate"
WEBHOOK_NAME = "validatehypernode.volcano.sh"
RULES = (
    WebhookRule(
        operations=("CREATE", "UPDATE"),
        api_groups=("topology.volcano.sh",),
        api_versions=("v1alpha1",),
        resources=("hypernodes",),
        scope="Cluster",
    ),
)

__all__ = ["PATH", "RULES", "WEBHOOK_NAME", "HyperNodeValidator", "Verdict", "register"]


def make_admit(validator: HyperNodeValidator) -> Any:
    """The admission function over ``validator``."""

    def admit_hypernode(review: Mapping[str, Any]) -> dict[str, Any]:
        request = review.get("request") or {}
        operation = request.get("operation")
        if operation not in ("CREATE", "UPDATE"):
            return allowed()
        obj = request.get("object")
        if not isinstance(obj, Mapping):
            return denied("request.object is not a HyperNode object", "BadRequest")
        old = request.get("oldObject")
        verdict = validator.validate(obj, old if isinstance(old, Mapping) else None)
        name = (obj.get("metadata") or {}).get("name") if isinstance(obj, Mapping) else None
        if verdict.allowed:
            log.debug("hypernode %s %s: allowed", name, operation)
            return allowed(verdict.warnings)
        log.info("hypernode %s %s denied (%s): %s", name, operation, verdict.stage, verdict.message)
        code = 403 if verdict.reason == "Forbidden" else 400
        return denied(verdict.message, verdict.reason or "Invalid", code, verdict.warnings)

    return admit_hypernode


def register(
    router: AdmissionRouter,
    lister: HyperNodeLister | None = None,
    validator: HyperNodeValidator | None = None,
) -> AdmissionService:
    """Register ``/hypernodes/validate``; ``lister`` holds the HyperNodes in the cluster."""
    validator = validator if validator is not None else HyperNodeValidator(lister)
    return router.register(PATH, make_admit(validator), RULES, name=WEBHOOK_NAME)
