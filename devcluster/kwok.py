"""kwok, the kubelets of the local control plane (tests, ``make run``, ``bench/``).

`kwok <https://kwok.sigs.k8s.io>`_ (``sigs.k8s.io/kwok/cmd/kwok``, built and cached by
``provision.py``) plays the kubelet for every Node that carries the annotation
``kwok.x-k8s.io/node: fake`` (kwok's ``--manage-nodes-with-annotation-selector``; the same
annotation kwok's own tutorials use, so their node manifests work here unchanged). For those
nodes it

- renews a Lease in ``kube-node-lease`` (``--node-lease-duration-seconds``), so
  kube-controller-manager's node-lifecycle controller sees a healthy kubelet, lifts the
  ``node.kubernetes.io/not-ready`` taint the API server puts on new nodes, and taints a node
  ``unreachable`` if kwok stops;
- turns the node Ready and heartbeats its conditions;
- turns pods bound to it Running (Ready, containers running, a pod IP), and completes their
  graceful deletion (the pod is removed once its ``deletionTimestamp`` is set).

The lifecycle is ours, in ``kwok-stages.yaml`` (a bare kwok has no stages). Nodes without the
annotation have no kubelet: they keep whatever status they were given and, with the
node-lifecycle controller running, are tainted not-ready/unreachable like a dead node.
Nothing in ``volcano_py/`` or ``webhooks/`` knows about kwok: the product sees ordinary nodes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

ANNOTATION = "kwok.x-k8s.io/node"
VALUE = "fake"
SELECTOR = f"{ANNOTATION}={VALUE}"
STAGES = Path(__file__).with_name("kwok-stages.yaml")
NODE_LEASE_SECONDS = 40
POD_CIDR = "10.64.0.0/12"
NODE_IP = "10.200.0.1"


def argv(binary: Path, kubeconfig: Path) -> list[str]:
    """The kwok command line the harness runs."""
    return [
        str(binary),
        f"--kubeconfig={kubeconfig}",
        f"--config={STAGES}",
        f"--manage-nodes-with-annotation-selector={SELECTOR}",
        f"--node-lease-duration-seconds={NODE_LEASE_SECONDS}",
        f"--cidr={POD_CIDR}",
        f"--node-ip={NODE_IP}",
        "--v=WARN",  # not a line per pod and node update (kwok.log keeps warnings and errors)
    ]


def managed(node: dict[str, Any]) -> dict[str, Any]:
    """``node`` (a Node body) with the annotation that hands it to kwok; returned for chaining."""
    metadata = node.setdefault("metadata", {})
    annotations = metadata.get("annotations") or {}
    metadata["annotations"] = {**annotations, ANNOTATION: VALUE}
    return node
