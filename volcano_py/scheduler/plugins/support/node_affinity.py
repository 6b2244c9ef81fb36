"""Node selector, node affinity and taint/toleration matching (pure functions on dicts).

Semantics of the Kubernetes scheduler's NodeAffinity and TaintToleration plugins: terms of
``requiredDuringSchedulingIgnoredDuringExecution`` are ORed, the expressions in a term ANDed;
operators In, NotIn, Exists, DoesNotExist, Gt, Lt; ``matchFields`` on ``metadata.name``.
Taints with effect NoSchedule or NoExecute must be tolerated.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from volcano_py.api import JSON


def _expression_matches(expr: Mapping[str, Any], value: str | None) -> bool:
    operator = expr.get("operator")
    values = expr.get("values") or []
    if operator == "In":
        return value is not None and value in values
    if operator == "NotIn":
        return value is None or value not in values
    if operator == "Exists":
        return value is not None
    if operator == "DoesNotExist":
        return value is None
    if operator in ("Gt", "Lt") and value is not None and len(values) == 1:
        try:
            have, want = int(value), int(values[0])
        except ValueError:
            return False
        return have > want if operator == "Gt" else have < want
    return False


def term_matches(term: Mapping[str, Any], name: str, labels: Mapping[str, str]) -> bool:
    """One NodeSelectorTerm (an empty term matches nothing, as in Kubernetes)."""
    expressions = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not expressions and not fields:
        return False
    for expr in expressions:
        if not _expression_matches(expr, labels.get(expr.get("key", ""))):
            return False
    for expr in fields:
        value = name if expr.get("key") == "metadata.name" else None
        if not _expression_matches(expr, value):
            return False
    return True


def selector_and_affinity_match(pod: JSON, name: str, labels: Mapping[str, str]) -> bool:
    """``spec.nodeSelector`` and required node affinity both accept the node."""
    spec = pod.get("spec") or {}
    for key, value in (spec.get("nodeSelector") or {}).items():
        if labels.get(key) != value:
            return False
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    terms = required.get("nodeSelectorTerms")
    if terms is None:
        return True
    return any(term_matches(t, name, labels) for t in terms)


def preferred_affinity_score(pod: JSON, name: str, labels: Mapping[str, str]) -> tuple[int, int]:
    """``(sum of weights of matching preferred terms, sum of all weights)``."""
    spec = pod.get("spec") or {}
    preferred = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "preferredDuringSchedulingIgnoredDuringExecution"
    ) or []
    got = total = 0
    for item in preferred:
        weight = int(item.get("weight") or 0)
        total += weight
        if term_matches(item.get("preference") or {}, name, labels):
            got += weight
    return got, total


def tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    """Whether one toleration tolerates one taint."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    operator = toleration.get("operator") or "Equal"
    if not key:
        return operator == "Exists"
    if key != taint.get("key"):
        return False
    if operator == "Exists":
        return True
    return (toleration.get("value") or "") == (taint.get("value") or "")


def untolerated_taint(pod: JSON, taints: list[JSON]) -> JSON | None:
    """The first NoSchedule/NoExecute taint the pod does not tolerate, or None."""
    tolerations = (pod.get("spec") or {}).get("tolerations") or []
    for taint in taints:
        if taint.get("effect") not in ("NoSchedule", "NoExecute"):
            continue
        if not any(tolerates(t, taint) for t in tolerations):
            return taint
    return None
