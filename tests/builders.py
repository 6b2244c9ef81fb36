"""Builders for the objects tests create: plain dicts, shaped like the API's JSON.

``*_body`` functions only build; ``create_*`` functions also create through a client. Node bodies
and waiting for nodes come from ``devcluster.nodes`` (re-exported here for the tests).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import Any

from devcluster.nodes import DEFAULT_ALLOCATABLE as DEFAULT_ALLOCATABLE
from devcluster.nodes import NODE_TAINTS_BY_CONDITION as NODE_TAINTS_BY_CONDITION
from devcluster.nodes import create_node as create_node
from devcluster.nodes import node_body as node_body
from devcluster.nodes import node_is_up as node_is_up
from devcluster.nodes import wait_nodes_up as wait_nodes_up
from devcluster.nodes import wait_until as wait_until
from volcano_py.api import JSON as JSON
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient, resource_path
from volcano_py.kube.errors import NotFound


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


def create_bare_node(client: KubeClient, name: str, **kwargs: Any) -> JSON:
    """A Ready Node on a plane started with ``kwok=False`` (benchmarks that want no kubelets).

    Nobody plays its kubelet there, so this posts the Ready condition itself and removes the
    ``node.kubernetes.io/not-ready`` taint the API server adds at creation: what kwok and the
    node-lifecycle controller do on the default plane. Nothing ever updates it afterwards.
    """
    body = node_body(name, **kwargs)
    body["metadata"].pop("annotations", None)
    body["status"]["conditions"] = [
        {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "bare node"}
    ]
    client.create(R.NODES, body)
    return client.patch(R.NODES, name, {"spec": {"taints": body["spec"].get("taints")}})


def delete_pod(client: KubeClient, name: str, namespace: str, timeout: float = 30.0) -> None:
    """Delete a pod gracefully (``kubectl delete``) and wait until its kubelet (kwok) is done."""
    client.delete(R.PODS, name, namespace)

    def gone() -> bool:
        try:
            client.get(R.PODS, name, namespace)
        except NotFound:
            return True
        return False

    wait_until(gone, timeout, f"pod {namespace}/{name} deleted")


def force_delete_pod(client: KubeClient, name: str, namespace: str) -> None:
    """Delete a pod at once, without waiting for its kubelet (``kubectl delete --force``).

    A pod already gone is fine: kwok may finish a graceful deletion first.
    """
    body = {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0}
    with contextlib.suppress(NotFound):
        client.request("DELETE", resource_path(R.PODS, namespace, name), body=body)
