"""Nodes for the local cluster: bodies kwok plays the kubelet for, and waiting for them.

A Ready node is handed to kwok (``devcluster/kwok.py``), which plays its kubelet: callers wait
for it to turn Ready and for kube-controller-manager to lift the not-ready taint, as in a
cluster, instead of patching taints away. Used by the fleet behind ``make run`` and by the
tests' builders (``tests/builders.py`` re-exports these names).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from devcluster import kwok
from volcano_py.api import JSON
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient

DEFAULT_ALLOCATABLE = {"cpu": "8", "memory": "32Gi", "pods": "110"}


def well_known_labels(name: str) -> dict[str, str]:
    """The labels a kubelet puts on its Node (workloads select on them: ``nodeSelector``)."""
    return {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "beta.kubernetes.io/arch": "amd64",
    }


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
