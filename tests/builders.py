"""Builders for the objects tests create: plain dicts, shaped like the API's JSON.

``*_body`` functions only build; ``create_*`` functions also create through a client (and,
for Nodes, set ``status`` through the status subresource, since there is no kubelet).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient, resource_path

JSON = dict[str, Any]
DEFAULT_ALLOCATABLE = {"cpu": "8", "memory": "32Gi", "pods": "110"}


def node_body(
    name: str,
    labels: Mapping[str, str] | None = None,
    allocatable: Mapping[str, str] | None = None,
    *,
    ready: bool = True,
    unschedulable: bool = False,
    taints: Sequence[JSON] = (),
) -> JSON:
    """A Node with status (allocatable == capacity, a Ready condition)."""
    resources = dict(allocatable or DEFAULT_ALLOCATABLE)
    spec: JSON = {}
    if unschedulable:
        spec["unschedulable"] = True
    if taints:
        spec["taints"] = list(taints)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": dict(labels or {})},
        "spec": spec,
        "status": {
            "capacity": resources,
            "allocatable": resources,
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True" if ready else "False",
                    "reason": "KubeletReady" if ready else "KubeletNotReady",
                    "message": "set by the test",
                }
            ],
        },
    }


def create_node(client: KubeClient, name: str, **kwargs: Any) -> JSON:
    """Create a Node, set its status (the create drops it) and keep only the given taints."""
    body = node_body(name, **kwargs)
    client.create(R.NODES, body)
    node = client.patch(R.NODES, name, {"status": body["status"]}, subresource="status")
    # The API server's TaintNodesByCondition admission adds node.kubernetes.io/not-ready at
    # creation, and no node lifecycle controller runs here to lift it once the node is Ready.
    wanted = list(body["spec"].get("taints") or [])
    if (node.get("spec") or {}).get("taints") != (wanted or None):
        node = client.patch(R.NODES, name, {"spec": {"taints": wanted or None}})
    return node


def pod_body(
    name: str,
    namespace: str,
    *,
    requests: Mapping[str, str] | None = None,
    scheduler_name: str | None = "volcano",
    annotations: Mapping[str, str] | None = None,
    labels: Mapping[str, str] | None = None,
    node_name: str | None = None,
) -> JSON:
    """A one-container Pod."""
    resources: JSON = {"requests": dict(requests or {})}
    # Extended resources cannot be overcommitted: the API server wants limits == requests.
    limits = {k: v for k, v in (requests or {}).items() if "/" in k}
    if limits:
        resources["limits"] = limits
    spec: JSON = {
        "containers": [
            {"name": "main", "image": "registry.k8s.io/pause:3.10", "resources": resources}
        ]
    }
    if scheduler_name:
        spec["schedulerName"] = scheduler_name
    if node_name:
        spec["nodeName"] = node_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "annotations": dict(annotations or {}),
            "labels": dict(labels or {}),
        },
        "spec": spec,
    }


def hypernode_body(
    name: str,
    tier: int,
    members: Sequence[JSON],
    *,
    tier_name: str | None = None,
    labels: Mapping[str, str] | None = None,
) -> JSON:
    """A HyperNode; ``members`` are MemberSpec dicts (see ``exact``/``regex``/``label``)."""
    spec: JSON = {"tier": tier, "members": list(members)}
    if tier_name is not None:
        spec["tierName"] = tier_name
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": name, "labels": dict(labels or {})},
        "spec": spec,
    }


def exact(name: str, member_type: str = "Node") -> JSON:
    """An exactMatch member."""
    return {"type": member_type, "selector": {"exactMatch": {"name": name}}}


def regex(pattern: str, member_type: str = "Node") -> JSON:
    """A regexMatch member."""
    return {"type": member_type, "selector": {"regexMatch": {"pattern": pattern}}}


def label(match_labels: Mapping[str, str], member_type: str = "Node") -> JSON:
    """A labelMatch member."""
    return {"type": member_type, "selector": {"labelMatch": {"matchLabels": dict(match_labels)}}}


def podgroup_body(
    name: str,
    namespace: str,
    min_member: int,
    *,
    min_resources: Mapping[str, str] | None = None,
    queue: str = "default",
    network_topology: JSON | None = None,
) -> JSON:
    """A PodGroup (scheduling.volcano.sh/v1beta1)."""
    spec: JSON = {"minMember": min_member, "queue": queue}
    if min_resources:
        spec["minResources"] = dict(min_resources)
    if network_topology:
        spec["networkTopology"] = network_topology
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def deployment_body(
    name: str,
    namespace: str,
    replicas: int,
    *,
    annotations: Mapping[str, str] | None = None,
    pod_annotations: Mapping[str, str] | None = None,
    requests: Mapping[str, str] | None = None,
    scheduler_name: str = "volcano",
) -> JSON:
    """A Deployment of pause pods for ``scheduler_name``."""
    match = {"app": name}
    pod = pod_body(
        "unused",
        namespace,
        requests=requests,
        scheduler_name=scheduler_name,
        annotations=pod_annotations,
        labels=match,
    )
    template = {
        "metadata": {"labels": match, "annotations": pod["metadata"]["annotations"]},
        "spec": pod["spec"],
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "annotations": dict(annotations or {})},
        "spec": {"replicas": replicas, "selector": {"matchLabels": match}, "template": template},
    }


def force_delete_pod(client: KubeClient, name: str, namespace: str) -> None:
    """Delete a pod at once (no kubelet here to finish a graceful deletion)."""
    body = {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0}
    client.request("DELETE", resource_path(R.PODS, namespace, name), body=body)
