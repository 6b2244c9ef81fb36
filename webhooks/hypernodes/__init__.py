"""The HyperNode admission service: ``/hypernodes/validate`` for CREATE and UPDATE.

``register(router, lister)`` adds the service to an ``AdmissionRouter``; the function decodes
the AdmissionReview's object and runs ``HyperNodeValidator`` (schema -> CEL -> RE2 -> tree).

Building the validator parses and compiles the CEL policy (celpy's LALR parser alone is
~0.2 s on an idle core, seconds on a loaded one), so ``register`` does not build it: a
``DeferredValidator`` builds it once, on the first review or when ``warm()`` is called,
which the manager does after its first scheduling cycle, off the start-up path.
Volcano's webhook name and rules are kept: ``validatehypernode.volcano.sh``,
``topology.volcano.sh/v1alpha1`` ``hypernodes``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
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

__all__ = [
    "PATH",
    "RULES",
    "WEBHOOK_NAME",
    "DeferredValidator",
    "HyperNodeValidator",
    "Verdict",
    "register",
]


class DeferredValidator:
    """A ``HyperNodeValidator`` built once, on first use or ``warm()``; thread-safe."""

    def __init__(self, build: Callable[[], HyperNodeValidator]) -> None:
        """``build`` makes the validator; it runs at most once (again only if it raised)."""
        self._build = build
        self._lock = threading.Lock()
        self._validator: HyperNodeValidator | None = None

    @property
    def built(self) -> bool:
        """Whether the validator exists yet."""
        return self._validator is not None

    def warm(self) -> HyperNodeValidator:
        """Build the validator now unless it exists; return it."""
        validator = self._validator
        if validator is None:
            with self._lock:
                if self._validator is None:
                    self._validator = self._build()
                validator = self._validator
        return validator

    def validate(self, obj: Mapping[str, Any], old: Mapping[str, Any] | None = None) -> Verdict:
        """``HyperNodeValidator.validate``, building it first if needed."""
        return self.warm().validate(obj, old)


def make_admit(validator: HyperNodeValidator | DeferredValidator) -> Any:
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
    validator: HyperNodeValidator | DeferredValidator | None = None,
) -> AdmissionService:
    """Register ``/hypernodes/validate``; ``lister`` holds the HyperNodes in the cluster.

    Without ``validator`` the service gets a ``DeferredValidator`` over ``lister``; pass one
    to keep a handle on it (``warm()``).
    """
    if validator is None:
        validator = DeferredValidator(lambda: HyperNodeValidator(lister))
    return router.register(PATH, make_admit(validator), RULES, name=WEBHOOK_NAME)
