"""Cache transforms: what an informer drops from an object before storing it.

client-go calls these ``TransformFunc``s; they exist for memory. A 50,000-pod cluster served
as plain dicts costs ~14 KB per pod; after these transforms ~3 KB (``bench/``). What is
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

Repetition is stored once. The pods of one workload carry identical labels, annotations,
owner references, tolerations, affinity and container resources: the Pod transform replaces
each such subtree by the first equal one it has seen (``SubtreeSharer``, keyed by the
subtree's JSON, bounded), and interns the short strings left at the top of metadata, spec
and status and in the conditions. Nodes (fewer, each different) get every short string
interned. This is why cached objects are strictly read-only: a subtree may be shared by
thousands of pods. Transforms edit the freshly decoded object in place (nobody else holds it
yet) and return it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import orjson

from volcano_py.api.resources import NODES, PODS, Resource
from volcano_py.kube.memo import GenerationMemo

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


class SubtreeSharer:
    """Hands out one shared instance per distinct JSON subtree (bounded, thread-safe enough).

    ``share(x)`` returns an earlier subtree equal to ``x`` (same JSON) or remembers ``x``.
    Entries are keyed by the subtree's JSON text (not orjson's bytes, which keep orjson's
    whole output buffer, about 4 KiB, each) in a ``GenerationMemo``: subtrees still in use by
    arriving objects stay shared, and those of objects long gone (the unique annotations of
    churned pods) are dropped after two generations instead of piling up.
    """

    def __init__(self, limit: int = 4096) -> None:
        self._memo: GenerationMemo[str, Any] = GenerationMemo(limit)

    def share(self, subtree: Any) -> Any:
        """The shared instance equal to ``subtree``."""
        if not subtree:
            return subtree
        key = orjson.dumps(subtree).decode()
        seen = self._memo.get(key)
        if seen is None:
            self._memo.put(key, subtree)
            return subtree
        return seen

    def __len__(self) -> int:
        return len(self._memo)


_POD_SUBTREES = SubtreeSharer()
_SHARED_META = ("labels", "annotations", "ownerReferences")
_SHARED_SPEC = (
    "containers",
    "initContainers",
    "tolerations",
    "affinity",
    "nodeSelector",
    "overhead",
    "topologySpreadConstraints",
)


def _intern_values(mapping: JSON) -> None:
    """Intern the short string values directly inside ``mapping``."""
    intern = sys.intern
    for key, value in mapping.items():
        if type(value) is str and len(value) <= _INTERN_MAX_LEN:
            mapping[key] = intern(value)


def slim_pod(obj: JSON, sharer: SubtreeSharer = _POD_SUBTREES) -> JSON:
    """The Pod transform: see the module docstring for what is dropped and shared."""
    share = sharer.share
    meta = obj.get("metadata")
    if meta:
        meta.pop("managedFields", None)
        for key in _SHARED_META:
            if key in meta:
                meta[key] = share(meta[key])
        _intern_values(meta)
    spec = obj.get("spec")
    if spec:
        for key in _POD_SPEC_DROP:
            spec.pop(key, None)
        for key in ("containers", "initContainers"):
            containers = spec.get(key)
            if containers:
                spec[key] = [{k: c[k] for k in _CONTAINER_KEEP if k in c} for c in containers]
        for key in _SHARED_SPEC:
            if key in spec:
                spec[key] = share(spec[key])
        _intern_values(spec)
    status = obj.get("status")
    if status:
        for key in _POD_STATUS_DROP:
            status.pop(key, None)
        for condition in status.get("conditions") or ():
            _intern_values(condition)
        _intern_values(status)
    return obj


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
