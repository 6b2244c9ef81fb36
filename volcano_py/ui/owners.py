"""Who a gang belongs to, and what a HyperNode stands for: the view's readable names.

- ``gang_owner(job)``: the workload that owns a PodGroup, as people call it — ``{"kind",
  "name", "apiVersion"}``. From the PodGroup's controller ``ownerReference`` (a Volcano Job
  owns its PodGroup; the podgroup controller copies a pod's controller there), else from the
  pods' own controller. A ReplicaSet whose pods carry ``pod-template-hash`` and whose name is
  ``<deployment>-<hash>`` is shown as that Deployment (the view has no ReplicaSet objects; this
  is how the Deployment controller names them). A bare pod's gang is owned by ``Pod <name>``.
  None when nothing says (a hand-made PodGroup with no pods yet).
- ``hypernode_label(obj)``: what a HyperNode stands for — for the ``label`` discovery source
  the label value of its own tier (its ``tierName`` is the label key), for ``ufm`` the leaf
  switches it groups (the ``UFM_LEAVES_ANNOTATION`` the UFM source writes), else ``""`` (the
  page then shows the object name, which is always in the tooltip and searchable).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from volcano_py.api import JSON
from volcano_py.api.constants import UFM_LEAVES_ANNOTATION
from volcano_py.scheduler.api.job_info import JobInfo

POD_TEMPLATE_HASH_LABEL = "pod-template-hash"
MAX_LEAVES_SHOWN = 2


def _controller(refs: Iterable[Mapping[str, Any]] | None) -> Mapping[str, Any] | None:
    refs = list(refs or ())
    for ref in refs:
        if ref.get("controller"):
            return ref
    return refs[0] if refs else None


def _pods(job: JobInfo) -> list[JSON]:
    return [task.pod for task in job.tasks.values()]


def _as_deployment(ref: Mapping[str, Any], pods: list[JSON]) -> JSON | None:
    name = str(ref.get("name") or "")
    for pod in pods:
        labels = (pod.get("metadata") or {}).get("labels") or {}
        suffix = labels.get(POD_TEMPLATE_HASH_LABEL)
        if suffix and name.endswith(f"-{suffix}"):
            return {"kind": "Deployment", "name": name[: -len(suffix) - 1], "apiVersion": "apps/v1"}
    return None


def gang_owner(job: JobInfo) -> JSON | None:
    """The owning workload (see the module docstring)."""
    pods = _pods(job)
    ref = _controller((job.podgroup.get("metadata") or {}).get("ownerReferences"))
    if ref is None:
        for pod in pods:
            ref = _controller((pod.get("metadata") or {}).get("ownerReferences"))
            if ref is not None:
                break
    if ref is None:
        return None
    if ref.get("kind") == "ReplicaSet":
        deployment = _as_deployment(ref, pods)
        if deployment is not None:
            return deployment
    return {
        "kind": str(ref.get("kind") or ""),
        "name": str(ref.get("name") or ""),
        "apiVersion": str(ref.get("apiVersion") or ""),
    }


def hypernode_label(obj: Mapping[str, Any] | None, tier_name: str) -> str:
    """What the HyperNode stands for (see the module docstring)."""
    meta = (obj or {}).get("metadata") or {}
    labels = meta.get("labels") or {}
    if tier_name and labels.get(tier_name):
        return str(labels[tier_name])
    leaves = str((meta.get("annotations") or {}).get(UFM_LEAVES_ANNOTATION) or "")
    if leaves:
        names = [n for n in leaves.split(",") if n]
        more = len(names) - MAX_LEAVES_SHOWN
        shown = ", ".join(names[:MAX_LEAVES_SHOWN])
        return f"{shown} +{more}" if more > 0 else shown
    return ""
