"""Cache transforms: what an informer drops from an object before storing it.

client-go calls these ``TransformFunc``s; they exist for memory. A 50,000-pod cluster served
as plain dicts costs ~14 KB per pod; after these transforms ~3 KB (``bench/``). What is
dropped is what no consumer in this process reads, and it is listed here so a new consumer
knows what the cache holds:

- every object: ``metadata.managedFields`` (Pods' and Nodes' informers cut it out of the
  bytes before decoding, ``kube/slimjson.py``; the transforms drop it from the rest);
- Pods: of ``spec.volumes`` all but the claims (a volume's ``name`` and its
  ``persistentVolumeClaim.claimName``, or an empty ``ephemeral`` marker),
  ``spec.ephemeralContainers``, ``spec.securityContext``, DNS and service-link settings,
  ``spec.imagePullSecrets``, ``spec.terminationGracePeriodSeconds``, the deprecated
  ``spec.serviceAccount``; of each container and init container only ``name``,
  ``resources``, ``ports`` and ``restartPolicy`` (sidecars) are kept; of each entry of
  ``status.containerStatuses`` / ``initContainerStatuses`` only ``name``, ``ready``,
  ``restartCount`` and ``state.terminated``'s ``exitCode`` and ``reason`` (the job
  controller's exit-code policies, ``dependsOn`` readiness and ``maxRetry``); the
  ``ephemeralContainerStatuses`` list;
- Nodes: ``status.images``, ``status.nodeInfo``, ``status.daemonEndpoints``,
  ``status.volumesAttached``, ``status.volumesInUse``, ``status.config``;
- ``scheduling.k8s.io`` Workloads: all but the identity in ``metadata`` (name, namespace,
  uid, resourceVersion) and the ``name`` of each of ``spec.podGroupTemplates`` and
  ``spec.compositePodGroupTemplates`` (the scheduler checks only that a PodGroup's
  ``workloadRef`` names an existing Workload and template).

Repetition is stored once. The pods of one workload carry identical labels, annotations,
owner references, tolerations, affinity and container resources: the Pod transform replaces
each such subtree by the first equal one it has seen (``SubtreeSharer``, keyed by the
subtree's JSON, bounded), and interns the short strings left at the top of metadata, spec
and status and in the conditions. Nodes (fewer, each different) get every short string
interned. This is why cached objects are strictly read-only: a subtree may be shared by
thousands of pods. Transforms edit the freshly decoded object in place (nobody else holds it
yet) and return it.

**The contract is checked, not hoped for.** Every consumer of a shared cache declares the
fields it reads as a ``CacheReads`` (dotted paths, ``[]`` for each item of a list) beside its
informer wiring; ``lost_fields(reads)`` runs an object carrying every declared field through
the real transform and names the ones that did not survive. A unit test runs it for every
consumer of the Pod cache (controller-runtime's cache options are the model: a consumer
says what it needs from the cache, the cache does not guess).
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from volcano_py.api import JSON
from volcano_py.api.resources import NATIVE_WORKLOADS, NODES, PODS, APIResource
from volcano_py.kube import memo

Transform = Callable[[JSON], JSON]

_INTERN_MAX_LEN = 64
_POD_SPEC_DROP = (
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
_POD_STATUS_DROP = ("ephemeralContainerStatuses",)
_POD_STATUS_SLIM = ("containerStatuses", "initContainerStatuses")
_CONTAINER_STATUS_KEEP = ("name", "ready", "restartCount")
_TERMINATED_KEEP = ("exitCode", "reason")
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
    whole output buffer, about 4 KiB, each).

    An entry is worth keeping while some cached object still uses its subtree: the next pod
    of that workload will share it. Once every object that used it is gone, only this table
    holds it (CPython's reference count says so), and the next sweep drops it. A sweep runs
    when ``limit`` entries have been added since the last one kept what it kept (amortised
    O(1) per ``share``); it keeps at most ``limit`` entries in use, the newest, so the table
    stays under ``2 * limit`` entries even when every pod's labels are unique (StatefulSets).
    Under create/delete churn the table holds the subtrees of live pods and what arrived since
    the last sweep, not thousands of deleted pods' annotations (``bench/bench_churn.py``).
    Not locked: a share that races a sweep may go unremembered (a miss, never a wrong answer).
    """

    def __init__(self, limit: int = 4096) -> None:
        """Sweep after ``limit`` new entries; keep at most ``limit`` in use (``limit`` ≥ 1)."""
        if limit < 1:
            raise ValueError(f"limit must be at least 1, not {limit}")
        self.limit = limit
        self._shared: dict[str, Any] = {}
        self._sweep_at = limit
        memo.register(self)

    def share(self, subtree: Any) -> Any:
        """The shared instance equal to ``subtree``."""
        if not subtree:
            return subtree
        key = orjson.dumps(subtree).decode()
        shared = self._shared.setdefault(key, subtree)
        if shared is subtree and len(self._shared) >= self._sweep_at:
            self.sweep()
        return shared

    def sweep(self) -> int:
        """Drop the subtrees nothing else holds any more; how many entries remain."""
        table = self._shared
        kept = {key: table[key] for key in list(table) if _references(table, key) > _ONLY_HERE}
        if len(kept) > self.limit:
            kept = dict(list(kept.items())[-self.limit :])
        self._shared = kept
        self._sweep_at = len(kept) + self.limit
        return len(kept)

    def clear(self) -> None:
        """Forget everything (``memo.clear_all`` when the process goes idle)."""
        self._shared = {}
        self._sweep_at = self.limit

    def __len__(self) -> int:
        return len(self._shared)


def _references(table: dict[str, Any], key: str) -> int:
    """``table[key]``'s reference count, as seen from here."""
    return sys.getrefcount(table[key])


# What ``_references`` reports for a value nothing but its table holds, measured rather than
# assumed (the count includes call temporaries, which differ between CPython versions).
_ONLY_HERE = _references({"probe": []}, "probe")


_POD_SUBTREES = SubtreeSharer()
_SHARED_META = ("labels", "annotations", "ownerReferences")
_SHARED_SPEC = (
    "containers",
    "initContainers",
    "tolerations",
    "affinity",
    "nodeSelector",
    "overhead",
    "resources",
    "topologySpreadConstraints",
    "volumes",
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
        if "volumes" in spec:
            claims = [c for c in map(_claim_volume, spec.pop("volumes") or ()) if c is not None]
            if claims:
                spec["volumes"] = claims
        for key in _SHARED_SPEC:
            if key in spec:
                spec[key] = share(spec[key])
        _intern_values(spec)
    status = obj.get("status")
    if status:
        for key in _POD_STATUS_DROP:
            status.pop(key, None)
        for key in _POD_STATUS_SLIM:
            statuses = status.get(key)
            if statuses:
                status[key] = share([_slim_container_status(c) for c in statuses])
        for condition in status.get("conditions") or ():
            _intern_values(condition)
        _intern_values(status)
    return obj


def _claim_volume(volume: JSON) -> JSON | None:
    """What the scheduler reads of a pod volume: the claim it names (None for the rest)."""
    claim = volume.get("persistentVolumeClaim")
    if claim:
        return {
            "name": volume.get("name"),
            "persistentVolumeClaim": {"claimName": claim.get("claimName")},
        }
    if volume.get("ephemeral"):
        return {"name": volume.get("name"), "ephemeral": {}}
    return None


def _slim_container_status(entry: JSON) -> JSON:
    """One container status with only what consumers read (see the module docstring)."""
    out = {k: entry[k] for k in _CONTAINER_STATUS_KEEP if k in entry}
    terminated = (entry.get("state") or {}).get("terminated")
    if isinstance(terminated, dict):
        out["state"] = {
            "terminated": {k: terminated[k] for k in _TERMINATED_KEEP if k in terminated}
        }
    return out


def slim_node(obj: JSON) -> JSON:
    """The Node transform: see the module docstring for what is dropped."""
    strip_managed_fields(obj)
    status = obj.get("status")
    if status:
        for key in _NODE_STATUS_DROP:
            status.pop(key, None)
    return intern_strings(obj)  # type: ignore[no-any-return]


_WORKLOAD_META_KEEP = ("name", "namespace", "uid", "resourceVersion")
_WORKLOAD_TEMPLATES = ("podGroupTemplates", "compositePodGroupTemplates")


def slim_workload(obj: JSON) -> JSON:
    """The Workload transform: its identity and its templates' names (module docstring)."""
    meta = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    out: JSON = {k: obj[k] for k in ("apiVersion", "kind") if k in obj}
    out["metadata"] = {k: meta[k] for k in _WORKLOAD_META_KEEP if k in meta}
    out_spec: JSON = {}
    for field in _WORKLOAD_TEMPLATES:
        templates = spec.get(field) if isinstance(spec, dict) else None
        if isinstance(templates, list):
            out_spec[field] = [
                {"name": t["name"]} for t in templates if isinstance(t, dict) and "name" in t
            ]
    out["spec"] = out_spec
    return out


DEFAULT_TRANSFORMS: dict[APIResource, Transform] = {
    PODS: slim_pod,
    NODES: slim_node,
    NATIVE_WORKLOADS: slim_workload,
}


def default_transform(resource: APIResource) -> Transform:
    """The transform an informer for ``resource`` uses unless told otherwise."""
    return DEFAULT_TRANSFORMS.get(resource, strip_managed_fields)


@dataclass(frozen=True, slots=True)
class CacheReads:
    """The fields one consumer reads from a shared cache (see the module docstring).

    ``fields`` are dotted paths from the object's root; ``name[]`` steps into every item of
    the list ``name`` (``status.containerStatuses[].state.terminated.exitCode``).
    """

    consumer: str
    resource: APIResource
    fields: tuple[str, ...]


_PROBE = "probe-value"


def _steps(path: str) -> list[tuple[str, bool]]:
    """``a.b[].c`` -> ``[("a", False), ("b", True), ("c", False)]``."""
    return [(part.removesuffix("[]"), part.endswith("[]")) for part in path.split(".")]


def example_object(fields: tuple[str, ...]) -> JSON:
    """An object that carries every path of ``fields`` (leaves are a probe string)."""
    root: JSON = {}
    for path in fields:
        node: JSON = root
        steps = _steps(path)
        for i, (name, is_list) in enumerate(steps):
            last = i == len(steps) - 1
            if is_list:
                items = node.get(name)
                if not isinstance(items, list):
                    items = node[name] = [{}]
                node = items[0]
            elif last:
                node.setdefault(name, _PROBE)
            else:
                child = node.get(name)
                if not isinstance(child, dict):
                    child = node[name] = {}
                node = child
    return root


def _holds(value: Any, steps: list[tuple[str, bool]]) -> bool:
    if not steps:
        return True
    (name, is_list), rest = steps[0], steps[1:]
    if not isinstance(value, dict) or name not in value:
        return False
    child = value[name]
    if is_list:
        return isinstance(child, list) and bool(child) and all(_holds(c, rest) for c in child)
    return _holds(child, rest)


def lost_fields(reads: CacheReads, transform: Transform | None = None) -> list[str]:
    """The declared fields that ``reads.resource``'s transform (or ``transform``) drops."""
    slim = (transform or default_transform(reads.resource))(
        copy.deepcopy(example_object(reads.fields))
    )
    return [path for path in reads.fields if not _holds(slim, _steps(path))]
