"""Label discovery of 10,000 single-node racks on a real control plane, webhook on (issue 44).

A private control plane (etcd + kube-apiserver), ``RACKS`` Nodes each labelled with its own
rack (``bench/rack``) under one zone (``bench/zone``), the discovery ConfigMap for those
labels, one ``volcano-py manager`` and its webhook configurations registered (every
HyperNode create is reviewed by the manager's webhook, over TLS, as in a cluster). Measured:
from the discovery ConfigMap's creation (the manager already running, webhook registered) to
every HyperNode (``RACKS`` racks and the zone) being listed. Goal: < 60 s for 10,000.

The anchor, from the same run and the same manager: the floor. Before the ConfigMap exists,
the bench itself creates the same ``RACKS + 1`` HyperNode bodies the discoverer would create
(``discover_label_hypernodes`` + ``desired_body`` on the same Nodes), zone last, with
``FLOOR_WRITERS`` plain clients (no rate limit), every create reviewed by the same webhook;
then deletes them all and waits until none is listed. Printed: discovery, floor, their ratio,
and the load average (the machine is shared; the ratio is the figure to compare). For each of
the two phases also the manager worker's CPU seconds and its embedded scheduler's cycles
(count and summed duration, from ``volcano_e2e_scheduling_latency_milliseconds``): with no job
in the cluster, cycles should cost next to nothing whatever the HyperNodes do (issue 44: idle
cycles rebuilding the tree on every HyperNode event were over half the manager's CPU).

``python -m bench label_discovery`` (``BENCH_RACKS`` to change the size).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

import yaml

from bench.bench_process import CREATORS, cpu_seconds, parallel, plane
from devcluster.manager import (
    ManagerProcess,
    install_webhook,
    manager_certs,
    start_manager,
    stop_manager,
)
from devcluster.nodes import node_body
from volcano_py.api import JSON
from volcano_py.api import resources as R
from volcano_py.api.constants import NETWORK_TOPOLOGY_SOURCE_LABEL
from volcano_py.controllers.hypernode.bodies import desired_body
from volcano_py.controllers.hypernode.label import discover_label_hypernodes, parse_types
from volcano_py.controllers.hypernode.parallel import WRITE_WORKERS
from volcano_py.kube.client import KubeClient

RACKS = int(os.environ.get("BENCH_RACKS", "10000"))
FLOOR_WRITERS = int(os.environ.get("BENCH_FLOOR_WRITERS", str(WRITE_WORKERS)))
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


CYCLES = "volcano_e2e_scheduling_latency_milliseconds"


class Usage:
    """The manager worker's CPU seconds and the scheduler's cycles since ``Usage(manager)``."""

    def __init__(self, manager: ManagerProcess) -> None:
        self.manager = manager
        self.started = self._now()

    def _now(self) -> tuple[float, float, float, float]:
        cpu = sum(cpu_seconds(pid) for pid in self.manager.worker_pids())
        count = total_ms = 0.0
        for line in self.manager.get("/metrics")[1].splitlines():
            if line.startswith(f"{CYCLES}_count"):
                count = float(line.split()[-1])
            elif line.startswith(f"{CYCLES}_sum"):
                total_ms = float(line.split()[-1])
        return time.monotonic(), cpu, count, total_ms

    def line(self, phase: str) -> str:
        """One printed line: CPU seconds, share of one core, cycles and their summed wall time
        (a cycle's wall time includes its waits for the GIL while the webhook serves)."""
        (t0, cpu0, n0, ms0), (t1, cpu1, n1, ms1) = self.started, self._now()
        cpu, cycles_s = cpu1 - cpu0, (ms1 - ms0) / 1000
        return (
            f"{phase}: manager worker {cpu:6.1f} CPU s over {t1 - t0:6.1f} s "
            f"({cpu / max(t1 - t0, 1e-9):4.2f} cores); scheduler {n1 - n0:5.0f} cycles, "
            f"{cycles_s:6.1f} s wall in cycles ({1000 * cycles_s / max(n1 - n0, 1):5.0f} ms each)"
        )


def floor_bodies() -> list[JSON]:
    """The bodies label discovery makes of the bench's Nodes, racks first (children first)."""
    entry = yaml.safe_load(CONFIG)["networkTopologyDiscovery"][0]
    types, _ = parse_types(entry["config"])
    nodes = [rack_node(i) for i in range(RACKS)]
    found = discover_label_hypernodes(nodes, [], types)
    bodies = [desired_body(h, "label") for h in found]
    return sorted(bodies, key=lambda b: int(b["spec"].get("tier", 0)))


def floor(admin: KubeClient) -> float:
    """Seconds for plain clients to create the discoverer's bodies through the webhook."""
    bodies = floor_bodies()
    clients = [KubeClient(admin.config, qps=0, burst=0) for _ in range(FLOOR_WRITERS)]
    by_tier: dict[int, list[JSON]] = {}
    for body in bodies:
        by_tier.setdefault(int(body["spec"].get("tier", 0)), []).append(body)
    started = time.monotonic()
    for tier in sorted(by_tier):
        batch = list(enumerate(by_tier[tier]))
        parallel(
            batch,
            lambda ib: clients[ib[0] % len(clients)].create(R.HYPERNODES, ib[1]),
            workers=FLOOR_WRITERS,
        )
    took = time.monotonic() - started
    print(
        f"floor: {len(bodies)} HyperNodes by {FLOOR_WRITERS} plain clients, webhook on: "
        f"{took:6.1f} s; deleting them",
        flush=True,
    )
    names = [(i, b["metadata"]["name"]) for i, b in enumerate(bodies)]
    parallel(names, lambda n: clients[n[0] % len(clients)].delete(R.HYPERNODES, n[1]))
    while admin.list(R.HYPERNODES)["items"]:
        time.sleep(1.0)
    time.sleep(3.0)  # the manager's informer sees the deletes before discovery starts
    return took


def main() -> int:
    cp = plane()
    try:
        admin = KubeClient(cp.admin_config(), qps=0, burst=0)
        nodes_s = parallel(list(range(RACKS)), lambda i: admin.create(R.NODES, rack_node(i)))
        print(f"{RACKS} Nodes created by {CREATORS} clients, no webhook: {nodes_s:6.1f} s")
        work = Path(tempfile.mkdtemp(prefix="bench-label-discovery-"))
        manager = start_manager(cp, work)
        install_webhook(admin, manager_certs(work), manager.webhook_port, "bench-webhooks")
        want = RACKS + 1
        usage = Usage(manager)
        floor_s = floor(admin)
        floor_usage = usage.line("floor")
        print(floor_usage, flush=True)
        usage = Usage(manager)
        started = time.monotonic()
        admin.create(
            R.CONFIGMAPS,
            {
                "metadata": {"name": "volcano-controller-configmap"},
                "data": {"volcano-controller.conf": CONFIG},
            },
            namespace="volcano-system",
        )
        seen = 0
        while seen < want:
            time.sleep(1.0)
            seen = discovered(admin)
            elapsed = time.monotonic() - started
            print(f"  t={elapsed:6.1f}s {seen:6d} of {want} HyperNodes", flush=True)
            if elapsed > 20 * GOAL_S:
                break
        took = time.monotonic() - started
        discovery_usage = usage.line("discovery")
        stop_manager(manager)
    finally:
        cp.stop()
    verdict = "met" if seen >= want and took < GOAL_S else "NOT met"
    print(
        f"{want} HyperNodes from label discovery, webhook on: {took:6.1f} s "
        f"({seen / took:6.0f}/s); floor (same bodies, plain clients, webhook on): "
        f"{floor_s:6.1f} s; ratio {took / floor_s:4.2f}x; Nodes alone: {nodes_s:6.1f} s; "
        f"load average {os.getloadavg()[0]:.1f}; goal < {GOAL_S:.0f} s: {verdict}\n"
        f"{floor_usage}\n{discovery_usage}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
