"""The objects an operator writes, built the way each operator module needs them.

Each operator module (``kuberay.py``, ``training_operator.py``, ...) reads like the operator's
own code: it creates the PodGroup and the pods in the operator's order, with the operator's
names, labels, annotations, ownerReferences and ``minMember``/``minResources`` rules. Owner
objects of the operators' own kinds (RayCluster, PyTorchJob, ...) are not created: their CRDs
are not installed, and the garbage collector leaves dependents of an unknown kind alone. An
owner of a built-in kind (a StatefulSet, a batch Job) would be collected as missing, so pods
that such a controller owns are written without that reference (the scheduler never reads a
pod's owners).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tests.integration.scheduler.conftest import Topology
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient

JSON = dict[str, Any]
GROUP_NAME = "scheduling.k8s.io/group-name"
TASK_SPEC = "volcano.sh/task-spec"


@dataclass(frozen=True)
class Played:
    """What an operator did: its PodGroup's name, its pods, whether it asked for tier 1."""

    podgroup: str
    pods: list[str]
    tier1: bool


def owner(api_version: str, kind: str, name: str, uid: str | None = None) -> JSON:
    """A controller ownerReference, as ``metav1.NewControllerRef`` writes it."""
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": name,
        "uid": uid or str(uuid.uuid4()),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def podgroup(
    name: str,
    ns: str,
    spec: JSON,
    *,
    owners: list[JSON] | None = None,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    phase: str | None = None,
) -> JSON:
    """A ``scheduling.volcano.sh/v1beta1`` PodGroup as the operator creates it."""
    meta: JSON = {"name": name, "namespace": ns}
    if owners:
        meta["ownerReferences"] = owners
    if labels:
        meta["labels"] = dict(labels)
    if annotations:
        meta["annotations"] = dict(annotations)
    body: JSON = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": meta,
        "spec": spec,
    }
    if phase:
        body["status"] = {"phase": phase}
    return body


def pod(
    name: str,
    ns: str,
    topo: Topology,
    *,
    annotations: Mapping[str, str],
    labels: Mapping[str, str] | None = None,
    owners: list[JSON] | None = None,
    gpus: int = 1,
) -> JSON:
    """A pod asking for ``gpus`` of the topology's GPUs, scheduled by ``volcano``."""
    meta: JSON = {"name": name, "namespace": ns, "annotations": dict(annotations)}
    if labels:
        meta["labels"] = dict(labels)
    if owners:
        meta["ownerReferences"] = owners
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {
            "schedulerName": "volcano",
            "containers": [
                {
                    "name": "main",
                    "image": "registry.k8s.io/pause:3.9",
                    "resources": {
                        "requests": {topo.gpu: str(gpus), "cpu": "100m"},
                        "limits": {topo.gpu: str(gpus)},
                    },
                }
            ],
        },
    }


def create(client: KubeClient, body: JSON) -> JSON:
    """Create a PodGroup or a Pod."""
    resource = R.PODGROUPS if body["kind"] == "PodGroup" else R.PODS
    return client.create(resource, body)


def phase(client: KubeClient, ns: str, name: str) -> str:
    """The PodGroup's phase ("" before the scheduler wrote one)."""
    return str((client.get(R.PODGROUPS, name, ns).get("status") or {}).get("phase") or "")


def node_of(client: KubeClient, ns: str, name: str) -> str:
    """The node a pod is bound to, or ""."""
    return str(client.get(R.PODS, name, ns)["spec"].get("nodeName") or "")


def waits(client: KubeClient, ns: str, name: str) -> str:
    """The pod's ``PodScheduled=False`` message: the scheduler tried and said why, or ""."""
    pod = client.get(R.PODS, name, ns)
    for cond in (pod.get("status") or {}).get("conditions") or ():
        if cond.get("type") == "PodScheduled" and cond.get("status") == "False":
            return str(cond.get("message", ""))
    return ""
