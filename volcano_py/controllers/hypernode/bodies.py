"""What a discovered HyperNode should look like in the cluster, and how to get it there.

Pure functions of objects, used by the reconcile (``reconcile.py``) and ``volcano-py
discover``: ``desired_body`` is the object a discovered HyperNode becomes (labelled with its
source, stamped with the configuration fingerprint, ``plan.py``), ``update_patch`` the merge
patch that turns what exists into it, ``unchanged`` whether there is nothing to write.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from volcano_py.api import JSON
from volcano_py.api import resources as R
from volcano_py.api.constants import NETWORK_TOPOLOGY_SOURCE_LABEL, STALE_CONDITION
from volcano_py.controllers.hypernode.plan import CONFIG_ANNOTATION


def desired_body(hypernode: Mapping[str, Any], source: str, fingerprint: str = "") -> JSON:
    """A clean copy of a discovered HyperNode, labelled with its source.

    ``fingerprint`` (when known) is stamped as ``CONFIG_ANNOTATION`` (see ``plan.py``).
    """
    meta = hypernode.get("metadata") or {}
    labels = dict(meta.get("labels") or {})
    labels[NETWORK_TOPOLOGY_SOURCE_LABEL] = source
    out_meta: JSON = {"name": meta["name"], "labels": labels}
    annotations = dict(meta.get("annotations") or {})
    if fingerprint:
        annotations[CONFIG_ANNOTATION] = fingerprint
    if annotations:
        out_meta["annotations"] = annotations
    return {
        "apiVersion": R.HYPERNODES.api_version,
        "kind": R.HYPERNODES.kind,
        "metadata": out_meta,
        # a shallow copy: the reconcile never changes a result, and a deep copy of 10,000
        # member selectors was most of an idle round's cost
        "spec": dict(hypernode.get("spec") or {}),
    }


def update_patch(current: Mapping[str, Any], desired: Mapping[str, Any]) -> JSON | None:
    """The merge patch turning ``current`` into ``desired``; None when nothing differs.

    The spec is replaced (keys ``desired`` lacks are nulled); labels and annotations only
    gain or change keys.
    """
    patch: JSON = {"metadata": {}}
    meta = desired.get("metadata") or {}
    current_meta = current.get("metadata") or {}
    for key in ("labels", "annotations"):
        have = current_meta.get(key) or {}
        changes = {k: v for k, v in (meta.get(key) or {}).items() if have.get(k) != v}
        if changes:
            patch["metadata"][key] = changes
    want_spec = desired.get("spec") or {}
    have_spec = current.get("spec") or {}
    if want_spec != have_spec:
        spec_patch: JSON = {k: None for k in have_spec if k not in want_spec}
        spec_patch.update(want_spec)
        patch["spec"] = spec_patch
    if not patch["metadata"] and "spec" not in patch:
        return None
    return patch


def unchanged(current: Mapping[str, Any], desired: Mapping[str, Any]) -> bool:
    """Nothing to patch and none of our condition to clear."""
    if update_patch(current, desired) is not None:
        return False
    return not any(c.get("type") == STALE_CONDITION for c in conditions_of(current))


def conditions_of(obj: Mapping[str, Any]) -> list[JSON]:
    """The object's ``status.conditions`` that are objects."""
    status = obj.get("status") or {}
    return [c for c in status.get("conditions") or [] if isinstance(c, dict)]
