"""The whole ``volcano-py manager`` process (issue 7, P5): memory and webhook latency.

Two parts, each against a private control plane (etcd + kube-apiserver, no
kube-controller-manager: nothing garbage-collects the benchmark's objects):

1. **rss** - resident memory of the manager's gunicorn worker (``VmRSS`` in
   ``/proc/<pid>/status``; the master's is printed too) with 10,000 Nodes and 50,000 Pods
   cached (created through the API server with concurrent requests; the Pods are bound,
   Deployment-shaped, ``bench.objects``) and 10,000 HyperNodes (racks of ``exactMatch``
   nodes, as label discovery makes them; ``BENCH_HYPERNODES``). Goal: <= 600 MB. Baseline,
   same run: the same process against the empty cluster. Printed beside it: what the
   sizing rule of docs/operations.md gives for the same counts, and the shipped
   Deployment's memory limit.
2. **webhook** - HyperNode admission p99 over TLS at 300 requests/s (8 keep-alive
   connections, open loop, ``bench.bench_webhook``'s load generator) while the scheduler
   places 2,000 pods (created during the window by a separate process, so that its threads
   do not share the load generator's GIL; each pod is its own gang via pg-controller), next
   to a bare Flask endpoint under the same gunicorn settings (``bench_webhook --serve-bare``)
   in the same run. Goal: p99 <= 3x the bare endpoint's. The bare endpoint is measured twice:
   on the quiet machine, and under the same background as the manager's window (the
   manager placing another 2,000 pods while the bare endpoint takes the load), because on
   this 2-core machine the API server, etcd, the pod creator and the load generator share
   the cores with the server under test; both ratios are printed, the goal is checked against
   the second. The manager worker's CPU seconds per window and each server's CPU per
   admission are printed too.

``python -m bench process`` runs both; ``python -m bench.bench_process rss|webhook`` one.
``BENCH_SECONDS`` (default 20) sets the quiet windows and ``BENCH_BUSY_SECONDS`` (default
50) the busy ones; ``BENCH_PODS`` / ``BENCH_NODES`` / ``BENCH_SCHED_PODS`` scale the parts
down for a quick look; ``BENCH_SWITCH_INTERVAL=0.0005`` runs both servers with that
``sys.setswitchinterval`` (the manager itself always runs with 0.1 ms,
``volcano_py.kube.runtime.tune_switch_interval``); ``BENCH_SERVER_NICE=-5`` renices both
servers (every thread) to model a CPU request on a shared node; ``BENCH_DUMP=<prefix>`` writes
each window's latencies, in completion order, to ``<prefix>.<port>.<seconds>``;
``BENCH_MANAGER_ARGS`` adds manager flags (e.g. ``--bind-workers=4``).
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench.bench_webhook import RATE, hypernode, open_loop, review, start_bare, stop
from bench.objects import node, pod
from devcluster.crds import install_crds
from devcluster.harness import ControlPlane, free_port
from devcluster.manager import (
    ManagerProcess,
    deployment_memory_limit,
    start_manager,
    stop_manager,
)
from tests.builders import create_bare_node
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.kube.config import load_config
from volcano_py.kube.errors import AlreadyExists

NODES = int(os.environ.get("BENCH_NODES", "10000"))
PODS = int(os.environ.get("BENCH_PODS", "50000"))
HYPERNODES = int(os.environ.get("BENCH_HYPERNODES", "10000"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "20"))
# long enough for the 2,000 placements to happen inside the window on a 2-core machine
BUSY_SECONDS = float(os.environ.get("BENCH_BUSY_SECONDS", "50"))
# e.g. 0.0005: run both servers with a shorter GIL switch interval (default: Python's 5 ms)
SWITCH_INTERVAL = os.environ.get("BENCH_SWITCH_INTERVAL", "")
SERVER_NICE = os.environ.get("BENCH_SERVER_NICE", "")
# e.g. "--bind-workers=4 --worker-threads-for-podgroup=2"
MANAGER_ARGS = os.environ.get("BENCH_MANAGER_ARGS", "").split()
SCHEDULED_PODS = int(os.environ.get("BENCH_SCHED_PODS", "2000"))
RSS_GOAL_MB = 600.0
CREATORS = 24


def plane() -> ControlPlane:
    cp = ControlPlane(controller_manager=False, kwok=False).start()
    admin = KubeClient(cp.admin_config())
    install_crds(admin)
    for ns in ("volcano-system", "bench"):
        admin.create(R.NAMESPACES, {"metadata": {"name": ns}})
    return cp


def vm_rss_mb(pid: int, field: str = "VmRSS") -> float:
    """``field`` (VmRSS: resident now, VmHWM: peak) of ``pid`` in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} for {pid}")


def children(pid: int) -> list[int]:
    """The child processes of ``pid`` (a gunicorn master's: its worker)."""
    return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def worker_pid(process: ManagerProcess) -> int:
    return children(process.proc.pid)[0]


def parallel(items: list[Any], fn: Any, workers: int = CREATORS) -> float:
    """Run ``fn`` over ``items`` on a pool; returns the seconds it took."""
    started = time.monotonic()
    with ThreadPoolExecutor(workers) as pool:
        for _ in pool.map(fn, items):
            pass
    return time.monotonic() - started


def api_node(i: int) -> dict[str, Any]:
    body = node(i)
    meta = body["metadata"]
    for key in ("uid", "resourceVersion", "creationTimestamp", "managedFields"):
        meta.pop(key, None)
    return body


def api_pod(i: int) -> dict[str, Any]:
    body = pod(i, node=f"node-{i % NODES:05d}")
    meta = body["metadata"]
    for key in ("uid", "resourceVersion", "creationTimestamp", "managedFields", "generateName"):
        meta.pop(key, None)
    meta.pop("ownerReferences", None)
    body["spec"]["schedulerName"] = "default-scheduler"  # bound already; cached, not gangs
    body.pop("status", None)
    return body


def fill(client: KubeClient) -> None:
    def make_node(i: int) -> None:
        body = api_node(i)
        status = copy.deepcopy(body.get("status") or {})
        try:
            client.create(R.NODES, body)
        except AlreadyExists:
            return
        client.patch(R.NODES, body["metadata"]["name"], {"status": status}, subresource="status")

    def make_pod(i: int) -> None:
        with contextlib.suppress(AlreadyExists):
            client.create(R.PODS, api_pod(i), namespace="bench")

    took = parallel(list(range(NODES)), make_node)
    print(f"   {NODES} nodes created in {took:.0f} s", flush=True)
    took = parallel(list(range(PODS)), make_pod)
    print(f"   {PODS} pods created in {took:.0f} s ({PODS / took:.0f}/s)", flush=True)

    def make_rack(i: int) -> None:
        with contextlib.suppress(AlreadyExists):
            client.create(R.HYPERNODES, api_rack(i))

    took = parallel(list(range(HYPERNODES)), make_rack)
    print(f"   {HYPERNODES} HyperNodes created in {took:.0f} s (no webhook)", flush=True)


def api_rack(i: int) -> dict[str, Any]:
    """Rack ``i``: tier 1 over its share of the nodes by ``exactMatch`` (at least one)."""
    per = max(1, NODES // max(HYPERNODES, 1))
    names = [f"node-{(i * per + k) % NODES:05d}" for k in range(per)]
    members = [{"type": "Node", "selector": {"exactMatch": {"name": n}}} for n in names]
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": f"rack-{i:05d}"},
        "spec": {"tier": 1, "members": members},
    }


def sizing_rule_mb(nodes: int, pods: int, hypernodes: int) -> float:
    """docs/operations.md's rule: 70 MB + 4.5 KB a node + 4.2 KB a pod + 14 KB a HyperNode."""
    return 70 + (4.5 * nodes + 4.2 * pods + 14 * hypernodes) / 1000


def settled_rss_mb(pid: int, limit_s: float = 180.0) -> float:
    """The worker's RSS once two reads 10 s apart differ by under 1% (the controllers'
    first rounds, nodeCount for every HyperNode, are done), or after ``limit_s``."""
    deadline = time.monotonic() + limit_s
    last = vm_rss_mb(pid)
    while time.monotonic() < deadline:
        time.sleep(10)
        now = vm_rss_mb(pid)
        if abs(now - last) < 0.01 * last:
            return now
        last = now
    return last


def measure_rss(cp: ControlPlane, work: Path, label: str) -> float:
    manager = start_manager(cp, work, "--v=1")
    try:
        pid = worker_pid(manager)
        worker = settled_rss_mb(pid)
        peak = vm_rss_mb(pid, "VmHWM")
        master = vm_rss_mb(manager.proc.pid)
        print(
            f"   {label}: worker VmRSS {worker:.0f} MB (peak {peak:.0f} MB), "
            f"gunicorn master {master:.0f} MB"
        )
        return worker
    finally:
        stop_manager(manager)


def rss() -> int:
    print(
        f"-- manager RSS with {NODES} nodes, {PODS} pods and {HYPERNODES} HyperNodes cached",
        flush=True,
    )
    cp = plane()
    try:
        with tempfile.TemporaryDirectory() as folder:
            empty = measure_rss(cp, Path(folder) / "empty", "empty cluster (baseline)")
            fill(KubeClient(cp.admin_config(), qps=0, burst=0))
            label = f"{NODES} nodes + {PODS} pods + {HYPERNODES} HyperNodes"
            full = measure_rss(cp, Path(folder) / "full", label)
    finally:
        cp.stop()
    ok = full <= RSS_GOAL_MB
    rule = sizing_rule_mb(NODES, PODS, HYPERNODES)
    limit_mb = deployment_memory_limit() / 1e6
    print(
        f"worker RSS {full:.0f} MB = {full / max(empty, 1e-9):.1f}x the empty-cluster baseline "
        f"({empty:.0f} MB); +{full - empty:.0f} MB for the caches "
        f"(goal <= {RSS_GOAL_MB:.0f} MB: {'OK' if ok else 'MISSED'}); the sizing rule gives "
        f"{rule:.0f} MB (measured/rule {full / rule:.2f}); the Deployment's limit "
        f"{limit_mb:.0f} MB: {'fits' if full < limit_mb else 'DOES NOT FIT'}"
    )
    return 0 if ok else 1


def bound(client: KubeClient, namespace: str) -> int:
    pods = client.list_all(R.PODS, namespace)
    return sum(1 for p in pods if p["spec"].get("nodeName"))


def gang_pod(name: str, namespace: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "schedulerName": "volcano",
            "containers": [
                {
                    "name": "main",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
                }
            ],
        },
    }


def create_pods(kubeconfig: str, namespace: str, count: int) -> int:
    """``create-pods``: the busy window's pod creator, in a process of its own.

    Run inside the load generator's process its 8 threads would compete with the generator's
    for one GIL and inflate every latency it measures.
    """
    client = KubeClient(load_config(kubeconfig), qps=0, burst=0)
    parallel(
        list(range(count)),
        lambda i: client.create(R.PODS, gang_pod(f"p{i:05d}", namespace), namespace=namespace),
        8,
    )
    return 0


def renice(pid: int, value: int) -> None:
    """Set the nice value of every thread of ``pid`` and of its child processes."""
    for process in (pid, *children(pid)):
        for task in Path(f"/proc/{process}/task").iterdir():
            os.setpriority(os.PRIO_PROCESS, int(task.name), value)


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds ``pid`` has used (``/proc/<pid>/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def busy_window(
    cp: ControlPlane,
    admin: KubeClient,
    namespace: str,
    port: int,
    ca: Path,
    payload: bytes,
    worker: int,
) -> tuple[dict[str, float], int, float]:
    """Measure ``port`` while the manager schedules ``SCHEDULED_PODS`` new pods.

    Returns the load generator's figures (plus the manager worker's CPU seconds in the
    window), the pods bound within the window and the seconds until all were bound.
    """
    admin.create(R.NAMESPACES, {"metadata": {"name": namespace}})
    started = time.monotonic()
    cpu_before = cpu_seconds(worker)
    creator = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bench.bench_process",
            "create-pods",
            str(cp.kubeconfig),
            namespace,
            str(SCHEDULED_PODS),
        ]
    )
    result = open_loop(port, ca, payload, BUSY_SECONDS)
    result["manager_cpu"] = cpu_seconds(worker) - cpu_before
    in_window = bound(admin, namespace)
    creator.wait()
    while bound(admin, namespace) < SCHEDULED_PODS and time.monotonic() - started < 300:
        time.sleep(1)
    return result, in_window, time.monotonic() - started


def webhook() -> int:
    print(
        f"-- webhook p99 at {RATE} req/s over TLS while the scheduler places "
        f"{SCHEDULED_PODS} pods ({SECONDS:.0f} s idle windows, {BUSY_SECONDS:.0f} s busy)",
        flush=True,
    )
    cp = plane()
    admin = KubeClient(cp.admin_config(), qps=0, burst=0)
    for i in range(100):  # bare Nodes: Ready, untainted (no kwok, no node lifecycle here)
        create_bare_node(
            admin, f"sched-{i:03d}", allocatable={"cpu": "64", "memory": "256Gi", "pods": "110"}
        )
    folder = Path(tempfile.mkdtemp(prefix="bench-process-"))
    saved_path = os.environ.get("PYTHONPATH")
    if SWITCH_INTERVAL:  # both servers (not the load generator) get the same interpreter setting
        (folder / "site").mkdir()
        (folder / "site" / "sitecustomize.py").write_text(
            f"import sys\nsys.setswitchinterval({SWITCH_INTERVAL})\n"
        )
        os.environ["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(folder / "site"), str(Path.cwd()), saved_path) if p
        )
        print(f"   sys.setswitchinterval({SWITCH_INTERVAL}) in both servers")
    manager = start_manager(cp, folder, *MANAGER_ARGS)
    if MANAGER_ARGS:
        print(f"   manager flags: {' '.join(MANAGER_ARGS)}")
    ca = folder / "certs" / "ca.crt"
    bare_port = free_port()
    bare = start_bare(bare_port, folder / "certs")
    if saved_path is None:
        os.environ.pop("PYTHONPATH", None)
    else:
        os.environ["PYTHONPATH"] = saved_path
    payload = json.dumps(review(hypernode("bench-16", 16))).encode()
    bound_at: dict[str, tuple[int, float]] = {}
    try:
        if SERVER_NICE:
            for pid in (bare.pid, manager.proc.pid):
                renice(pid, int(SERVER_NICE))
            print(f"   both servers run at nice {SERVER_NICE}")
        results = {}
        bare_worker = children(bare.pid)[0]
        for label, port, pid in (
            ("bare Flask, idle", bare_port, bare_worker),
            ("manager, idle", manager.webhook_port, worker_pid(manager)),
        ):
            open_loop(port, ca, payload, 1.0)
            cpu_before = cpu_seconds(pid)
            results[label] = open_loop(port, ca, payload, SECONDS)
            results[label]["cpu_ms"] = (cpu_seconds(pid) - cpu_before) * 1000 / (RATE * SECONDS)
        # The same background twice - the API server creating 2,000 pods and the manager
        # placing them - once measuring the bare endpoint, once the manager's webhook.
        for label, namespace, port in (
            ("bare Flask, busy", "sched-a", bare_port),
            ("manager, scheduling", "sched-b", manager.webhook_port),
        ):
            results[label], in_window, took = busy_window(
                cp, admin, namespace, port, ca, payload, worker_pid(manager)
            )
            bound_at[label] = (in_window, took)
        final = bound(admin, "sched-a") + bound(admin, "sched-b")
    finally:
        stop(bare)
        stop_manager(manager)
        cp.stop()
    for label, r in results.items():
        print(
            f"{label:>20}: p50 {r['p50']:7.2f} ms  p99 {r['p99']:7.2f} ms  "
            f"{r['rps']:6.1f} req/s  non-200 {r['errors']:.0f}"
        )
    print(
        f"CPU per admission, idle: manager worker {results['manager, idle']['cpu_ms']:.2f} ms, "
        f"bare Flask worker {results['bare Flask, idle']['cpu_ms']:.2f} ms"
    )
    for label, (in_window, took) in bound_at.items():
        print(
            f"during '{label}': {in_window}/{SCHEDULED_PODS} pods bound within the window, "
            f"all bound after {took:.0f} s; manager worker CPU "
            f"{results[label]['manager_cpu']:.1f} s"
        )
    busy = results["manager, scheduling"]["p99"]
    ratio = busy / max(results["bare Flask, busy"]["p99"], 1e-9)
    idle_ratio = busy / max(results["bare Flask, idle"]["p99"], 1e-9)
    ok = ratio <= 3.0 and final == 2 * SCHEDULED_PODS
    print(
        f"manager p99 while scheduling / bare Flask p99 under the same background = "
        f"{ratio:.2f}x (goal <= 3x: {'OK' if ok else 'MISSED'}); "
        f"/ bare Flask p99 on a quiet machine = {idle_ratio:.2f}x"
    )
    return 0 if ok else 1


def main(argv: list[str]) -> int:
    if argv[:1] == ["create-pods"]:
        return create_pods(argv[1], argv[2], int(argv[3]))
    parts = argv or ["rss", "webhook"]
    failed = 0
    for part in parts:
        failed += {"rss": rss, "webhook": webhook}[part]()
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
