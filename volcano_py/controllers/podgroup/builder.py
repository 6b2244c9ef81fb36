"""Building the PodGroup a pod belongs to, and deciding whether an existing one must change.

Pure functions, no I/O: the controller hands in the pod (from the cache) and the merged
annotations of its owners (which it reads), and gets back the PodGroup body plus the
warnings to record as Events on the pod. What goes in, as Volcano's pg-controller does it:

- name ``podgroup-<uid of the pod's controller>``, or ``podgroup-<pod uid>`` for a pod
  without a controller; ``ownerReferences`` the pod's own when one of them is a controller,
  else a controller reference to the pod, so garbage collection follows the owner;
- with owner-annotation inheritance on: ``minMember`` from the owners'
  ``scheduling.volcano.sh/group-min-member`` (not an int32 or negative -> 1; absent -> 1),
  capped by a controlling ReplicaSet's ``spec.replicas`` (a rollout's surge ReplicaSet is a
  gang of the pods it is asked for, never waiting for pods that will not come; Volcano
  #4739), and every owner annotation starting with ``volcano.sh/`` copied; off: ``minMember``
  1;
- then the pod's ``volcano.sh/preemptable``, ``volcano.sh/cooldown-time`` and
  ``volcano.sh/revocable-zone`` annotations override, then its
  ``volcano.sh/jdb-min-available``, or else its ``volcano.sh/jdb-max-unavailable``; the pod's
  ``volcano.sh/preemptable`` / ``volcano.sh/cooldown-time`` labels become labels;
- ``minResources`` the pod's quota usage (``quota.py``) times ``minMember``; ``queue`` from
  the pod's ``scheduling.volcano.sh/queue-name``; ``priorityClassName`` from the pod;
- ``networkTopology`` from the pod's ``volcano.sh/network-topology-mode`` (case-insensitive
  hard|soft, anything else -> hard with a warning) and
  ``volcano.sh/network-topology-highest-tier`` (an integer; otherwise left unset with a
  warning); absent when neither annotation is there;
- ``subGroupPolicy``: one ``partition`` policy when the workload (or the pod) carries
  ``volcano.sh/partition-size`` and the pod has an index (``partitions.py``);
- ``status.phase: Pending``.

``updated_podgroup`` compares what a PodGroup should be with what it is, field by field with
the CRD's defaults applied (``queue: default``, ``mode: hard``) and quantities compared by
value, and returns the object to write only when something differs. Unlike Volcano, which
replaces whole maps, it leaves alone what it does not manage: annotations outside
``volcano.sh/``, the scheduler's ``volcano.sh/job-allocated-hypernode``, labels other than
the two above, spec fields other than the five above, and status.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from volcano_py.api import JSON
from volcano_py.api import constants as C
from volcano_py.api.errors import FieldError
from volcano_py.api.meta import (
    annotations_of,
    controller_ref,
    copy_annotations,
    labels_of,
    name_of,
    namespace_of,
    owner_references_of,
    uid_of,
)
from volcano_py.api.podgroup import NetworkTopology
from volcano_py.api.quantity import format_resource_list, parse_resource_list
from volcano_py.api.resources import PODGROUPS
from volcano_py.controllers.podgroup.partitions import REASON_INVALID_PARTITIONS, partition_policy
from volcano_py.controllers.podgroup.quota import min_resources

_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)
# Pod annotations that override what the owners gave (after the inherited ones).
POD_OVERRIDE_ANNOTATIONS = (C.POD_PREEMPTABLE, C.COOLDOWN_TIME, C.REVOCABLE_ZONE)
# Pod labels copied to the PodGroup's labels.
POD_LABELS = (C.POD_PREEMPTABLE, C.COOLDOWN_TIME)
# PodGroup annotations other components write; an update never removes them.
FOREIGN_ANNOTATIONS = frozenset({C.JOB_ALLOCATED_HYPERNODE_ANNOTATION})
# The spec fields pg-controller owns.
MANAGED_SPEC = (
    "minMember",
    "minResources",
    "queue",
    "priorityClassName",
    "networkTopology",
    "subGroupPolicy",
)

# Event reasons for what the builder had to fix up (recorded on the pod).
REASON_INVALID_MIN_MEMBER = "InvalidGroupMinMember"
REASON_INVALID_TOPOLOGY_MODE = "InvalidNetworkTopologyMode"
REASON_INVALID_TOPOLOGY_TIER = "InvalidNetworkTopologyHighestTier"


@dataclass(frozen=True, slots=True)
class BuildWarning:
    """Something in the annotations was not usable; recorded as a Warning Event on the pod."""

    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class BuiltPodGroup:
    """The PodGroup body to create or compare against, and the warnings found on the way."""

    body: JSON
    warnings: tuple[BuildWarning, ...] = ()


def podgroup_name(pod: Mapping[str, Any]) -> str:
    """``podgroup-<controller uid>``, or ``podgroup-<pod uid>`` (``GeneratePodgroupName``)."""
    ref = controller_ref(pod)
    uid = (ref.get("uid") if ref else None) or uid_of(pod)
    return f"{C.PODGROUP_NAME_PREFIX}{uid}"


def owner_references(pod: Mapping[str, Any]) -> list[JSON]:
    """The pod's ownerReferences if one is a controller, else a controller ref to the pod."""
    refs = owner_references_of(pod)
    if any(ref.get("controller") is True for ref in refs):
        return [dict(ref) for ref in refs]
    return [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": name_of(pod),
            "uid": uid_of(pod),
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]


def _go_int(text: str, bounds: tuple[int, int], func: str) -> tuple[int | None, str]:
    """Parse like Go's ``strconv`` base 10: ``(value, "")`` or ``(None, Go's error text)``."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not (digits.isascii() and digits.isdigit()):
        return None, f"strconv.{func}: parsing {json.dumps(text)}: invalid syntax"
    value = int(text)
    if not bounds[0] <= value <= bounds[1]:
        return None, f"strconv.{func}: parsing {json.dumps(text)}: value out of range"
    return value, ""


def min_member_from(
    owner_annotations: Mapping[str, str], where: str
) -> tuple[int, BuildWarning | None]:
    """``minMember`` from the owners' annotation: absent -> 1; not an int32 or not positive -> 1.

    ``where`` (``namespace/pod``) goes into the warning's message.
    """
    raw = owner_annotations.get(C.VOLCANO_GROUP_MIN_MEMBER_ANNOTATION)
    if raw is None:
        return 1, None
    value, error = _go_int(raw, _INT32, "ParseInt")
    if value is None:
        message = (
            f"Failed to convert minMemberAnnotation of Pod owners <{where}> into number: "
            f"{error}, minMember remains as 1"
        )
        return 1, BuildWarning(REASON_INVALID_MIN_MEMBER, message)
    if value <= 0:  # Volcano lets 0 through silently: a gang of 0 is no gang (issue 26)
        message = f"minMemberAnnotation {value} is not positive, minMember remains as 1"
        return 1, BuildWarning(REASON_INVALID_MIN_MEMBER, message)
    return value, None


def network_topology_from(pod: Mapping[str, Any]) -> tuple[JSON | None, list[BuildWarning]]:
    """``spec.networkTopology`` from the pod's annotations (see the module docstring)."""
    annotations = annotations_of(pod)
    mode_text = annotations.get(C.NETWORK_TOPOLOGY_MODE_ANNOTATION)
    tier_text = annotations.get(C.NETWORK_TOPOLOGY_HIGHEST_TIER_ANNOTATION)
    if mode_text is None and tier_text is None:
        return None, []
    where = f"{namespace_of(pod)}/{name_of(pod)}"
    warnings: list[BuildWarning] = []
    topology: JSON = {"mode": str(C.NetworkTopologyMode.HARD)}
    if mode_text is not None:
        mode = mode_text.lower()
        if mode in (C.NetworkTopologyMode.HARD, C.NetworkTopologyMode.SOFT):
            topology["mode"] = mode
        else:
            message = (
                f"Invalid network topology mode {json.dumps(mode_text)} in pod {where}, "
                "using default 'hard' mode"
            )
            warnings.append(BuildWarning(REASON_INVALID_TOPOLOGY_MODE, message))
    if tier_text is not None:
        tier, error = _go_int(tier_text, _INT64, "Atoi")
        if tier is not None and tier < 0:
            tier, error = None, "must be a non-negative integer"
        if tier is None:
            message = f"Invalid network topology highest tier {tier_text} in pod {where}: {error}"
            warnings.append(BuildWarning(REASON_INVALID_TOPOLOGY_TIER, message))
        else:
            topology["highestTierAllowed"] = tier
    return topology, warnings


def build_podgroup(
    pod: Mapping[str, Any],
    owner_annotations: Mapping[str, str],
    *,
    inherit_owner_annotations: bool = True,
    now: datetime | None = None,
    replicas: int | None = None,
) -> BuiltPodGroup:
    """The PodGroup for ``pod`` (``buildPodGroupFromPod``); see the module docstring.

    ``owner_annotations`` are the pod's owners' annotations merged, the first owner listed
    winning a key; they are ignored when ``inherit_owner_annotations`` is off. ``replicas``
    is the ``spec.replicas`` of a ReplicaSet controlling the pod: the gang is never larger
    than the pods the ReplicaSet is asked for (see ``docs/podgroup.md``, rollouts).

    Raises:
        FieldError: a request, limit or overhead of the pod is not a quantity.
    """
    namespace = namespace_of(pod)
    warnings: list[BuildWarning] = []
    min_member = 1
    annotations: dict[str, str] = {}
    if inherit_owner_annotations:
        min_member, warning = min_member_from(owner_annotations, f"{namespace}/{name_of(pod)}")
        if warning is not None:
            warnings.append(warning)
        if replicas is not None and 0 < replicas < min_member:
            min_member = replicas
        annotations = {k: v for k, v in owner_annotations.items() if _inherited(k)}

    pod_annotations = annotations_of(pod)
    copy_annotations(pod_annotations, annotations, POD_OVERRIDE_ANNOTATIONS)
    pod_labels = labels_of(pod)
    labels = {key: pod_labels[key] for key in POD_LABELS if key in pod_labels}

    pod_spec = pod.get("spec") or {}
    spec: JSON = {
        "minMember": min_member,
        "minResources": format_resource_list(min_resources(pod, min_member, now)),
    }
    if pod_spec.get("priorityClassName"):
        spec["priorityClassName"] = pod_spec["priorityClassName"]
    queue = pod_annotations.get(C.QUEUE_NAME_ANNOTATION)
    if queue:
        spec["queue"] = queue
    topology, topology_warnings = network_topology_from(pod)
    warnings.extend(topology_warnings)
    if topology is not None:
        spec["networkTopology"] = topology
    partitions = {**pod_annotations, **owner_annotations} if inherit_owner_annotations else {}
    policy, problem = partition_policy(partitions, pod)
    if policy is not None:
        spec["subGroupPolicy"] = [policy]
    elif problem:
        warnings.append(BuildWarning(REASON_INVALID_PARTITIONS, problem))

    body: JSON = {
        "apiVersion": PODGROUPS.api_version,
        "kind": PODGROUPS.kind,
        "metadata": {
            "name": podgroup_name(pod),
            "namespace": namespace,
            "ownerReferences": owner_references(pod),
            "annotations": annotations,
            "labels": labels,
        },
        "spec": spec,
        "status": {"phase": str(C.PodGroupPhase.PENDING)},
    }
    return BuiltPodGroup(body, tuple(warnings))


def _inherited(key: str) -> bool:
    return key.startswith(C.ANNOTATION_PREFIX)


# --- update detection ------------------------------------------------------------------------


def updated_podgroup(existing: Mapping[str, Any], desired: Mapping[str, Any]) -> JSON | None:
    """``existing`` changed to match ``desired`` where pg-controller manages it, or None.

    ``existing`` (a cached object) is not modified; the result is a copy carrying its
    ``resourceVersion``, ready for an update.
    """
    body = copy.deepcopy(dict(existing))
    meta = body.setdefault("metadata", {})
    spec = body.get("spec")
    if not isinstance(spec, dict):
        spec = body["spec"] = {}
    want_spec = desired.get("spec") or {}
    changed = False
    for field in MANAGED_SPEC:
        if not _spec_field_equal(field, spec.get(field), want_spec.get(field)):
            changed = True
            if field in want_spec:
                spec[field] = copy.deepcopy(want_spec[field])
            else:
                spec.pop(field, None)

    have_annotations = dict(annotations_of(existing))
    annotations = {k: v for k, v in have_annotations.items() if not _managed_annotation(k)}
    annotations.update(annotations_of(desired))
    if annotations != have_annotations:
        meta["annotations"] = annotations
        changed = True

    have_labels = dict(labels_of(existing))
    labels = {k: v for k, v in have_labels.items() if k not in POD_LABELS}
    labels.update(labels_of(desired))
    if labels != have_labels:
        meta["labels"] = labels
        changed = True
    return body if changed else None


def _managed_annotation(key: str) -> bool:
    return _inherited(key) and key not in FOREIGN_ANNOTATIONS


def _spec_field_equal(field: str, have: Any, want: Any) -> bool:
    """Equal as the API server would see them (defaults applied, quantities by value)."""
    try:
        if field == "minMember":
            return bool((have or 0) == (want or 0))
        if field == "minResources":
            return parse_resource_list(have or {}) == parse_resource_list(want or {})
        if field == "queue":
            return (have or C.DEFAULT_QUEUE) == (want or C.DEFAULT_QUEUE)
        if field == "networkTopology":
            if have is None or want is None:
                return have is None and want is None
            field_path = "spec.networkTopology"
            return NetworkTopology.from_dict(have, field_path) == NetworkTopology.from_dict(
                want, field_path
            )
    except FieldError:
        return False
    return bool((have or None) == (want or None))
