"""Kubernetes' own gang objects (``scheduling.k8s.io/v1beta1`` PodGroup) as Volcano PodGroups.

Kubernetes v1.37 serves, behind the ``GenericWorkload`` gate, a ``PodGroup`` that a pod joins
with ``spec.schedulingGroup.podGroupName`` (the Job controller makes one per Job with
``spec.scheduling`` when ``WorkloadWithJob`` is on). The scheduler reads such a group through
the same ``JobInfo`` as a Volcano PodGroup: ``volcano_view`` turns it into the Volcano-shaped
dict the cache keeps for the job, so the gang, enqueue, allocate and topology machinery need
not know where a job came from. The mapping:

- ``schedulingPolicy.gang.minCount`` is ``minMember``; ``basic`` (or no policy) is a gang of
  one, scheduled pod by pod.
- ``schedulingConstraints.topology[0].key`` (a node label) becomes a hard
  ``networkTopology`` whose ``highestTierName`` is that key: a HyperNode tier named by the key
  (label discovery names each tier by the label that made it; a hand-made tree says so in its
  HyperNodes' ``spec.tierName``). The ``volcano.sh/network-topology-mode: soft`` annotation on
  the native PodGroup asks for soft mode; the key always wins over a tier annotation.
- ``scheduling.volcano.sh/queue-name`` (annotation) is the queue; ``priorityClassName`` and
  ``priority`` are kept.
- ``spec.workloadRef`` names a Workload and one of its ``podGroupTemplates``: while the
  scheduler reads Workloads (the API server serves them) and that Workload or template is
  not in its cache, the view carries why (``NATIVE_WAITING_ANNOTATION``, from
  ``workload_problem``) and the group waits (``Session.workload_gate``).
- The view's ``status`` is the scheduler's own (phase and conditions), kept in the cache: the
  native object's status has only ``conditions``, written by ``initially_scheduled``.

Pure: no I/O, never raises on a malformed object (the view carries what can be read; a bad
``minCount`` is passed on for ``JobInfo`` to refuse, naming the field).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from volcano_py.api import JSON
from volcano_py.api.constants import (
    NETWORK_TOPOLOGY_MODE_ANNOTATION,
    QUEUE_NAME_ANNOTATION,
    NetworkTopologyMode,
)

NATIVE_GROUP = "scheduling.k8s.io"
NATIVE_VERSION = "v1beta1"
NATIVE_API_VERSION = f"{NATIVE_GROUP}/{NATIVE_VERSION}"
NATIVE_KIND = "PodGroup"
# kube-scheduler's condition on the native PodGroup and its reasons
INITIALLY_SCHEDULED = "PodGroupInitiallyScheduled"
REASON_UNSCHEDULABLE = "Unschedulable"
REASON_SCHEDULER_ERROR = "SchedulerError"
REASON_SCHEDULED = "Scheduled"
# marks the cache's Volcano-shaped view of a native PodGroup (never written anywhere)
NATIVE_VIEW_ANNOTATION = "volcano-py.io/native-podgroup"
# the view's workload as people name it ("Job trainer", "Workload train"; ``workload_of``)
NATIVE_WORKLOAD_ANNOTATION = "volcano-py.io/native-workload"
# on the view of a group whose Workload or template is missing: why it waits (never written)
NATIVE_WAITING_ANNOTATION = "volcano-py.io/native-waiting"


def has_kind(obj: Mapping[str, Any], api_version: str, kind: str) -> bool:
    """Whether ``obj`` says it is ``api_version`` / ``kind``."""
    return obj.get("apiVersion") == api_version and obj.get("kind") == kind


def with_kind(obj: JSON, api_version: str, kind: str) -> JSON:
    """``obj`` with its apiVersion and kind set (the items of a LIST carry neither)."""
    return obj if has_kind(obj, api_version, kind) else dict(obj, apiVersion=api_version, kind=kind)


def is_native(obj: Mapping[str, Any]) -> bool:
    """Whether ``obj`` is a ``scheduling.k8s.io`` PodGroup (not a Volcano one)."""
    return has_kind(obj, NATIVE_API_VERSION, NATIVE_KIND)


def as_native(obj: JSON) -> JSON:
    """``obj`` from the native PodGroups' informer, with its apiVersion and kind set.

    The items of a LIST carry neither (a watch event's object does), and the cache and the
    writer tell the two kinds called PodGroup apart by them.
    """
    return with_kind(obj, NATIVE_API_VERSION, NATIVE_KIND)


def is_native_view(pg: Mapping[str, Any]) -> bool:
    """Whether a cached PodGroup is the view of a native one (``volcano_view``)."""
    annotations = (pg.get("metadata") or {}).get("annotations") or {}
    return NATIVE_VIEW_ANNOTATION in annotations


def pod_group_name(pod: Mapping[str, Any]) -> str:
    """The native PodGroup a pod names in ``spec.schedulingGroup.podGroupName`` ("" if none)."""
    group = (pod.get("spec") or {}).get("schedulingGroup")
    if not isinstance(group, Mapping):
        return ""
    name = group.get("podGroupName")
    return name if isinstance(name, str) else ""


def job_default(native: Mapping[str, Any]) -> bool:
    """Whether ``native`` is the group a Job controller makes for a Job that asked for nothing.

    With ``WorkloadWithJob`` on, kube-controller-manager's Job controller makes a Workload
    and a PodGroup for every Job without a ``spec.schedulingGroup`` in its template, ``basic``
    when the Job has no ``spec.scheduling``. Such a group, controlled by a Job, with no gang,
    no constraints and none of the Volcano annotations this module reads, says nothing a
    Volcano PodGroup does not: its pods are handled as Volcano handles a Job's pods (a
    Volcano PodGroup from pg-controller, the Job's ``volcano.sh/`` annotations honoured).
    """
    meta = native.get("metadata") or {}
    refs = [r for r in meta.get("ownerReferences") or () if isinstance(r, Mapping)]
    if not any(r.get("controller") and r.get("kind") == "Job" for r in refs):
        return False
    spec = native.get("spec") or {}
    policy = spec.get("schedulingPolicy") or {}
    if not isinstance(policy, Mapping) or policy.get("gang") is not None:
        return False
    if spec.get("schedulingConstraints"):
        return False
    annotations = meta.get("annotations") or {}
    return not any(
        k in annotations for k in (QUEUE_NAME_ANNOTATION, NETWORK_TOPOLOGY_MODE_ANNOTATION)
    )


def topology_key(native: Mapping[str, Any]) -> str:
    """The node label of ``schedulingConstraints.topology[0].key`` ("" when none)."""
    constraints = (native.get("spec") or {}).get("schedulingConstraints") or {}
    topology = constraints.get("topology") if isinstance(constraints, Mapping) else None
    if not isinstance(topology, list) or not topology or not isinstance(topology[0], Mapping):
        return ""
    key = topology[0].get("key")
    return key if isinstance(key, str) else ""


def min_member(native: Mapping[str, Any]) -> Any:
    """``gang.minCount`` (passed on as found, for ``JobInfo`` to check); 1 for ``basic``."""
    policy = (native.get("spec") or {}).get("schedulingPolicy") or {}
    gang = policy.get("gang") if isinstance(policy, Mapping) else None
    if isinstance(gang, Mapping):
        return gang.get("minCount", 1)
    return 1


def owner_references(native: Mapping[str, Any]) -> list[JSON]:
    """The group's ownerReferences; else, with ``spec.workloadRef``, one to that Workload.

    The Job controller makes a Job's PodGroup with a controller reference to the Job (and one
    to its Workload); a standalone PodGroup may only name its Workload in ``workloadRef``.
    """
    refs = [dict(r) for r in (native.get("metadata") or {}).get("ownerReferences") or ()]
    ref = (native.get("spec") or {}).get("workloadRef")
    name = ref.get("workloadName") if isinstance(ref, Mapping) else None
    if refs or not isinstance(name, str) or not name:
        return refs
    return [
        {"apiVersion": NATIVE_API_VERSION, "kind": "Workload", "name": name, "controller": True}
    ]


def workload_ref(native: Mapping[str, Any]) -> tuple[str, str]:
    """``spec.workloadRef``'s ``(workloadName, templateName)`` (``("", "")`` when none)."""
    ref = (native.get("spec") or {}).get("workloadRef")
    if not isinstance(ref, Mapping):
        return "", ""
    name, template = ref.get("workloadName"), ref.get("templateName")
    return (
        name if isinstance(name, str) else "",
        template if isinstance(template, str) else "",
    )


def workload_templates(workload: Mapping[str, Any]) -> frozenset[str]:
    """The names of a Workload's ``podGroupTemplates`` and ``compositePodGroupTemplates``."""
    spec = workload.get("spec") or {}
    names: set[str] = set()
    for field in ("podGroupTemplates", "compositePodGroupTemplates"):
        templates = spec.get(field) if isinstance(spec, Mapping) else None
        for template in templates if isinstance(templates, list) else ():
            name = template.get("name") if isinstance(template, Mapping) else None
            if isinstance(name, str):
                names.add(name)
    return frozenset(names)


def workload_problem(
    native: Mapping[str, Any], workloads: Mapping[str, frozenset[str]] | None
) -> str:
    """Why ``native`` waits for the Workload its ``workloadRef`` names; "" when it need not.

    ``workloads``: the cached Workloads (``namespace/name`` -> their template names), None
    when Workloads are not read (then nothing waits for one). A group without
    ``workloadRef`` never waits.
    """
    name, template = workload_ref(native)
    if workloads is None or not name:
        return ""
    namespace = (native.get("metadata") or {}).get("namespace", "")
    templates = workloads.get(f"{namespace}/{name}")
    if templates is None:
        return f"Workload {namespace}/{name} (spec.workloadRef.workloadName) does not exist"
    if template not in templates:
        known = ", ".join(sorted(templates)) or "none"
        return (
            f"Workload {namespace}/{name} has no template {template!r} "
            f"(spec.workloadRef.templateName; its templates: {known})"
        )
    return ""


def workload_of(native: Mapping[str, Any]) -> str:
    """``"<Kind> <name>"`` of the workload behind the group (controller first); "" if none."""
    refs = owner_references(native)
    ref = next((r for r in refs if r.get("controller")), refs[0] if refs else None)
    return f"{ref.get('kind', '')} {ref.get('name', '')}" if ref else ""


def view_waiting(pg: Mapping[str, Any]) -> str:
    """Why a cached view waits for its Workload (``NATIVE_WAITING_ANNOTATION``); "" if not."""
    annotations = (pg.get("metadata") or {}).get("annotations") or {}
    return str(annotations.get(NATIVE_WAITING_ANNOTATION) or "")


def view_workload(pg: Mapping[str, Any]) -> str:
    """The workload a cached view names (``NATIVE_WORKLOAD_ANNOTATION``); "" for others."""
    annotations = (pg.get("metadata") or {}).get("annotations") or {}
    return str(annotations.get(NATIVE_WORKLOAD_ANNOTATION) or "")


def volcano_view(native: Mapping[str, Any], status: JSON | None = None, waiting: str = "") -> JSON:
    """The Volcano-shaped PodGroup the cache keeps for ``native`` (module doc).

    ``status``: the scheduler's own status kept from the last cycle (Pending when None);
    ``waiting``: why it waits for its Workload (``workload_problem``; "" when it need not).
    """
    meta = native.get("metadata") or {}
    spec = native.get("spec") or {}
    annotations = dict(meta.get("annotations") or {})
    annotations[NATIVE_VIEW_ANNOTATION] = "true"
    workload = workload_of(native)
    if workload:
        annotations[NATIVE_WORKLOAD_ANNOTATION] = workload
    if waiting:
        annotations[NATIVE_WAITING_ANNOTATION] = waiting
    out_spec: JSON = {"minMember": min_member(native)}
    queue = annotations.get(QUEUE_NAME_ANNOTATION)
    if queue:
        out_spec["queue"] = queue
    for field in ("priorityClassName", "priority"):
        if spec.get(field) is not None:
            out_spec[field] = spec[field]
    key = topology_key(native)
    if key:
        soft = annotations.get(NETWORK_TOPOLOGY_MODE_ANNOTATION) == NetworkTopologyMode.SOFT
        mode = NetworkTopologyMode.SOFT if soft else NetworkTopologyMode.HARD
        out_spec["networkTopology"] = {"mode": str(mode), "highestTierName": key}
    metadata = {
        k: meta[k]
        for k in ("name", "namespace", "uid", "creationTimestamp", "resourceVersion", "labels")
        if k in meta
    }
    metadata["annotations"] = annotations
    refs = owner_references(native)
    if refs:
        metadata["ownerReferences"] = refs  # the UI's owner (``ui/owners.py``)
    return {
        "apiVersion": NATIVE_API_VERSION,
        "kind": NATIVE_KIND,
        "metadata": metadata,
        "spec": out_spec,
        "status": status if status is not None else {"phase": "Pending"},
    }


def initially_scheduled(
    native: Mapping[str, Any], scheduled: bool, reason: str, message: str, now: str
) -> JSON | None:
    """``native`` with its ``PodGroupInitiallyScheduled`` condition set; None when unchanged.

    Once ``True`` the condition stays (kube-scheduler sets it once, when the group is first
    placed); ``lastTransitionTime`` moves only when the status flips.
    """
    status = native.get("status") or {}
    conditions = [c for c in status.get("conditions") or [] if isinstance(c, Mapping)]
    old = next((c for c in conditions if c.get("type") == INITIALLY_SCHEDULED), None)
    if old is not None and old.get("status") == "True":
        return None
    value = "True" if scheduled else "False"
    if (
        old is not None
        and old.get("status") == value
        and old.get("reason") == reason
        and old.get("message") == message
    ):
        return None
    since = old.get("lastTransitionTime") if old and old.get("status") == value else now
    condition = {
        "type": INITIALLY_SCHEDULED,
        "status": value,
        "reason": reason,
        "message": message,
        "lastTransitionTime": since or now,
        "observedGeneration": (native.get("metadata") or {}).get("generation", 0),
    }
    rest = [c for c in conditions if c.get("type") != INITIALLY_SCHEDULED]
    return dict(native, status=dict(status, conditions=[*rest, condition]))
