"""The nodes ``make run`` gives its local cluster, and the workload ``make demo`` runs on them.

The default fleet is 8 GPU nodes (32 CPU, 256Gi, 8 ``nvidia.com/gpu`` each) in 2 spines x 2
racks, labelled the way the label-discovery ConfigMap ``make run`` installs
(``manifests/base/controller-configmap.yaml``) reads them: ``volcano.sh/tor-spine`` (tier 2),
``volcano.sh/tor-rack`` (tier 1), and the well-known labels a kubelet sets
(``kubernetes.io/hostname``, ``kubernetes.io/os``, ``kubernetes.io/arch`` and their ``beta.``
forms), with
``ephemeral-storage`` beside cpu, memory and pods. The manager's hyperNode-controller
turns those labels into HyperNodes; kwok (``kwok.py``) is their kubelet. ``--nodes N`` spreads
N nodes over the same four racks; 0 leaves the cluster empty.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import yaml

from devcluster.nodes import node_body, wait_nodes_up, well_known_labels
from volcano_py.api import JSON
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient

ROOT = Path(__file__).resolve().parents[1]
SPINES, RACKS_PER_SPINE = 2, 2
SPINE_LABEL, RACK_LABEL = "volcano.sh/tor-spine", "volcano.sh/tor-rack"
GPU_NODE = {
    "cpu": "32",
    "memory": "256Gi",
    "pods": "110",
    "ephemeral-storage": "500Gi",
    "nvidia.com/gpu": "8",
}
DEMO_WORKLOAD = ROOT / "examples" / "workloads" / "deployment-gang.yaml"


def fleet(count: int) -> list[JSON]:
    """``count`` GPU node bodies, filled rack by rack over 2 spines x 2 racks."""
    racks = SPINES * RACKS_PER_SPINE
    per_rack = max(1, math.ceil(count / racks))
    nodes = []
    for i in range(count):
        rack = i // per_rack
        spine = rack // RACKS_PER_SPINE
        name = f"gpu-s{spine}-r{rack}-n{i}"
        labels = {
            **well_known_labels(name),
            SPINE_LABEL: f"spine-{spine}",
            RACK_LABEL: f"rack-{rack}",
        }
        nodes.append(node_body(name, labels, GPU_NODE))
    return nodes


def create_fleet(client: KubeClient, count: int, timeout: float = 60.0) -> list[str]:
    """Create the fleet and wait until every node is Ready and untainted; their names."""
    bodies = fleet(count)
    for body in bodies:
        client.create(R.NODES, body)
    names = [b["metadata"]["name"] for b in bodies]
    wait_nodes_up(client, names, timeout)
    if names:
        wait_topology(client, set(names), timeout)
    return names


def wait_topology(client: KubeClient, names: set[str], timeout: float) -> None:
    """Wait until label discovery's rack HyperNodes hold every node of the fleet.

    A gang applied before that would see a partial tree (a rack still empty) and could be
    placed across racks; ``make run`` says it is up only once the topology is whole.
    """
    deadline = time.monotonic() + timeout
    while True:
        held: set[str] = set()
        for hn in client.list_all(R.HYPERNODES):
            spec = hn.get("spec") or {}
            if spec.get("tier") == 1:
                for member in spec.get("members") or ():
                    exact = ((member.get("selector") or {}).get("exactMatch") or {}).get("name")
                    if exact:
                        held.add(exact)
        if names <= held:
            return
        if time.monotonic() > deadline:
            missing = ", ".join(sorted(names - held))
            raise TimeoutError(f"label discovery left nodes out of the racks: {missing}")
        time.sleep(0.2)


def apply_demo_workload(client: KubeClient, namespace: str = "default") -> tuple[str, int]:
    """Create ``examples/workloads/deployment-gang.yaml`` (as ``kubectl apply`` would)."""
    body = yaml.safe_load(DEMO_WORKLOAD.read_text())
    body["metadata"]["namespace"] = namespace
    client.create(R.DEPLOYMENTS, body, namespace=namespace)
    return body["metadata"]["name"], int(body["spec"]["replicas"])


def wait_running(
    client: KubeClient, namespace: str, app: str, count: int, timeout: float = 120.0
) -> list[JSON]:
    """Wait until ``count`` pods labelled ``app=<app>`` run; return them (bound or not)."""
    deadline = time.monotonic() + timeout
    while True:
        pods = client.list_all(R.PODS, namespace, label_selector=f"app={app}")
        running = [p for p in pods if (p.get("status") or {}).get("phase") == "Running"]
        if len(running) >= count or time.monotonic() > deadline:
            return pods
        time.sleep(0.5)
