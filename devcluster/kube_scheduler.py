"""kube-scheduler from the pinned module as its own process (benches and the differential test).

``start_kube_scheduler`` writes a ``KubeSchedulerConfiguration`` (client qps/burst 5,000, no
leader election) into ``work`` and starts the binary against ``kubeconfig`` with its output in
``work/kube-scheduler.log``; ``stop_kube_scheduler`` ends it.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

from devcluster.harness import free_port
from devcluster.provision import ensure_kube_scheduler


def start_kube_scheduler(
    kubeconfig: Path, work: Path, extra_args: Sequence[str] = ()
) -> subprocess.Popen[bytes]:
    """Start kube-scheduler (built once into the testbin cache) on the cluster of ``kubeconfig``.

    ``extra_args``: more flags (the Workload API's ``--feature-gates``, ``harness.WORKLOAD_GATES``).
    """
    binary = ensure_kube_scheduler()
    work.mkdir(parents=True, exist_ok=True)
    config = work / "kube-scheduler.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        f"clientConnection:\n  kubeconfig: {kubeconfig}\n  qps: 5000\n  burst: 5000\n"
        "leaderElection:\n  leaderElect: false\n"
    )
    with open(work / "kube-scheduler.log", "wb") as out:
        return subprocess.Popen(
            [
                str(binary),
                f"--config={config}",
                "--bind-address=127.0.0.1",
                f"--secure-port={free_port()}",
                f"--authentication-kubeconfig={kubeconfig}",
                f"--authorization-kubeconfig={kubeconfig}",
                "-v=0",
                *extra_args,
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def stop_kube_scheduler(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL after 30 s."""
    proc.terminate()
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)
