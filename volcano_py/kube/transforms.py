"""Cache transforms: what an informer drops from an object before storing it.

client-go calls these ``TransformFunc``s; they exist for memory. A 50,000-pod cluster served
as plain dicts costs ~14 KB per pod; after these transforms ~5.5 KB (``bench/``). What is
dropped is what no consumer in this process reads, and it is listed here so a new consumer
knows what the cache holds:

- every object: ``metadata.managedFields``;
- Pods: ``spec.volumes``, ``spec.ephemeralContainers``, ``spec.securityContext``, DNS and
  service-link settings, ``spec.imagePullSecrets``, ``spec.terminationGracePeriodSeconds``,
  the deprecated ``spec.serviceAccount``; of each container and init container only
  ``name``, ``resources``, ``ports`` and ``restartPolicy`` (sidecars) are kept; the
  ``status.*ContainerStatuses`` lists;
- Nodes: ``status.images``, ``status.nodeInfo``, ``status.daemonEndpoints``,
  ``status.volumesAttached``, ``status.volumesInUse``, ``status.config``.

Short strings are interned, so the thousands of repeated label values, condition types and
timestamps are stored once. Transforms edit the freshly decoded object in place (nobody
else holds it yet) and return it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from volcano_py.api.resources import NODES, PODS, Resource

JSON = dict[str, Any]
Transform = Callable[[JSON], JSON]

_INTERN_MAX_LEN = 64
_POD_SPEC_DROP = (
    "volumes",
    "ephemeralContainers",
    "securityContext",
    "dnsConfig",
    "dnsPolicy",
    "enableServiceLinks",
    "imagePullSecrets",
    "terminationGracePeriodSeconds",
    "serviceAccount",
)
_CONTAINER_KEEP = ("name", "resources", "ports", "restartPolicy")
_POD_STATUS_DROP = ("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses")
_NODE_STATUS_DROP = (
    "images",
    "nodeInfo",
    "daemonEndpoints",
    "volumesAttached",
    "volumesInUse",
    "config",
)


def strip_managed_fields(obj: JSON) -> JSON:
    """Drop ``metadata.managedFields`` (large, never read here)."""
    meta = obj.get("metadata")
    if meta is not None:
        meta.pop("managedFields", None)
    return obj


def intern_strings(value: Any) -> Any:
    """Intern every short string inside ``value`` (dicts and lists edited in place)."""
    intern = sys.intern
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, child in item.items():
                if isinstance(child, str):
                    if len(child) <= _INTERN_MAX_LEN:
                        item[key] = intern(child)
                elif isinstance(child, dict | list):
                    stack.append(child)
        elif isinstance(item, list):
            for index, child in enumerate(item):
                if isinstance(child, str):
                    if len(child) <= _INTERN_MAX_LEN:
                        item[index] = intern(child)
                elif isinstance(child, dict | list):
                    stack.append(child)
    return value


def slim_pod(obj: JSON) -> JSON:
    """The Pod transform: see the module docstring for what is dropped."""
    strip_managed_fields(obj)
    spec = obj.get("spec")
    if spec:
        for key in _POD_SPEC_DROP:
            spec.pop(key, None)
        for key in ("containers", "initContainers"):
            containers = spec.get(key)
            if containers:
                spec[key] = [{k: c[k] for k in _CONTAINER_KEEP if k in c} for c in containers]
    status = obj.get("status")
    if status:
        for key in _POD_STATUS_DROP:
            status.pop(key, None)
    return intern_strings(obj)  # type: ignore[no-any-return]


def slim_node(obj: JSON) -> JSON:
    """The Node transform: see the module docstring for what is dropped."""
    strip_managed_fields(obj)
    status = obj.get("status")
    if status:
        for key in _NODE_STATUS_DROP:
            status.pop(key, None)
    return intern_strings(obj)  # type: ignore[no-any-return]


DEFAULT_TRANSFORMS: dict[Resource, Transform] = {PODS: slim_pod, NODES: slim_node}


def default_transform(resource: Resource) -> Transform:
    """The transform an informer for ``resource`` uses unless told otherwise."""
    return DEFAULT_TRANSFORMS.get(resource, strip_managed_fields)
