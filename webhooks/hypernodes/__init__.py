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
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from webhooks.admission import allowed, denied
from webhooks.deferred import Deferred
from webhooks.hypernodes.tree import HyperNodeLister
from webhooks.router import AdmissionRouter, AdmissionService, rule_for

if TYPE_CHECKING:
    from webhooks.hypernodes.validator import HyperNodeValidator, Verdict

log = logging.getLogger(__name__)

PATH = "/hypernodes/validate"
WEBHOOK_NAME = "validatehypernode.volcano.sh"
RULES = (rule_for("topology.volcano.sh/v1alpha1", "hypernodes", "Cluster", "CREATE", "UPDATE"),)

__all__ = [
    "PATH",
    "RULES",
    "WEBHOOK_NAME",
    "DeferredValidator",
    "HyperNodeValidator",
    "Verdict",
    "register",
]


def __getattr__(name: str) -> Any:
    """``HyperNodeValidator`` and ``Verdict``, imported on first use.

    The validator module imports cel-python and lark (~0.05 s), which a starting manager need
    not wait for.
    """
    if name in ("HyperNodeValidator", "Verdict"):
        from webhooks.hypernodes import validator

        value = getattr(validator, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def new_validator(lister: HyperNodeLister | None) -> HyperNodeValidator:
    """A ``HyperNodeValidator`` over ``lister`` (the module's class, however it was set)."""
    cls = globals().get("HyperNodeValidator") or __getattr__("HyperNodeValidator")
    validator: HyperNodeValidator = cls(lister)
    return validator


class DeferredValidator(Deferred["HyperNodeValidator"]):
    """A ``HyperNodeValidator`` built once, on first use or ``warm()``; thread-safe."""

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
        validator = DeferredValidator(lambda: new_validator(lister))
    return router.register(PATH, make_admit(validator), RULES, name=WEBHOOK_NAME)
