"""Label discovery of 10,000 single-node racks on a real control plane, webhook on (issue 44).

A private control plane (etcd + kube-apiserver), ``RACKS`` Nodes each labelled with its own
rack (``bench/rack``) under one zone (``bench/zone``), the discovery ConfigMap for those
labels, one ``volcano-py manager`` and its webhook configurations registered (every
HyperNode create is reviewed by the manager's webhook, over TLS, as in a cluster). Measured:
from the manager's start to every HyperNode (``RACKS`` racks and the zone) being listed.
Goal: < 60 s for 10,000. Anchor from the same run: the bench itself creating the
``RACKS`` Nodes with ``CREATORS`` concurrent clients and no webhook (the API server's pace
on this machine), and the ratio.

``python -m bench label_discovery`` (``BENCH_RACKS`` to change the size).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from bench.bench_process import CREATORS, parallel, plane
from devcluster.manager import install_webhook, manager_certs, start_manager, stop_manager
from devcluster.nodes import node_body
from volcano_py.api import resources as R
from volcano_py.api.constants import NETWORK_TOPOLOGY_SOURCE_LABEL
from volcano_py.kube.client import KubeClient

RACKS = int(os.environ.get("BENCH_RACKS", "10000"))
GOAL_S = 60.0
CONFIG = """
networkTopologyDiscovery:
  - source: label
    enabled: true
    config:
      networkTopologyTypes:
        bench:
          - nodeLabel: bench/zone
          - nodeLabel: bench/rack
          - nodeLabel: kubernetes.io/hostname
"""


def rack_node(i: int) -> dict:
    name = f"rack-node-{i:05d}"
    body = node_body(name, labels={"bench/zone": "z", "bench/rack": f"r{i:05d}"})
    body["metadata"].pop("annotations", None)
    return body


def discovered(client: KubeClient) -> int:
    selector = f"{NETWORK_TOPOLOGY_SOURCE_LABEL}=label"
    return len(client.list(R.HYPERNODES, label_selector=selector)["items"])


def main() -> int:
    cp = plane()
    try:
        admin = KubeClient(cp.admin_config(), qps=0, burst=0)
        nodes_s = parallel(list(range(RACKS)), lambda i: admin.create(R.NODES, rack_node(i)))
        print(f"{RACKS} Nodes created by {CREATORS} clients, no webhook: {nodes_s:6.1f} s")
        admin.create(
            R.CONFIGMAPS,
            {
                "metadata": {"name": "volcano-controller-configmap"},
                "data": {"volcano-controller.conf": CONFIG},
            },
            namespace="volcano-system",
        )
        work = Path(tempfile.mkdtemp(prefix="bench-label-discovery-"))
        started = time.monotonic()
        manager = start_manager(cp, work)
        install_webhook(admin, manager_certs(work), manager.webhook_port, "bench-webhooks")
        want = RACKS + 1
        seen = 0
        while seen < want:
            time.sleep(1.0)
            seen = discovered(admin)
            elapsed = time.monotonic() - started
            print(f"  t={elapsed:6.1f}s {seen:6d} of {want} HyperNodes", flush=True)
            if elapsed > 20 * GOAL_S:
                break
        took = time.monotonic() - started
        stop_manager(manager)
    finally:
        cp.stop()
    verdict = "met" if seen >= want and took < GOAL_S else "NOT met"
    print(
        f"{want} HyperNodes from label discovery, webhook on: {took:6.1f} s "
        f"({seen / took:6.0f}/s); Nodes alone: {nodes_s:6.1f} s; ratio {took / nodes_s:4.2f}x; "
        f"goal < {GOAL_S:.0f} s: {verdict}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
