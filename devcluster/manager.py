"""Start and stop a whole ``volcano-py manager`` process against a local control plane.

The manager runs as its own process (gunicorn master + worker, TLS webhook, ops port), logs to a
file in the caller's work folder and is ready once ``/readyz`` answers 200. Used by the e2e
tests, the fault suite and the benches that measure the real process; ``install_webhook``
registers the manifests' Validating- and MutatingWebhookConfiguration pointing at it (each
entry at its own path), so the API server calls it exactly as in a cluster;
``uninstall_webhook`` removes both.
"""

from __future__ import annotations

import base64
import contextlib
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from devcluster.harness import ControlPlane, free_port
from volcano_py.api import resources as R
from volcano_py.api.quantity import parse_quantity
from volcano_py.certkeeper import CertKeeper
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import AlreadyExists, NotFound
from webhooks import certs

ROOT = Path(__file__).resolve().parents[1]
WEBHOOKS = ROOT / "manifests" / "admission" / "webhooks.yaml"


@dataclass
class ManagerProcess:
    """A running ``volcano-py manager`` and where to reach it."""

    proc: subprocess.Popen[bytes]
    webhook_port: int
    metrics_port: int
    log_path: Path

    def worker_pids(self) -> list[int]:
        """The gunicorn worker(s) under this manager's master process."""
        master = self.proc.pid
        return [int(c) for c in Path(f"/proc/{master}/task/{master}/children").read_text().split()]

    def url(self, path: str) -> str:
        """The ops port's URL for ``path``."""
        return f"http://127.0.0.1:{self.metrics_port}{path}"

    def get(self, path: str) -> tuple[int, str]:
        """GET ``path`` on the ops port: the status code and the body (also for errors)."""
        try:
            with urllib.request.urlopen(self.url(path), timeout=5) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def log(self) -> str:
        """Everything the process has logged so far."""
        return self.log_path.read_text(errors="replace")


def deployment_memory_limit() -> int:
    """The shipped Deployment's container memory limit, in bytes (``manifests/base``)."""
    doc = yaml.safe_load((ROOT / "manifests/base/deployment.yaml").read_text())
    container = doc["spec"]["template"]["spec"]["containers"][0]
    return parse_quantity(container["resources"]["limits"]["memory"]).value()


def local_webhooks(ca: bytes, port: int, name: str) -> list[dict[str, Any]]:
    """manifests/' webhook configurations, named ``name``, calling 127.0.0.1:``port``.

    Each entry keeps its own path: its ``clientConfig.service`` becomes
    ``url: https://127.0.0.1:<port><service.path>`` with ``ca`` as the caBundle.
    """
    configs = [d for d in yaml.safe_load_all(WEBHOOKS.read_text()) if d]
    for config in configs:
        config["metadata"]["name"] = name
        for entry in config["webhooks"]:
            path = entry["clientConfig"]["service"]["path"]
            entry["clientConfig"] = {
                "url": f"https://127.0.0.1:{port}{path}",
                "caBundle": base64.b64encode(ca).decode(),
            }
    return configs


def install_webhook(client: KubeClient, cert_dir: Path, port: int, name: str) -> None:
    """The validating and mutating configurations of manifests/, pointing at 127.0.0.1:``port``."""
    ca = (cert_dir / "ca.crt").read_bytes()
    for config in local_webhooks(ca, port, name):
        with contextlib.suppress(AlreadyExists):
            client.create(R.BY_KIND[config["kind"]], config)


def uninstall_webhook(client: KubeClient, name: str) -> None:
    """Delete what ``install_webhook`` created (either may already be gone)."""
    for resource in certs.WEBHOOK_CONFIGURATIONS:
        with contextlib.suppress(NotFound):
            client.delete(resource, name)


def manager_certs(work: Path) -> Path:
    """The manager's certificate folder under ``work``, issued (or kept) now; its path.

    ``start_manager`` calls it; a caller that times the process start calls it first.
    """
    cert_dir = work / "certs"
    CertKeeper(cert_dir).sync()
    return cert_dir


def webhook_command(cert_dir: Path, port: int, *flags: str) -> list[str]:
    """``volcano-py webhook`` serving ``cert_dir``'s certificate on 127.0.0.1:``port``."""
    return [
        sys.executable,
        "-m",
        "volcano_py",
        "webhook",
        "--cert-dir",
        str(cert_dir),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        *flags,
    ]


def start_manager(
    cp: ControlPlane, work: Path, *extra: str, webhook_port: int | None = None
) -> ManagerProcess:
    """Start ``volcano-py manager`` against ``cp`` (``extra``: more flags); return once ready.

    Certificates are in ``work/certs`` (``manager_certs``), the log goes to ``work``; the webhook
    port is ``webhook_port`` or a free one, the ops port always a free one.
    """
    webhook_port = webhook_port or free_port()
    metrics_port = free_port()
    cert_dir = manager_certs(work)
    log_path = work / f"manager-{metrics_port}.log"
    argv = [
        sys.executable,
        "-m",
        "volcano_py",
        "manager",
        f"--kubeconfig={cp.kubeconfig}",
        f"--cert-dir={cert_dir}",
        "--webhook-host=127.0.0.1",
        f"--webhook-port={webhook_port}",
        f"--metrics-address=127.0.0.1:{metrics_port}",
        "--schedule-period=0.5",
        *extra,
    ]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            argv,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "KUBE_POD_NAMESPACE": "volcano-system"},
        )
    process = ManagerProcess(proc, webhook_port, metrics_port, log_path)
    deadline = time.monotonic() + 60
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"manager exited with {proc.returncode}:\n{process.log()[-4000:]}")
        with contextlib.suppress(OSError):
            if process.get("/readyz")[0] == 200:
                return process
        if time.monotonic() > deadline:
            raise RuntimeError(f"manager not ready in 60s:\n{process.log()[-4000:]}")
        time.sleep(0.2)


def stop_manager(process: ManagerProcess, timeout: float = 30) -> int:
    """SIGTERM, then SIGKILL after ``timeout`` seconds; return the exit code."""
    if process.proc.poll() is None:
        process.proc.send_signal(signal.SIGTERM)
        try:
            process.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            process.proc.kill()
            process.proc.wait(5)
    return process.proc.returncode
