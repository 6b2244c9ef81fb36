"""A Volcano Job asking for 100,000 pods on 16 nodes: memory follows the pods that exist.

A real control plane (kwok as kubelets), 16 nodes, the scheduler and job-controller in this
process (as bench_vcjob). One Job of one task with ``replicas: 100000`` and ``minAvailable:
1`` is created; its pods may use 8 of the nodes (``nodeSelector``), so most stay Pending
while the controller keeps creating them in bounded slow-start batches. For
``BENCH_HUGE_SECONDS`` the process's RSS is sampled; then a hand-written 2-pod gang, placed
on the other 8 nodes, must bind.

Printed: RSS idle (caches synced, scheduler running, before the Job), the peak growth over
the window, the pods that existed at the end (what the growth should follow, not the
100,000 asked for), the growth per thousand pods, and the probe gang's bind time. The goal
is growth within 100 MB of idle; before the bounded creation the controller built a list of
every missing pod and grew without bound.

Knobs: ``BENCH_HUGE_REPLICAS`` (100000), ``BENCH_HUGE_SECONDS`` (60), ``BENCH_HUGE_NODES``
(16, even).
"""

from __future__ import annotations

import gc
import os
import time
from typing import Any

from bench.bench_vcjob import InProcess, control_plane
from devcluster.nodes import create_node
from tests.builders import pod_body, podgroup_body
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient

JSON = dict[str, Any]
REPLICAS = int(os.environ.get("BENCH_HUGE_REPLICAS", "100000"))
SECONDS = float(os.environ.get("BENCH_HUGE_SECONDS", "60"))
NODES = int(os.environ.get("BENCH_HUGE_NODES", "16"))
GOAL_MB = 100
LABEL = "bench-huge/side"


def rss_mb() -> float:
    """This process's resident memory, in MB."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20


def huge_job(namespace: str) -> JSON:
    """The Job: 100,000 replicas of a small pod, placeable on the 'job' half only."""
    container = {"name": "main", "image": "registry.k8s.io/pause:3.10",
                 "resources": {"requests": {"cpu": "100m"}}}  # fmt: skip
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "huge", "namespace": namespace},
        "spec": {
            "schedulerName": "volcano",
            "minAvailable": 1,
            "tasks": [{"name": "t0", "replicas": REPLICAS, "template": {
                "spec": {"nodeSelector": {LABEL: "job"}, "containers": [container]}}}],
        },
    }  # fmt: skip


def probe_gang(client: KubeClient, namespace: str) -> float:
    """A 2-pod gang on the 'probe' half; seconds until both are bound."""
    client.create(R.PODGROUPS, podgroup_body("probe", namespace, 2))
    started = time.perf_counter()
    for i in range(2):
        body = pod_body(f"probe-{i}", namespace, requests={"cpu": "100m"},
                        annotations={"scheduling.k8s.io/group-name": "probe"})  # fmt: skip
        body["spec"]["nodeSelector"] = {LABEL: "probe"}
        client.create(R.PODS, body)
    while time.perf_counter() - started < 120:
        pods = [client.get(R.PODS, f"probe-{i}", namespace) for i in range(2)]
        if all(p["spec"].get("nodeName") for p in pods):
            return time.perf_counter() - started
        time.sleep(0.05)
    raise SystemExit("probe gang not bound within 120 s")


def main() -> None:
    with control_plane() as client:
        for i in range(NODES):
            side = "job" if i < NODES // 2 else "probe"
            create_node(client, f"huge-{i:02d}", labels={LABEL: side},
                        allocatable={"cpu": "96", "memory": "768Gi", "pods": "110"})  # fmt: skip
        client.create(R.NAMESPACES, {"metadata": {"name": "huge"}})
        manager = InProcess(client)
        manager.sync()
        pods = manager.informers.informer(R.PODS)
        try:
            manager.start(manager.scheduler.run, "scheduler:loop")
            manager.start(manager.controller.run, "controller:job")
            time.sleep(3.0)  # the scheduler's first cycles and the controller's start
            gc.collect()
            idle = rss_mb()
            client.create(R.VCJOBS, huge_job("huge"))
            started, peak = time.perf_counter(), idle
            while time.perf_counter() - started < SECONDS:
                time.sleep(1.0)
                peak = max(peak, rss_mb())
            existing = sum(
                1 for p in pods.store.list() if p["metadata"]["name"].startswith("huge-")
            )
            bound = probe_gang(client, "huge")
            peak = max(peak, rss_mb())
            growth = peak - idle
            print(f"vcjob-huge: {NODES} nodes, one Job asking for {REPLICAS} pods, {SECONDS:.0f}s")
            print(f"   RSS idle {idle:.0f} MB, peak {peak:.0f} MB: growth {growth:.0f} MB "
                  f"(goal <= {GOAL_MB} MB, ratio {growth / GOAL_MB:.2f})")  # fmt: skip
            per_k = growth / max(existing, 1) * 1000
            print(f"   pods existing at the end: {existing} ({per_k:.1f} MB per 1000 pods)")
            print(f"   probe gang bound in {bound:.2f}s")
        finally:
            manager.stop()


if __name__ == "__main__":
    main()
