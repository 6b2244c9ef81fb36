"""``/pods/validate``: Volcano's pod admission (``validatepod.volcano.sh``, CREATE).

A pod our scheduler schedules (``spec.schedulerName`` one of ours) may carry one job
disruption budget annotation, ``volcano.sh/jdb-min-available`` or
``volcano.sh/jdb-max-unavailable``, not both; its value is a positive integer (``3``) or a
percentage from 1% to 99% (``30%``). Anything else is refused naming the annotation. Pods
of other schedulers are never looked at.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from volcano_py.api.constants import (
    DEFAULT_SCHEDULER_NAME,
    JDB_MAX_UNAVAILABLE,
    JDB_MIN_AVAILABLE,
)
from webhooks.admission import allowed, denied
from webhooks.router import AdmissionRouter, rule_for

log = logging.getLogger(__name__)

VALIDATE_PATH = "/pods/validate"
VALIDATE_NAME = "validatepod.volcano.sh"
VALIDATE_RULES = (rule_for("v1", "pods", "*", "CREATE"),)

__all__ = ["VALIDATE_PATH", "register", "validate_pod"]


def _budget(key: str, value: Any) -> str | None:
    """The problem with one budget value, or None (Kubernetes' IntOrString reading)."""
    text = str(value)
    field = f"metadata.annotations[{key}]"
    if text.lstrip("-").isdigit():
        if int(text) <= 0:
            return f"{field}: Invalid value: {text!r}: must be a positive integer"
        return None
    number = text.replace("%", "")
    if not number.lstrip("-").isdigit():
        return f"{field}: Invalid value: {text!r}: neither an integer nor a percentage"
    if not 0 < int(number) < 100:
        return (
            f"{field}: Invalid value: {text!r}: it must be a valid percentage which "
            "between 1% ~ 99%"
        )
    return None


def validate_pod(pod: Mapping[str, Any], scheduler_names: Sequence[str]) -> list[str]:
    """The problems with creating ``pod``; empty means allowed."""
    if (pod.get("spec") or {}).get("schedulerName") not in scheduler_names:
        return []
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    present = [k for k in (JDB_MIN_AVAILABLE, JDB_MAX_UNAVAILABLE) if k in annotations]
    for key in present:
        problem = _budget(key, annotations[key])
        if problem:
            return [problem]
    if len(present) > 1:
        return [
            f"metadata.annotations: Invalid value: not allow configure multiple annotations "
            f"<{JDB_MIN_AVAILABLE}, {JDB_MAX_UNAVAILABLE}> at same time"
        ]
    return []


def make_validate(
    scheduler_names: Sequence[str],
) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """The validating admission function."""

    def validate(review: Mapping[str, Any]) -> dict[str, Any]:
        request = review.get("request") or {}
        pod = request.get("object")
        if request.get("operation") != "CREATE":
            return allowed()
        if not isinstance(pod, Mapping):
            return denied("request.object is not a Pod object", "BadRequest")
        problems = validate_pod(pod, scheduler_names)
        if problems:
            log.info("pod %s/%s denied: %s", request.get("namespace"), request.get("name"),
                     "; ".join(problems))  # fmt: skip
            return denied("; ".join(problems))
        return allowed()

    return validate


def register(
    router: AdmissionRouter, scheduler_names: Sequence[str] = (DEFAULT_SCHEDULER_NAME,)
) -> None:
    """Register ``/pods/validate``."""
    router.register(VALIDATE_PATH, make_validate(scheduler_names), VALIDATE_RULES,
                    name=VALIDATE_NAME)  # fmt: skip
