"""``spec.networkTopology`` from PodGroup annotations (a volcano-py departure, pure).

Operators that have no field for a PodGroup's network topology still copy their owner's
``volcano.sh/*`` annotations onto the PodGroup (LeaderWorkerSet, Kubeflow training-operator
v1), or translate a label into one (KubeRay). When the PodGroup's spec has no
``networkTopology``, the scheduler reads it from these annotations (``JobInfo``):

- ``volcano.sh/network-topology-mode``: ``hard`` or ``soft``, case-insensitive; absent means
  hard (as on pods);
- ``volcano.sh/network-topology-highest-tier``, or KubeRay's spelling
  ``volcano.sh/network-topology-highest-tier-allowed``: a non-negative integer (the first
  wins when both are set);
- ``volcano.sh/network-topology-highest-tier-name``: a HyperNode ``tierName``.

Any of them present asks for topology. A bad value yields a warning naming the annotation
and the value, and **no topology at all**: the job is scheduled without it rather than held
by a typo, and the warning is an Event on the PodGroup. The spec always wins: this module is
only asked when the spec has no ``networkTopology``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from volcano_py.api.constants import (
    NETWORK_TOPOLOGY_HIGHEST_TIER_ALLOWED_ANNOTATION,
    NETWORK_TOPOLOGY_HIGHEST_TIER_ANNOTATION,
    NETWORK_TOPOLOGY_HIGHEST_TIER_NAME_ANNOTATION,
    NETWORK_TOPOLOGY_MODE_ANNOTATION,
    NetworkTopologyMode,
)

INVALID_TOPOLOGY_ANNOTATION_REASON = "InvalidNetworkTopologyAnnotation"

TIER_KEYS = (
    NETWORK_TOPOLOGY_HIGHEST_TIER_ANNOTATION,
    NETWORK_TOPOLOGY_HIGHEST_TIER_ALLOWED_ANNOTATION,
)
TOPOLOGY_KEYS = (
    NETWORK_TOPOLOGY_MODE_ANNOTATION,
    *TIER_KEYS,
    NETWORK_TOPOLOGY_HIGHEST_TIER_NAME_ANNOTATION,
)

_DECIMAL = re.compile(r"\+?[0-9]+")
_INT64_MAX = 2**63 - 1


@dataclass(frozen=True, slots=True)
class AnnotationTopology:
    """What the annotations ask for: ``mode`` None means no topology (absent or refused)."""

    mode: NetworkTopologyMode | None = None
    highest_tier: int | None = None
    highest_tier_name: str = ""
    warning: str = ""


NO_TOPOLOGY = AnnotationTopology()


def topology_from_annotations(annotations: Mapping[str, Any], where: str) -> AnnotationTopology:
    """The topology the annotations ask for; ``where`` (``PodGroup ns/name``) is for warnings."""
    if not any(key in annotations for key in TOPOLOGY_KEYS):
        return NO_TOPOLOGY
    mode = NetworkTopologyMode.HARD
    raw_mode = annotations.get(NETWORK_TOPOLOGY_MODE_ANNOTATION)
    if raw_mode is not None:
        text = str(raw_mode).lower()
        if text not in (NetworkTopologyMode.HARD, NetworkTopologyMode.SOFT):
            return _refused(
                where, NETWORK_TOPOLOGY_MODE_ANNOTATION, raw_mode, "must be 'hard' or 'soft'"
            )
        mode = NetworkTopologyMode(text)
    tier = None
    for key in TIER_KEYS:
        raw = annotations.get(key)
        if raw is None:
            continue
        text = str(raw).strip()
        if not _DECIMAL.fullmatch(text) or int(text) > _INT64_MAX:
            return _refused(where, key, raw, "must be a non-negative integer")
        tier = int(text)
        break
    name = str(annotations.get(NETWORK_TOPOLOGY_HIGHEST_TIER_NAME_ANNOTATION) or "").strip()
    if NETWORK_TOPOLOGY_HIGHEST_TIER_NAME_ANNOTATION in annotations and not name:
        return _refused(where, NETWORK_TOPOLOGY_HIGHEST_TIER_NAME_ANNOTATION, "", "is empty")
    return AnnotationTopology(mode, tier, name)


def _refused(where: str, key: str, value: Any, why: str) -> AnnotationTopology:
    message = (
        f"annotation {key}={value!r} on {where} {why}; "
        "the job is scheduled without network topology"
    )
    return AnnotationTopology(warning=message)
