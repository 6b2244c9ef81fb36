"""A pod's resource quota usage, as Kubernetes counts it: the PodGroup's ``minResources`` unit.

pg-controller sets ``spec.minResources`` to one pod's quota usage times ``minMember``, the
way Volcano does with Kubernetes' own ``PodUsageFunc``. This module recomputes that usage
from the pod's JSON (as the informer cache holds it) so the keys and amounts are the ones a
ResourceQuota would charge:

- ``count/pods`` always 1; everything else only while the pod is not terminal (``Failed`` /
  ``Succeeded``) and not stuck past its deletion grace period;
- ``pods`` 1; ``cpu`` and ``requests.cpu``, ``memory`` and ``requests.memory``,
  ``ephemeral-storage`` and ``requests.ephemeral-storage`` from the requests; ``limits.cpu``,
  ``limits.memory``, ``limits.ephemeral-storage`` from the limits; ``hugepages-<size>`` and
  ``requests.hugepages-<size>``; extended resources (and DRA device classes) as
  ``requests.<name>`` only;
- then, as Volcano adds on top, every non-native ``requests.<name>`` also as bare ``<name>``
  (so ``nvidia.com/gpu: 1`` gives both ``requests.nvidia.com/gpu`` and ``nvidia.com/gpu``).

The pod's requests follow ``k8s.io/component-helpers/resource.PodRequests``: containers are
summed; init containers count as their maximum, where a sidecar (an init container with
``restartPolicy: Always``) adds to the sum and to every later init container's usage;
pod-level ``spec.resources`` replace cpu, memory and hugepages; ``spec.overhead`` is added.
Limits the same way, with overhead added only to non-zero limits. Not reproduced: resources
reported in the pod's status after an in-place resize (the cache drops container statuses;
a pod that is getting its PodGroup has not been resized) and DRA node-allocatable claims.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from volcano_py.api.quantity import Quantity, parse_resource_list
from volcano_py.api.selectors import is_qualified_name

ResourceList = dict[str, Quantity]

POD_OBJECT_COUNT = "count/pods"
REQUESTS_PREFIX = "requests."
LIMITS_PREFIX = "limits."
HUGEPAGES_PREFIX = "hugepages-"
NATIVE_NAMESPACE = "kubernetes.io/"
DEVICE_CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"
_POD_LEVEL = frozenset({"cpu", "memory"})
_STANDARD = ("cpu", "memory", "ephemeral-storage")
_ONE = Quantity.from_int(1)


def is_native_resource(name: str) -> bool:
    """Unprefixed names and names in a ``*kubernetes.io/`` namespace (``IsNativeResource``)."""
    return "/" not in name or NATIVE_NAMESPACE in name


def is_extended_resource(name: str) -> bool:
    """Non-native, and ``requests.<name>`` is a qualified name (``IsExtendedResourceName``)."""
    if is_native_resource(name) or name.startswith(REQUESTS_PREFIX):
        return False
    return not is_qualified_name(REQUESTS_PREFIX + name)


def _is_pod_level(name: str) -> bool:
    return name in _POD_LEVEL or name.startswith(HUGEPAGES_PREFIX)


def _add_into(total: ResourceList, more: Mapping[str, Quantity]) -> None:
    for name, amount in more.items():
        current = total.get(name)
        total[name] = amount if current is None else current + amount


def _max_into(total: ResourceList, more: Mapping[str, Quantity]) -> None:
    for name, amount in more.items():
        current = total.get(name)
        if current is None or amount > current:
            total[name] = amount


def _container_list(container: Mapping[str, Any], kind: str, field: str) -> ResourceList:
    resources = container.get("resources") or {}
    return parse_resource_list(resources.get(kind), f"{field}.resources.{kind}")


def _aggregate(spec: Mapping[str, Any], kind: str) -> ResourceList:
    """Sum of containers, max of init containers with sidecars counted (the KEP-753 formula)."""
    total: ResourceList = {}
    for i, container in enumerate(spec.get("containers") or []):
        _add_into(total, _container_list(container, kind, f"spec.containers[{i}]"))
    sidecars: ResourceList = {}
    init_peak: ResourceList = {}
    for i, container in enumerate(spec.get("initContainers") or []):
        own = _container_list(container, kind, f"spec.initContainers[{i}]")
        if container.get("restartPolicy") == "Always":
            _add_into(total, own)
            _add_into(sidecars, own)
            in_use = dict(sidecars)
        else:
            in_use = dict(own)
            _add_into(in_use, sidecars)
        _max_into(init_peak, in_use)
    _max_into(total, init_peak)
    return total


def _pod_level(spec: Mapping[str, Any], kind: str) -> ResourceList:
    resources = spec.get("resources") or {}
    return parse_resource_list(resources.get(kind), f"spec.resources.{kind}")


def pod_requests(pod: Mapping[str, Any]) -> ResourceList:
    """The pod's effective requests (``PodRequests`` with overhead, pod-level resources on)."""
    spec = pod.get("spec") or {}
    requests = _aggregate(spec, "requests")
    pod_level = _pod_level(spec, "requests")
    if any(_is_pod_level(name) for name in pod_level):
        requests.update({n: q for n, q in pod_level.items() if _is_pod_level(n)})
    _add_into(requests, parse_resource_list(spec.get("overhead"), "spec.overhead"))
    return requests


def pod_limits(pod: Mapping[str, Any]) -> ResourceList:
    """The pod's effective limits (``PodLimits``: overhead only on non-zero limits)."""
    spec = pod.get("spec") or {}
    limits = _aggregate(spec, "limits")
    levels = [_pod_level(spec, "requests"), _pod_level(spec, "limits")]
    if any(_is_pod_level(name) for level in levels for name in level):
        limits.update({n: q for n, q in levels[1].items() if _is_pod_level(n)})
    for name, amount in parse_resource_list(spec.get("overhead"), "spec.overhead").items():
        current = limits.get(name)
        if current is not None and not current.is_zero:
            limits[name] = current + amount
    return limits


def counts_compute(pod: Mapping[str, Any], now: datetime | None = None) -> bool:
    """Whether quota charges the pod's compute resources (``QuotaV1Pod``)."""
    if (pod.get("status") or {}).get("phase") in ("Failed", "Succeeded"):
        return False
    meta = pod.get("metadata") or {}
    deleted_at, grace = meta.get("deletionTimestamp"), meta.get("deletionGracePeriodSeconds")
    if deleted_at and grace is not None and now is not None:
        deadline = datetime.fromisoformat(str(deleted_at).replace("Z", "+00:00"))
        if now > deadline + timedelta(seconds=int(grace)):
            return False
    return True


def _compute_usage(requests: ResourceList, limits: ResourceList) -> ResourceList:
    """``podComputeUsageHelper``: quota names for the pod's requests and limits."""
    usage: ResourceList = {"pods": _ONE}
    for name in _STANDARD:
        if name in requests:
            usage[name] = usage[REQUESTS_PREFIX + name] = requests[name]
        if name in limits:
            usage[LIMITS_PREFIX + name] = limits[name]
    for name, amount in requests.items():
        if name.startswith(HUGEPAGES_PREFIX):
            usage[name] = usage[REQUESTS_PREFIX + name] = amount
        if is_extended_resource(name) or name.startswith(DEVICE_CLASS_PREFIX):
            usage[REQUESTS_PREFIX + name] = amount
    return usage


def pod_quota_usage(pod: Mapping[str, Any], now: datetime | None = None) -> ResourceList:
    """One pod's quota usage with Volcano's bare extended-resource names added.

    ``now`` (timezone-aware) decides whether a pod past its deletion grace period still
    counts; without it such a pod counts.

    Raises:
        FieldError: a request, limit or overhead is not a quantity (naming the field).
    """
    usage: ResourceList = {POD_OBJECT_COUNT: _ONE}
    if counts_compute(pod, now):
        usage.update(_compute_usage(pod_requests(pod), pod_limits(pod)))
    for name, amount in list(usage.items()):
        if not is_native_resource(name) and name.startswith(REQUESTS_PREFIX):
            usage[name[len(REQUESTS_PREFIX) :]] = amount
    return usage


def min_resources(
    pod: Mapping[str, Any], min_member: int, now: datetime | None = None
) -> ResourceList:
    """``CalTaskRequests``: the pod's quota usage times ``min_member`` (empty for 0)."""
    if min_member <= 0:
        return {}
    return {name: amount * min_member for name, amount in pod_quota_usage(pod, now).items()}
