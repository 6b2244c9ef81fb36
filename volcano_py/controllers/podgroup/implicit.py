"""Bare pods the embedded scheduler runs without a PodGroup object (``--implicit-podgroups``).

Volcano's pg-controller gives every pod of its schedulers that names no group a PodGroup of
its own: the create, the pod's group-name patch and the PodGroup's status writes are four API
writes around the one binding a plain pod needs, and on a busy API server the writes are
the scheduling time (issue 30: 5,000 plain pods took 3.5-4.9x kube-scheduler's time).

A pod gains nothing from that object when its PodGroup would be a gang of one with no
topology and no partitions. ``implicit_podgroup`` picks those pods out and returns the very
PodGroup pg-controller would have created for them (``build_podgroup``: queue, priority
class, ``minResources``, the pod's preemptable / cooldown / revocable-zone / JDB
annotations), so that the scheduler keeps it in its cache only, as an *implicit job*, and the
pg-controller leaves the pod alone. Which pods:

- ``spec.schedulerName`` is checked by the caller (the embedded scheduler's name);
- no ``ownerReferences`` at all: a pod with owners takes its gang size and ``volcano.sh/``
  annotations from them (ReplicaSets, StatefulSets, Jobs), which would need a lookup that
  can lag; those keep their PodGroup object;
- no ``scheduling.k8s.io/group-name`` and not being deleted;
- the built PodGroup has ``minMember`` 1, no ``networkTopology``, no ``subGroupPolicy`` and
  nothing to warn about (a bad annotation keeps the object, so its Event is recorded).

The choice is made from the pod alone, so the scheduler's cache and the pg-controller, each
calling this on its own informer event, always agree. ``metadata.creationTimestamp`` is the
pod's: jobs are ordered by it. See docs/podgroup.md ("Implicit PodGroups") for what a user
sees and ``--implicit-podgroups=false`` for Volcano's exact behaviour.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from volcano_py.api import JSON
from volcano_py.api import constants as C
from volcano_py.api.errors import FieldError
from volcano_py.api.meta import annotations_of, is_being_deleted, metadata
from volcano_py.controllers.podgroup.builder import build_podgroup


def implicit_podgroup(pod: Mapping[str, Any]) -> JSON | None:
    """The PodGroup the scheduler keeps in its cache for ``pod``, or None (module doc)."""
    meta = metadata(pod)
    if meta.get("ownerReferences") or is_being_deleted(pod):
        return None
    if annotations_of(pod).get(C.KUBE_GROUP_NAME_ANNOTATION):
        return None
    try:
        built = build_podgroup(pod, {})  # partitions read as pg-controller's default
    except FieldError:
        return None  # pg-controller reports it on the pod
    spec = built.body["spec"]
    if built.warnings or spec["minMember"] != 1:
        return None
    if "networkTopology" in spec or "subGroupPolicy" in spec:
        return None
    created = meta.get("creationTimestamp")
    if created:
        built.body["metadata"]["creationTimestamp"] = created
    return built.body


def is_implicit(pod: Mapping[str, Any]) -> bool:
    """Whether the scheduler runs ``pod`` as an implicit job (its schedulerName aside)."""
    return implicit_podgroup(pod) is not None


def implicit_pod_test(scheduler_name: str, *, enabled: bool) -> Callable[[Mapping[str, Any]], bool]:
    """The pg-controller's test: a pod of the embedded scheduler that it runs as implicit.

    ``enabled``: whether that scheduler runs implicit jobs at all (it alone knows of their
    PodGroups); when not, every pod gets its PodGroup object, as in Volcano.
    """
    if not enabled:
        return lambda pod: False
    return lambda pod: (
        (pod.get("spec") or {}).get("schedulerName") == scheduler_name and is_implicit(pod)
    )
