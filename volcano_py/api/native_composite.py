"""Kubernetes' ``CompositePodGroup`` (``scheduling.k8s.io/v1alpha3``) as one partitioned gang.

A CompositePodGroup is the parent of native PodGroups (each names it in
``spec.parentCompositePodGroupName``). The scheduler reads a root CompositePodGroup (one with
no parent) and its child PodGroups as ONE job whose SubJobs are the children
(``composite_view``), so the SubJob machinery Volcano's ``subGroupPolicy`` gets places them:

- the job is the CompositePodGroup (its ``namespace/name``); every pod of a child PodGroup is
  a task of it, filed in the child's SubJob (id ``podGroup/<child name>``);
- a child's SubJob needs the child's ``gang.minCount`` pods (``basic``: 1) and is placed
  within the child's own topology key (hard, or soft by the child's annotation);
- ``schedulingPolicy.gang.minGroupCount`` is how many children must place together, all or
  nothing (``minSubGroups`` of the one policy every child belongs to); ``basic`` places each
  child on its own (one child is enough to start);
- the parent's ``schedulingConstraints.topology[0].key`` bounds them all: the job's own hard
  ``networkTopology`` (every child inside one value of that key).

The view carries the children in ``spec.nativeChildren`` (``{name: {minMember,
networkTopology}}``) and a reason the group cannot be read in ``spec.nativeError`` (a
nested CompositePodGroup, a bad ``minGroupCount``): both volcano-py's own, read by
``JobInfo``, never written to the API server.

Pure: no I/O, never raises on a malformed object.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from volcano_py.api import JSON
from volcano_py.api.native_groups import NATIVE_GROUP, has_kind, volcano_view, with_kind

COMPOSITE_VERSION = "v1alpha3"
COMPOSITE_API_VERSION = f"{NATIVE_GROUP}/{COMPOSITE_VERSION}"
COMPOSITE_KIND = "CompositePodGroup"
# the one subGroupPolicy every child PodGroup's SubJob belongs to
CHILD_POLICY = "podGroup"
CHILDREN_FIELD = "nativeChildren"
ERROR_FIELD = "nativeError"
MIN_GROUP_COUNT_FIELD = "spec.schedulingPolicy.gang.minGroupCount"


def is_native_composite(obj: Mapping[str, Any]) -> bool:
    """Whether ``obj`` is a ``scheduling.k8s.io`` CompositePodGroup."""
    return has_kind(obj, COMPOSITE_API_VERSION, COMPOSITE_KIND)


def as_native_composite(obj: JSON) -> JSON:
    """``obj`` from the CompositePodGroups' informer, with its apiVersion and kind set."""
    return with_kind(obj, COMPOSITE_API_VERSION, COMPOSITE_KIND)


def parent_name(obj: Mapping[str, Any]) -> str:
    """``spec.parentCompositePodGroupName`` of a PodGroup or CompositePodGroup ("" if none)."""
    name = (obj.get("spec") or {}).get("parentCompositePodGroupName")
    return name if isinstance(name, str) else ""


def min_group_count(composite: Mapping[str, Any]) -> Any:
    """``gang.minGroupCount`` as found (checked by ``composite_view``); None for ``basic``."""
    policy = (composite.get("spec") or {}).get("schedulingPolicy") or {}
    gang = policy.get("gang") if isinstance(policy, Mapping) else None
    return gang.get("minGroupCount") if isinstance(gang, Mapping) else None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def composite_view(
    composite: Mapping[str, Any], children: Iterable[Mapping[str, Any]], status: JSON | None
) -> JSON:
    """The Volcano-shaped PodGroup the cache keeps for a root ``composite`` (module doc).

    ``children``: the native PodGroups naming it as their parent; ``status``: the
    scheduler's own, kept from the last cycle.
    """
    view = _native_view(composite, status)
    spec = view["spec"]
    kids: dict[str, JSON] = {}
    for child in sorted(children, key=lambda c: (c.get("metadata") or {}).get("name", "")):
        child_spec = _native_view(child, None)["spec"]
        entry: JSON = {"minMember": child_spec["minMember"]}
        if "networkTopology" in child_spec:
            entry["networkTopology"] = child_spec["networkTopology"]
        kids[(child.get("metadata") or {}).get("name", "")] = entry
    spec[CHILDREN_FIELD] = kids
    raw = min_group_count(composite)
    wanted = 1 if raw is None else _count(raw)
    if parent_name(composite):
        spec[ERROR_FIELD] = (
            f"spec.parentCompositePodGroupName: nested CompositePodGroups (parent "
            f"{parent_name(composite)!r}) are not scheduled yet; only a root one and its "
            "PodGroups are"
        )
    elif wanted is None or wanted < 1:
        spec[ERROR_FIELD] = f"{MIN_GROUP_COUNT_FIELD}: must be a positive integer, got {raw!r}"
    wanted = max(wanted or 1, 1)
    spec["subGroupPolicy"] = [{"name": CHILD_POLICY, "minSubGroups": wanted}]
    # the gang's floor: the smallest ``wanted`` children, whole
    sizes = sorted(s for s in (_count(k["minMember"]) for k in kids.values()) if s is not None)
    spec["minMember"] = sum(max(s, 1) for s in sizes[:wanted])
    return view


def _native_view(obj: Mapping[str, Any], status: JSON | None) -> JSON:
    """``native_groups.volcano_view`` of ``obj`` keeping ``obj``'s own apiVersion and kind."""
    view = volcano_view(obj, status)
    view["apiVersion"] = obj.get("apiVersion", view["apiVersion"])
    view["kind"] = obj.get("kind", view["kind"])
    return view
