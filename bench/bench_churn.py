"""Churn soak (issue 17, R12): does the manager's memory level off under create/delete churn?

A private control plane (etcd + kube-apiserver, no kube-controller-manager: the bench deletes
what it creates), 40 Nodes and one ``volcano-py manager``. Every round creates
``BENCH_CHURN_GANGS`` PodGroups of 4 pods (the scheduler binds them) and ``BENCH_CHURN_HN``
hand-made leaf HyperNodes (the webhook admits them, the scheduler's tree and the
hyperNode-controller's nodeCount follow), then deletes all of it again. The gunicorn worker's
``VmRSS``, threads and open file descriptors are sampled every ``SAMPLE_S`` seconds.

Phases: ``BENCH_WARMUP_SECONDS`` (default 120) of churn whose end is the baseline, churn until
``BENCH_CHURN_SECONDS`` (default 1200: 20 minutes), then ``BENCH_IDLE_SECONDS`` (default 120)
with nothing to do. Goals: RSS after warm-up stays within +15% of the baseline and is back
near it (within +5%) at the end of the idle phase; threads and fds flat.

``python -m bench churn`` (or ``python -m bench.bench_churn``); a short look:
``BENCH_CHURN_SECONDS=240 BENCH_WARMUP_SECONDS=60 BENCH_IDLE_SECONDS=30``.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.bench_process import children, parallel, plane, vm_rss_mb
from devcluster.manager import start_manager, stop_manager
from tests.builders import create_bare_node, exact, force_delete_pod, hypernode_body, pod_body
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import ApiError

CHURN_S = float(os.environ.get("BENCH_CHURN_SECONDS", "1200"))
WARMUP_S = float(os.environ.get("BENCH_WARMUP_SECONDS", "120"))
IDLE_S = float(os.environ.get("BENCH_IDLE_SECONDS", "120"))
GANGS = int(os.environ.get("BENCH_CHURN_GANGS", "25"))
HYPERNODES = int(os.environ.get("BENCH_CHURN_HN", "25"))
SAMPLE_S = 10.0
NODES = 40
NS = "bench"


def sample(pid: int) -> tuple[float, int, int]:
    """(RSS MB, threads, open fds) of ``pid``."""
    threads = next(
        int(line.split()[1])
        for line in Path(f"/proc/{pid}/status").read_text().splitlines()
        if line.startswith("Threads:")
    )
    return vm_rss_mb(pid), threads, len(os.listdir(f"/proc/{pid}/fd"))


def churn_round(client: KubeClient, round_no: int) -> int:
    """Create gangs and HyperNodes, let the scheduler bind, delete everything; pods created."""
    pods: list[str] = []
    groups = [f"c{round_no}-g{i}" for i in range(GANGS)]

    def make_gang(group: str) -> None:
        client.create(
            R.PODGROUPS,
            {
                "apiVersion": "scheduling.volcano.sh/v1beta1",
                "kind": "PodGroup",
                "metadata": {"name": group, "namespace": NS},
                "spec": {"minMember": 4},
            },
            NS,
        )
        for j in range(4):
            body = pod_body(
                f"{group}-{j}",
                NS,
                requests={"cpu": "100m"},
                annotations={"scheduling.k8s.io/group-name": group},
            )
            client.create(R.PODS, body, NS)
            pods.append(f"{group}-{j}")

    hypernodes = [f"c{round_no}-hn{i}" for i in range(HYPERNODES)]
    parallel(groups, make_gang, 8)
    parallel(
        hypernodes,
        lambda n: client.create(R.HYPERNODES, hypernode_body(n, 1, [exact(f"{n}-node")])),
        8,
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        placed = sum(1 for p in client.list_all(R.PODS, NS) if p["spec"].get("nodeName"))
        if placed >= len(pods):
            break
        time.sleep(0.5)

    def quietly(fn: Callable[[], object]) -> None:
        with contextlib.suppress(ApiError):
            fn()

    parallel(pods, lambda p: quietly(lambda: force_delete_pod(client, p, NS)), 8)
    parallel(groups, lambda g: quietly(lambda: client.delete(R.PODGROUPS, g, NS)), 8)
    parallel(hypernodes, lambda n: quietly(lambda: client.delete(R.HYPERNODES, n)), 8)
    return len(pods)


def main() -> int:
    cp = plane()
    try:
        admin = KubeClient(cp.admin_config(), qps=0, burst=0)
        for i in range(NODES):
            create_bare_node(admin, f"churn-{i:02d}", allocatable={"cpu": "64", "pods": "500"})
        work = Path(tempfile.mkdtemp(prefix="bench-churn-"))
        manager = start_manager(cp, work)
        pid = children(manager.proc.pid)[0]
        started = time.monotonic()
        samples: list[tuple[float, str, float, int, int]] = []
        next_sample = started
        created = rounds = 0
        baseline: tuple[float, int, int] | None = None

        def take(phase: str) -> None:
            nonlocal next_sample
            if time.monotonic() >= next_sample:
                rss, threads, fds = sample(pid)
                at = time.monotonic() - started
                samples.append((at, phase, rss, threads, fds))
                line = f"  t={at:6.0f}s {phase:7s} rss {rss:7.1f} MB threads {threads:3d}"
                print(f"{line} fds {fds:4d}", flush=True)
                next_sample += SAMPLE_S

        print(
            f"churn: {GANGS} gangs x 4 pods + {HYPERNODES} HyperNodes per round, "
            f"warm-up {WARMUP_S:.0f}s, churn to {CHURN_S:.0f}s, idle {IDLE_S:.0f}s"
        )
        while time.monotonic() - started < CHURN_S:
            phase = "warm-up" if time.monotonic() - started < WARMUP_S else "churn"
            created += churn_round(admin, rounds)
            rounds += 1
            take(phase)
            if baseline is None and phase == "churn":
                baseline = sample(pid)
        churn_end = sample(pid)
        idle_until = time.monotonic() + IDLE_S
        while time.monotonic() < idle_until:
            take("idle")
            time.sleep(1)
        idle_end = sample(pid)
        stop_manager(manager)
    finally:
        cp.stop()

    assert baseline is not None, "the churn phase never started: raise BENCH_CHURN_SECONDS"
    after = [s for s in samples if s[1] != "warm-up"]
    peak = max(s[2] for s in after)
    threads = {s[3] for s in after}
    fds = [s[4] for s in after]
    print(
        f"churn: {rounds} rounds, {created} pods and {rounds * GANGS} PodGroups and "
        f"{rounds * HYPERNODES} HyperNodes created and deleted"
    )
    base = baseline[0]
    print(f"  RSS after warm-up (baseline)  {base:7.1f} MB")
    print(f"  RSS peak during churn         {peak:7.1f} MB   {peak / base:5.2f}x (goal <= 1.15x)")
    print(f"  RSS at the end of churn       {churn_end[0]:7.1f} MB   {churn_end[0] / base:5.2f}x")
    idle = idle_end[0]
    print(f"  RSS at the end of idle        {idle:7.1f} MB   {idle / base:5.2f}x (goal <= 1.05x)")
    print(f"  threads after warm-up         {sorted(threads)} (goal: flat)")
    print(f"  fds after warm-up             {min(fds)}-{max(fds)} (goal: flat)")
    met = peak <= 1.15 * baseline[0] and idle_end[0] <= 1.05 * baseline[0]
    print(f"  goal {'met' if met else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
