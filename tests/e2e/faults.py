"""Helpers for the fault suite (``tests/e2e/test_fault_*.py``).

Each fault scenario kills or restarts control-plane components, so it runs against its OWN
control plane (``own_plane``), never the session one the other e2e tests share. The helpers
here build what several scenarios need: the label-discovery ConfigMap the manager's
hyperNode-controller reads, labelled Nodes, direct AdmissionReview posts to a manager's TLS
webhook port (reusing ``bench.bench_webhook``'s keep-alive client), a pod watch that flags a
``nodeName`` changing once set (``PodWatch``), and polling.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml

from bench.bench_webhook import Client, review
from devcluster.harness import ControlPlane
from tests.builders import create_node
from tests.fixtures import install_crds
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import AlreadyExists, ApiError, NotFound

SYSTEM_NS = "volcano-system"
CONTROLLER_CM = "volcano-controller-configmap"
SPINE, RACK = "volcano.sh/tor-spine", "volcano.sh/tor-rack"
SOURCE_LABEL = "volcano.sh/network-topology-source"


@contextlib.contextmanager
def own_plane(*, audit: bool = False) -> Iterator[ControlPlane]:
    """A private control plane with the CRDs and the ``volcano-system`` namespace."""
    with ControlPlane(audit=audit) as cp:
        admin = KubeClient(cp.admin_config())
        install_crds(admin)
        admin.create(R.NAMESPACES, {"metadata": {"name": SYSTEM_NS}})
        admin.close()
        yield cp


def wait_until(predicate: Callable[[], Any], timeout: float = 60.0, what: str = "") -> Any:
    """Poll ``predicate`` (API errors count as "not yet") until truthy; return its value."""
    deadline = time.monotonic() + timeout
    last_error = ""
    while True:
        try:
            value = predicate()
            if value:
                return value
        except (ApiError, OSError) as e:
            last_error = f" (last error: {e})"
        assert time.monotonic() < deadline, f"not met in {timeout}s: {what}{last_error}"
        time.sleep(0.25)


def put_controller_config(client: KubeClient, entries: list[dict[str, Any]]) -> None:
    """Create or replace ``volcano-controller-configmap`` with these discovery entries."""
    conf = yaml.safe_dump({"networkTopologyDiscovery": entries})
    body = {
        "metadata": {"name": CONTROLLER_CM, "namespace": SYSTEM_NS},
        "data": {"volcano-controller.conf": conf},
    }
    try:
        client.create(R.CONFIGMAPS, body, namespace=SYSTEM_NS)
    except AlreadyExists:
        client.patch(R.CONFIGMAPS, CONTROLLER_CM, {"data": body["data"]}, namespace=SYSTEM_NS)


def label_source(interval: str = "1h", max_delete_percent: int = 50) -> dict[str, Any]:
    """A ``label`` discovery entry: spine (tier 2) / rack (tier 1) / node."""
    return {
        "source": "label",
        "enabled": True,
        "interval": interval,
        "maxDeletePercent": max_delete_percent,
        "config": {
            "networkTopologyTypes": {
                "topo": [
                    {"nodeLabel": SPINE},
                    {"nodeLabel": RACK},
                    {"nodeLabel": "kubernetes.io/hostname"},
                ]
            }
        },
    }


def rack_node(client: KubeClient, name: str, spine: str, rack: str, **kwargs: Any) -> None:
    """A Node labelled into ``spine``/``rack`` (and with its hostname label)."""
    labels = {SPINE: spine, RACK: rack, "kubernetes.io/hostname": name}
    create_node(client, name, labels=labels, **kwargs)


def discovered(client: KubeClient, key: str, value: str) -> list[dict[str, Any]]:
    """Label-sourced HyperNodes carrying ``key=value``."""
    return client.list_all(R.HYPERNODES, label_selector=f"{key}={value},{SOURCE_LABEL}=label")


def node_count(hypernode: dict[str, Any]) -> int | None:
    """``status.nodeCount`` (None when not written yet)."""
    value = (hypernode.get("status") or {}).get("nodeCount")
    return None if value is None else int(value)


def delete_quietly(client: KubeClient, resource: R.Resource, name: str, ns: str = "") -> None:
    """Delete, ignoring NotFound."""
    with contextlib.suppress(NotFound):
        client.delete(resource, name, ns or None)


class Reviewer:
    """Posts AdmissionReviews straight to a manager's webhook port over TLS (keep-alive)."""

    def __init__(self, port: int, ca_file: Path) -> None:
        self.client = Client(port, ca_file)

    def admit(self, obj: Any, uid: str | None = None) -> tuple[int, dict[str, Any], str]:
        """(HTTP status, the review's ``response`` (or {}), the uid sent)."""
        uid = uid or str(uuid.uuid4())
        status, data = self.client.post(json.dumps(review(obj, uid)).encode())
        response: dict[str, Any] = {}
        if status == 200:
            response = json.loads(data).get("response") or {}
        return status, response, uid

    def raw(self, body: bytes, content_type: str = "application/json") -> tuple[int, bytes]:
        """Send any bytes."""
        return self.client.post(body, content_type)


class PodWatch:
    """Watches a namespace's pods; flags a pod whose ``nodeName`` changes once set.

    The API server refuses a second binding, so a change here would mean a pod was deleted
    and re-made under the same uid, or a write path other than the binding subresource.
    Survives API server restarts (re-lists on any error) and counts the bound pods it saw.
    """

    def __init__(self, plane: ControlPlane, namespace: str) -> None:
        self.plane = plane
        self.namespace = namespace
        self.node_of: dict[str, str] = {}
        self.changed: list[str] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="pod-watch", daemon=True)
        self.thread.start()

    def _see(self, obj: dict[str, Any]) -> None:
        uid, node = obj["metadata"]["uid"], obj["spec"].get("nodeName") or ""
        before = self.node_of.get(uid, "")
        if before and node != before:
            self.changed.append(f"{obj['metadata']['name']}: {before} -> {node!r}")
        if node:
            self.node_of[uid] = node

    def _run(self) -> None:
        client = KubeClient(self.plane.admin_config())
        while not self.stop.is_set():
            try:
                listed = client.list(R.PODS, self.namespace)
                for pod in listed["items"]:
                    self._see(pod)
                rv = listed["metadata"]["resourceVersion"]
                while not self.stop.is_set():
                    for kind, obj in client.watch(
                        R.PODS, self.namespace, resource_version=rv, timeout_seconds=5
                    ):
                        rv = obj["metadata"]["resourceVersion"]
                        if kind in ("ADDED", "MODIFIED", "DELETED"):
                            self._see(obj)
            except Exception:
                time.sleep(0.5)


def lease_holder(client: KubeClient) -> str:
    """The holder of the manager's leader Lease ("" when released)."""
    lease = client.get(R.LEASES, "volcano-py", SYSTEM_NS)
    return str(lease["spec"].get("holderIdentity") or "")
