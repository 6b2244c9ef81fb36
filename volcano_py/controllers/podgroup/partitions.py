"""Partitions for plain workloads: an indexed workload's pods split into SubJobs (beyond Volcano).

Volcano reaches SubJobs only through its own Job API. Here a StatefulSet or an indexed batch
Job annotated ``volcano.sh/partition-size: "8"`` (optional ``volcano.sh/min-partitions``,
``volcano.sh/partition-network-topology-mode``,
``volcano.sh/partition-network-topology-highest-tier``) gets a PodGroup with one
``subGroupPolicy`` named ``partition`` whose ``matchLabelKeys`` is ``volcano.sh/partition-id``,
and pg-controller labels each pod ``volcano.sh/partition-id: <index // size>`` in the same
patch that gives it its PodGroup, so a pod never joins the gang without its partition.

The pod index is the StatefulSet's ``apps.kubernetes.io/pod-index`` label or the indexed
Job's ``batch.kubernetes.io/job-completion-index`` (label or annotation). Bad values give a
Warning naming the annotation and no partitions; the gang itself is built as before.
Pure functions; ``builder`` and ``sync`` call them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from volcano_py.api import JSON
from volcano_py.api import constants as C
from volcano_py.api.meta import annotations_of, labels_of

POLICY_NAME = "partition"
REASON_INVALID_PARTITIONS = "InvalidPartitions"


def pod_index(pod: Mapping[str, Any]) -> int | None:
    """The pod's index in its StatefulSet or indexed Job (None when it has none)."""
    labels, annotations = labels_of(pod), annotations_of(pod)
    for raw in (
        labels.get(C.STATEFULSET_POD_INDEX_LABEL),
        labels.get(C.JOB_COMPLETION_INDEX),
        annotations.get(C.JOB_COMPLETION_INDEX),
    ):
        if raw is not None and raw.isascii() and raw.isdigit():
            return int(raw)
    return None


def _count(annotations: Mapping[str, str], key: str, minimum: int) -> tuple[int | None, str]:
    raw = annotations.get(key)
    if raw is None:
        return None, ""
    if not (raw.isascii() and raw.isdigit()) or int(raw) < minimum or int(raw) > 2**31 - 1:
        return None, f"{key}: {json.dumps(raw)} is not an integer of at least {minimum}"
    return int(raw), ""


def partition_policy(
    annotations: Mapping[str, str], pod: Mapping[str, Any]
) -> tuple[JSON | None, str]:
    """The ``subGroupPolicy`` entry the annotations ask for, and a warning ("" when none).

    ``(None, "")`` when there is no ``volcano.sh/partition-size``; ``(None, warning)`` when a
    value is bad or the pod has no index (a Deployment's pods have none).
    """
    size, error = _count(annotations, C.PARTITION_SIZE_ANNOTATION, 1)
    if size is None:
        return None, (f"{error}; no partitions" if error else "")
    minimum, error = _count(annotations, C.MIN_PARTITIONS_ANNOTATION, 0)
    if error:
        return None, f"{error}; no partitions"
    policy: JSON = {
        "name": POLICY_NAME,
        "subGroupSize": size,
        "minSubGroups": minimum or 0,
        "matchLabelKeys": [C.PARTITION_ID_LABEL],
    }
    mode = annotations.get(C.PARTITION_TOPOLOGY_MODE_ANNOTATION)
    tier, error = _count(annotations, C.PARTITION_TOPOLOGY_HIGHEST_TIER_ANNOTATION, 1)
    if error:
        return None, f"{error}; no partitions"
    if mode is not None or tier is not None:
        mode = (mode or str(C.NetworkTopologyMode.HARD)).lower()
        if mode not in (C.NetworkTopologyMode.HARD, C.NetworkTopologyMode.SOFT):
            key = C.PARTITION_TOPOLOGY_MODE_ANNOTATION
            return None, f'{key}: {json.dumps(mode)} is not "hard" or "soft"; no partitions'
        topology: JSON = {"mode": mode}
        if tier is not None:
            topology["highestTierAllowed"] = tier
        policy["networkTopology"] = topology
    if pod_index(pod) is None:
        return None, (
            f"{C.PARTITION_SIZE_ANNOTATION} needs pods with an index (a StatefulSet's "
            f"{C.STATEFULSET_POD_INDEX_LABEL} or an indexed Job's {C.JOB_COMPLETION_INDEX}); "
            "no partitions"
        )
    return policy, ""


def partition_size(podgroup: Mapping[str, Any] | None) -> int | None:
    """The partition size of a PodGroup pg-controller gave partitions, else None."""
    spec = (podgroup or {}).get("spec") or {}
    for policy in spec.get("subGroupPolicy") or ():
        if (
            isinstance(policy, dict)
            and policy.get("name") == POLICY_NAME
            and policy.get("matchLabelKeys") == [C.PARTITION_ID_LABEL]
            and isinstance(policy.get("subGroupSize"), int)
            and policy["subGroupSize"] >= 1
        ):
            return int(policy["subGroupSize"])
    return None


def partition_labels(pod: Mapping[str, Any], podgroup: Mapping[str, Any] | None) -> dict[str, str]:
    """``{volcano.sh/partition-id: <index // size>}`` for a pod of a partitioned PodGroup."""
    size = partition_size(podgroup)
    index = pod_index(pod)
    if size is None or index is None:
        return {}
    return {C.PARTITION_ID_LABEL: str(index // size)}
