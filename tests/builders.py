"""Builders for the objects tests create: plain dicts, shaped like the API's JSON.

``*_body`` functions only build; ``create_*`` functions also create through a client. A Ready
node is handed to kwok (``tests/controlplane/kwok.py``), which plays its kubelet: the fixtures
wait for it to turn Ready and for kube-controller-manager to lift the not-ready taint, as in a
cluster, instead of patching taints away.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from tests.controlplane import kwok
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient, resource_path
from volcano_py.kube.errors import NotFound

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
    """A Node registering with its capacity (allocatable == capacity).

    ``ready``: the node has a kubelet (kwok's annotation; kwok sets its conditions). Otherwise
    it has none and reports ``Ready=False`` for ever (kube-controller-manager keeps it tainted).
    """
    resources = dict(allocatable or DEFAULT_ALLOCATABLE)
    spec: JSON = {}
    if unschedulable:
        spec["unschedulable"] = True
    if taints:
        spec["taints"] = list(taints)
    body: JSON = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": dict(labels or {})},
        "spec": spec,
        "status": {"capacity": resources, "allocatable": resources},
    }
    if ready:
        return kwok.managed(body)
    body["status"]["conditions"] = [
        {
            "type": "Ready",
            "status": "False",
            "reason": "KubeletNotReady",
            "message": "no kubelet (set by the test)",
        }
    ]
    return body


def wait_until(predicate: Callable[[], Any], timeout: float = 30.0, what: str = "condition") -> Any:
    """Poll ``predicate`` until it returns something truthy (returned) or ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < deadline, f"not met in {timeout}s: {what}"
        time.sleep(0.1)


NODE_TAINTS_BY_CONDITION = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")


def node_is_up(node: JSON) -> bool:
    """Ready, and no longer tainted for readiness (what a scheduler needs to use it)."""
    conditions = (node.get("status") or {}).get("conditions") or []
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
    taints = (node.get("spec") or {}).get("taints") or []
    return ready and not any(t.get("key") in NODE_TAINTS_BY_CONDITION for t in taints)


def wait_nodes_up(client: KubeClient, names: Iterable[str], timeout: float = 60.0) -> list[JSON]:
    """Wait until every node in ``names`` is up (see ``node_is_up``); return them."""
    pending = list(names)
    deadline = time.monotonic() + timeout
    up: list[JSON] = []
    while pending:
        node = client.get(R.NODES, pending[0])
        if node_is_up(node):
            up.append(node)
            pending.pop(0)
            continue
        if time.monotonic() > deadline:
            raise TimeoutError(f"node {pending[0]} not Ready and untainted in {timeout}s: {node}")
        time.sleep(0.05)
    return up


def create_node(client: KubeClient, name: str, *, wait: bool = True, **kwargs: Any) -> JSON:
    """Create a Node (see ``node_body``); a Ready one is waited for until it is up."""
    body = node_body(name, **kwargs)
    node = client.create(R.NODES, body)
    if wait and kwargs.get("ready", True):
        return wait_nodes_up(client, [name])[0]
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
