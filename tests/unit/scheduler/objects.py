"""Compact builders for scheduler tests: Nodes, HyperNodes, PodGroups and Pods as dicts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from volcano_py.api.constants import KUBE_GROUP_NAME_ANNOTATION

JSON = dict[str, Any]


def node(
    name: str,
    allocatable: Mapping[str, Any] | None = None,
    *,
    labels: Mapping[str, str] | None = None,
    taints: Sequence[JSON] = (),
    unschedulable: bool = False,
    ready: bool = True,
) -> JSON:
    """A Node with status set (default 8 cpu, 32Gi, 110 pods)."""
    alloc = {"cpu": "8", "memory": "32Gi", "pods": "110"}
    alloc.update({k: str(v) for k, v in (allocatable or {}).items()})
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": dict(labels or {})},
        "spec": {"taints": list(taints), "unschedulable": unschedulable},
        "status": {
            "allocatable": alloc,
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
        },
    }


def hypernode(
    name: str,
    tier: int,
    *,
    nodes: Sequence[str] = (),
    children: Sequence[str] = (),
    regex: str | None = None,
    labels: Mapping[str, str] | None = None,
    tier_name: str = "",
) -> JSON:
    """A HyperNode with exact node/hypernode members, or one regex / label member."""
    members: list[JSON] = [{"type": "Node", "selector": {"exactMatch": {"name": n}}} for n in nodes]
    members += [{"type": "HyperNode", "selector": {"exactMatch": {"name": c}}} for c in children]
    if regex is not None:
        members.append({"type": "Node", "selector": {"regexMatch": {"pattern": regex}}})
    if labels is not None:
        members.append({"type": "Node", "selector": {"labelMatch": {"matchLabels": dict(labels)}}})
    spec: JSON = {"tier": tier, "members": members}
    if tier_name:
        spec["tierName"] = tier_name
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": name},
        "spec": spec,
    }


def podgroup(
    name: str,
    min_member: int,
    *,
    namespace: str = "default",
    min_resources: Mapping[str, Any] | None = None,
    mode: str | None = None,
    highest_tier: int | None = None,
    highest_tier_name: str | None = None,
    phase: str | None = None,
    annotations: Mapping[str, str] | None = None,
    created: str = "2026-01-01T00:00:00Z",
    queue: str = "default",
    sub_group_policy: Sequence[JSON] = (),
    min_task_member: Mapping[str, int] | None = None,
) -> JSON:
    """A PodGroup (``sub_group_policy`` entries are written as given)."""
    spec: JSON = {"minMember": min_member, "queue": queue}
    if sub_group_policy:
        spec["subGroupPolicy"] = [dict(p) for p in sub_group_policy]
    if min_task_member:
        spec["minTaskMember"] = dict(min_task_member)
    if min_resources:
        spec["minResources"] = {k: str(v) for k, v in min_resources.items()}
    if mode is not None:
        topo: JSON = {"mode": mode}
        if highest_tier is not None:
            topo["highestTierAllowed"] = highest_tier
        if highest_tier_name is not None:
            topo["highestTierName"] = highest_tier_name
        spec["networkTopology"] = topo
    pg: JSON = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "creationTimestamp": created,
            "annotations": dict(annotations or {}),
        },
        "spec": spec,
    }
    if phase:
        pg["status"] = {"phase": phase}
    return pg


def pod(
    name: str,
    group: str | None = None,
    requests: Mapping[str, Any] | None = None,
    *,
    namespace: str = "default",
    node_name: str | None = None,
    phase: str = "Pending",
    scheduler: str = "volcano",
    priority: int | None = None,
    node_selector: Mapping[str, str] | None = None,
    tolerations: Sequence[JSON] = (),
    affinity: JSON | None = None,
    labels: Mapping[str, str] | None = None,
    spec: Mapping[str, Any] | None = None,
    topology_spread: Sequence[JSON] = (),
) -> JSON:
    """A one-container Pod; ``spec``: further fields of its spec, set as given.

    ``topology_spread``: its ``topologySpreadConstraints``.
    """
    extra = dict(spec or {})
    body: JSON = {
        "schedulerName": scheduler,
        "containers": [
            {
                "name": "main",
                "resources": {"requests": {k: str(v) for k, v in (requests or {}).items()}},
            }
        ],
    }
    if node_name:
        body["nodeName"] = node_name
    if priority is not None:
        body["priority"] = priority
    if node_selector:
        body["nodeSelector"] = dict(node_selector)
    if tolerations:
        body["tolerations"] = list(tolerations)
    if affinity:
        body["affinity"] = affinity
    if topology_spread:
        body["topologySpreadConstraints"] = list(topology_spread)
    body.update(extra)
    annotations = {KUBE_GROUP_NAME_ANNOTATION: group} if group else {}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "annotations": annotations,
            "labels": dict(labels or {}),
        },
        "spec": body,
        "status": {"phase": phase},
    }


def queue(
    name: str,
    *,
    weight: int | None = None,
    capability: Mapping[str, Any] | None = None,
    guarantee: Mapping[str, Any] | None = None,
    deserved: Mapping[str, Any] | None = None,
    parent: str | None = None,
    state: str | None = None,
    annotations: Mapping[str, str] | None = None,
) -> JSON:
    """A Queue."""
    spec: JSON = {}
    if weight is not None:
        spec["weight"] = weight
    if capability:
        spec["capability"] = {k: str(v) for k, v in capability.items()}
    if guarantee:
        spec["guarantee"] = {"resource": {k: str(v) for k, v in guarantee.items()}}
    if deserved:
        spec["deserved"] = {k: str(v) for k, v in deserved.items()}
    if parent:
        spec["parent"] = parent
    obj: JSON = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": spec,
    }
    if annotations:
        obj["metadata"]["annotations"] = dict(annotations)
    if state:
        obj["status"] = {"state": state}
    return obj


def expand(cluster: Mapping[str, Any]) -> list[JSON]:
    """A scenario's compact ``cluster:`` section as objects.

    ``nodes``: ``{name, allocatable, labels, taints, unschedulable, ready, count}`` (with
    ``count`` the name is a prefix: ``n`` -> ``n-0 .. n-{count-1}``); ``hypernodes``:
    keyword arguments of ``hypernode``; ``queues``: of ``queue``; ``podgroups``: of
    ``podgroup``; ``pods``: of ``pod`` plus ``count`` (name prefix) and ``partition``
    (``{label, size}``: each pod gets ``label = index // size``, the index counted from
    ``index_base``); ``objects``: raw objects.
    """
    objects: list[JSON] = []
    for spec in cluster.get("nodes", ()):
        spec = dict(spec)
        count = spec.pop("count", None)
        name = spec.pop("name")
        names = [f"{name}-{i}" for i in range(count)] if count else [name]
        objects += [node(n, **spec) for n in names]
    for spec in cluster.get("hypernodes", ()):
        spec = dict(spec)
        objects.append(hypernode(spec.pop("name"), spec.pop("tier"), **spec))
    for spec in cluster.get("queues", ()):
        spec = dict(spec)
        objects.append(queue(spec.pop("name"), **spec))
    for spec in cluster.get("podgroups", ()):
        spec = dict(spec)
        objects.append(podgroup(spec.pop("name"), spec.pop("minMember"), **spec))
    for spec in cluster.get("pods", ()):
        spec = dict(spec)
        count = spec.pop("count", None)
        name = spec.pop("name")
        partition = spec.pop("partition", None)
        base = spec.pop("index_base", 0)
        labels = dict(spec.pop("labels", None) or {})
        names = [f"{name}-{i}" for i in range(count)] if count else [name]
        for i, n in enumerate(names):
            pod_labels = dict(labels)
            if partition:
                pod_labels[partition["label"]] = str((base + i) // partition["size"])
            objects.append(pod(n, **spec, labels=pod_labels))
    objects += list(cluster.get("objects", ()))
    return objects
