"""``TaskInfo`` (one pod the scheduler knows about) and its ``TaskStatus``.

Built from a cached Pod dict without copying it: the task keeps a reference to the (read-only)
informer object for the predicates and the binder. ``template`` is a digest of everything a
static predicate or a node-local score depends on (requests, nodeSelector, affinity,
tolerations), so identical pods of a gang share predicate results (see ``framework.session``).

The pods of one workload share their spec's subtrees (the Pod transform keeps one object
per distinct ``containers`` list, ``tolerations``, ...: ``kube/transforms.py``), so a task's
request and template are computed once per set of those subtrees (``request_and_template``):
keyed by the subtrees' identities, each entry holds the subtrees themselves (an ``id`` is
unique only while its object lives) and is used only when they are the very same objects.
2,000 gang pods then cost one request parse instead of 2,000 when the scheduler's cache
fills at start-up, and a pod's status update none.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

import orjson

from volcano_py.api import JSON
from volcano_py.api.constants import KUBE_GROUP_NAME_ANNOTATION
from volcano_py.api.native_groups import pod_group_name
from volcano_py.api.resources import PODS
from volcano_py.kube.memo import GenerationMemo
from volcano_py.kube.transforms import CacheReads
from volcano_py.scheduler.api.host_ports import HostPort, host_ports
from volcano_py.scheduler.api.resource import Resource
from volcano_py.scheduler.api.volumes import Claim, pod_claims


class TaskStatus(IntEnum):
    """Volcano's task states (the subset a pod can be in here)."""

    PENDING = 1
    ALLOCATED = 2
    BINDING = 3
    BOUND = 4
    RUNNING = 5
    RELEASING = 6
    SUCCEEDED = 7
    FAILED = 8
    UNKNOWN = 9


# States whose request occupies the node (Volcano's AllocatedStatus plus Releasing).
OCCUPYING = frozenset(
    {
        TaskStatus.ALLOCATED,
        TaskStatus.BINDING,
        TaskStatus.BOUND,
        TaskStatus.RUNNING,
        TaskStatus.RELEASING,
    }
)
# States that count towards a gang's minMember (Volcano's ReadyTaskNum).
READY = frozenset(
    {
        TaskStatus.ALLOCATED,
        TaskStatus.BINDING,
        TaskStatus.BOUND,
        TaskStatus.RUNNING,
        TaskStatus.SUCCEEDED,
    }
)


def pod_status(pod: JSON) -> TaskStatus:
    """The task state a pod is in, from its phase, nodeName and deletionTimestamp."""
    phase = (pod.get("status") or {}).get("phase", "Pending")
    if phase == "Succeeded":
        return TaskStatus.SUCCEEDED
    if phase == "Failed":
        return TaskStatus.FAILED
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        return TaskStatus.RELEASING
    if phase == "Running":
        return TaskStatus.RUNNING
    if phase == "Unknown":
        return TaskStatus.UNKNOWN
    if (pod.get("spec") or {}).get("nodeName"):
        return TaskStatus.BOUND
    return TaskStatus.PENDING


# kube-scheduler's stand-ins, for scoring only, for a container asking no cpu / no memory
NON_ZERO_MILLI_CPU = 100
NON_ZERO_MEMORY = 200 * 1024 * 1024


def pod_request(pod: JSON, *, non_zero: bool = False) -> Resource:
    """The pod's effective request, as the kubelet admits it.

    Sum of the containers, raised to any init container (plus the restartable sidecars
    started before it); the pod-level ``spec.resources`` cpu, memory and hugepages instead
    where set; plus ``spec.overhead``. With ``non_zero``: kube-scheduler's request
    for its resource scores, where a container asking no cpu counts 100m and one asking no
    memory 200Mi.
    """
    spec = pod.get("spec") or {}
    total = Resource()
    for container in spec.get("containers") or ():
        total.add(_requests(container, non_zero))
    sidecars = Resource()
    init_peak = Resource()
    for container in spec.get("initContainers") or ():
        req = _requests(container, non_zero)
        if container.get("restartPolicy") == "Always":
            sidecars.add(req)
            init_peak.max_with(sidecars)
        else:
            init_peak.max_with(req.clone().add(sidecars))
    total.add(sidecars).max_with(init_peak)
    pod_level = spec.get("resources") or {}
    pod_level = pod_level.get("requests") or pod_level.get("limits") or {}
    for name, amount in pod_level.items():  # pod-level cpu, memory, hugepages win
        if name in ("cpu", "memory") or name.startswith("hugepages-"):
            asked = Resource.from_list({name: amount}, "spec.resources.requests")
            if name == "cpu":
                total.milli_cpu = asked.milli_cpu
            elif name == "memory":
                total.memory = asked.memory
            else:
                total.scalars[name] = asked.scalars[name]
    if spec.get("overhead"):
        total.add(Resource.from_list(spec["overhead"], "spec.overhead"))
    return total


def _requests(container: JSON, non_zero: bool = False) -> Resource:
    resources = container.get("resources") or {}
    requests = resources.get("requests") or resources.get("limits") or {}
    res = Resource.from_list(requests, f"containers[{container.get('name', '')}].requests")
    if non_zero:
        if "cpu" not in requests:
            res.milli_cpu = NON_ZERO_MILLI_CPU
        if "memory" not in requests:
            res.memory = NON_ZERO_MEMORY
    return res


def non_zero_request(pod: JSON) -> tuple[int, int]:
    """(milli-cpu, memory) as kube-scheduler's resource scores count them (``non_zero``)."""
    scored = pod_request(pod, non_zero=True)
    return scored.milli_cpu, scored.memory


def template_key(pod: JSON, request: Resource, non_zero: tuple[int, int] | None = None) -> str:
    """What static predicates and node-local scores of this pod depend on, as JSON text.

    ``non_zero`` (``non_zero_request``) counts only where it differs from the request's cpu
    and memory. Text, not orjson's bytes: those keep orjson's whole output buffer (about
    4 KiB each).
    """
    spec = pod.get("spec") or {}
    parts = [
        sorted(request.items()),
        spec.get("nodeSelector"),
        spec.get("affinity"),
        spec.get("tolerations"),
    ]
    if non_zero is not None and non_zero != (request.milli_cpu, request.memory):
        parts.append(list(non_zero))
    return orjson.dumps(parts, option=orjson.OPT_SORT_KEYS).decode()


# what ``pod_request`` and ``template_key`` read of a pod's spec
_TEMPLATE_PARTS = (
    "containers",
    "initContainers",
    "resources",
    "overhead",
    "nodeSelector",
    "affinity",
    "tolerations",
)
_Parts = tuple[Any, ...]
_Derived = tuple[Resource, str, tuple[HostPort, ...], tuple[int, int]]
_BY_PARTS: GenerationMemo[tuple[int, ...], tuple[_Parts, _Derived]] = GenerationMemo(4096)


def request_and_template(pod: JSON) -> _Derived:
    """``pod_request``, ``template_key``, ``host_ports`` and the non-zero cpu and memory."""
    spec = pod.get("spec") or {}
    parts = tuple(spec.get(name) for name in _TEMPLATE_PARTS)
    key = tuple(map(id, parts))
    known = _BY_PARTS.get(key)
    if known is not None and all(a is b for a, b in zip(known[0], parts, strict=True)):
        return known[1]
    request = pod_request(pod)
    non_zero = non_zero_request(pod)
    derived = (request, template_key(pod, request, non_zero), host_ports(spec), non_zero)
    _BY_PARTS.put(key, (parts, derived))
    return derived


class TaskInfo:
    """One pod as a schedulable (or placed) task."""

    __slots__ = (
        "claims",
        "creation",
        "gated",
        "host_ports",
        "job",
        "key",
        "name",
        "namespace",
        "node_name",
        "non_zero",
        "plain",
        "pod",
        "pod_affinity",
        "pod_constraints",
        "priority",
        "resreq",
        "status",
        "template",
    )

    def __init__(self, pod: JSON) -> None:
        """From a cached Pod dict (kept by reference, never mutated)."""
        meta = pod.get("metadata") or {}
        spec = pod.get("spec") or {}
        self.pod = pod
        self.namespace: str = meta.get("namespace", "")
        self.name: str = meta.get("name", "")
        self.key = f"{self.namespace}/{self.name}"
        # a native PodGroup (``spec.schedulingGroup``) wins over the group-name annotation
        group = pod_group_name(pod) or (meta.get("annotations") or {}).get(
            KUBE_GROUP_NAME_ANNOTATION
        )
        self.job = f"{self.namespace}/{group}" if group else ""
        # non_zero: (milli-cpu, memory) as kube-scheduler's resource scores count them
        self.resreq, self.template, self.host_ports, self.non_zero = request_and_template(pod)
        self.node_name: str = spec.get("nodeName") or ""
        affinity = spec.get("affinity") or {}
        # kube-scheduler's PodInfo "with affinity": the inter-pod terms index nodes by it
        self.pod_affinity = bool(affinity.get("podAffinity") or affinity.get("podAntiAffinity"))
        # what the inter-pod/spread checks must read (``plugins/podconstraints``)
        self.pod_constraints = self.pod_affinity or bool(spec.get("topologySpreadConstraints"))
        self.status = pod_status(pod)
        self.priority: int = int(spec.get("priority") or 0)
        self.creation: str = meta.get("creationTimestamp") or ""
        # ``spec.schedulingGates`` not empty: never placed, holds nothing (kube-scheduler's
        # SchedulingGates PreEnqueue; Volcano's ``SchGated``)
        self.gated = bool(spec.get("schedulingGates"))
        # the PersistentVolumeClaims of its volumes (``api/volumes.py``)
        self.claims: tuple[Claim, ...] = pod_claims(pod)
        # none of the above asked (no host port, claim, inter-pod term, spread, gate, DRA
        # claim): its template and the room on a node decide alone where it fits, so the
        # checks for those are skipped (``predicates``, allocate's ``_may_try``)
        self.plain = not (
            self.host_ports
            or self.claims
            or self.pod_constraints
            or self.gated
            or spec.get("resourceClaims")
        )

    def clone(self) -> TaskInfo:
        """A copy sharing the pod and the request (both read-only).

        Every slot by name, not by a loop over ``__slots__`` (a third of the time, and every
        task of a snapshot is cloned); ``test_task_clone_copies_every_slot`` keeps the two
        lists alike.
        """
        copy = TaskInfo.__new__(TaskInfo)
        copy.claims = self.claims
        copy.creation = self.creation
        copy.gated = self.gated
        copy.host_ports = self.host_ports
        copy.job = self.job
        copy.key = self.key
        copy.name = self.name
        copy.namespace = self.namespace
        copy.node_name = self.node_name
        copy.non_zero = self.non_zero
        copy.plain = self.plain
        copy.pod = self.pod
        copy.pod_affinity = self.pod_affinity
        copy.pod_constraints = self.pod_constraints
        copy.priority = self.priority
        copy.resreq = self.resreq
        copy.status = self.status
        copy.template = self.template
        return copy

    def __repr__(self) -> str:
        """``Task(ns/name Pending on node)``."""
        gated = " gated" if self.gated else ""
        return f"Task({self.key} {self.status.name}{gated} on {self.node_name or '-'})"


# What the scheduler reads from the shared Pod cache (checked against the Pod transform by
# tests/unit/kube/test_cache_contract.py): identity and group, placement constraints, the
# request's parts, priority, and the phase and conditions it keeps.
POD_READS = CacheReads(
    "scheduler",
    PODS,
    (
        "metadata.name",
        "metadata.namespace",
        "metadata.uid",
        "metadata.resourceVersion",
        "metadata.labels",
        "metadata.annotations",
        "metadata.creationTimestamp",
        "metadata.deletionTimestamp",
        "metadata.ownerReferences[].uid",
        "spec.schedulerName",
        "spec.nodeName",
        "spec.nodeSelector",
        "spec.affinity",
        "spec.tolerations",
        "spec.priority",
        "spec.priorityClassName",
        "spec.preemptionPolicy",
        "spec.overhead",
        "spec.containers[].resources",
        "spec.containers[].ports",
        "spec.initContainers[].resources",
        "spec.initContainers[].ports",
        "spec.initContainers[].restartPolicy",
        "spec.schedulingGates",
        "spec.schedulingGroup.podGroupName",
        "spec.volumes[].name",
        "spec.volumes[].persistentVolumeClaim.claimName",
        "status.phase",
        "status.conditions[].type",
        "status.conditions[].status",
    ),
)
