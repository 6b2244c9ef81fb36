"""``--log-format json``: every line the process writes is JSON, gunicorn's included.

Two processes as users run them: ``volcano-py webhook`` alone (no cluster), and the manager
against the real control plane, with the API server calling its webhook (access lines) and a
PodGroup without pods waiting for several scheduling cycles (the line about it is written
once, not once per cycle).
"""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import ssl
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from devcluster.harness import ControlPlane, free_port
from tests.e2e.conftest import (
    ManagerProcess,
    install_webhook,
    start_manager,
    stop_manager,
    uninstall_webhook,
)
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient

HYPERNODE = {
    "apiVersion": "topology.volcano.sh/v1alpha1",
    "kind": "HyperNode",
    "metadata": {"name": "json-logs-rack"},
    "spec": {"tier": 1, "members": [{"type": "Node", "selector": {"exactMatch": {"name": "n1"}}}]},
}


def _json_lines(text: str) -> list[dict[str, Any]]:
    entries = []
    for number, line in enumerate(text.splitlines(), 1):
        try:
            entries.append(json.loads(line))
        except ValueError:
            pytest.fail(f"line {number} is not JSON: {line!r}")
    return entries


def _wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the webhook exited"
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
            return
        time.sleep(0.1)
    pytest.fail(f"nothing listens on {port} after {timeout}s")


@pytest.mark.timeout(90)
def test_webhook_json_logs_every_line_including_gunicorn_and_access(tmp_path: Path) -> None:
    port = free_port()
    log_path = tmp_path / "webhook.log"
    argv = [
        sys.executable,
        "-m",
        "volcano_py",
        "webhook",
        f"--cert-dir={tmp_path / 'certs'}",
        "--self-signed",
        "--no-cluster",
        "--host=127.0.0.1",
        f"--port={port}",
        "--log-format=json",
        "--access-log",
    ]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    try:
        _wait_for_port(port, proc)
        context = ssl.create_default_context(cafile=str(tmp_path / "certs" / "ca.crt"))
        context.check_hostname = False
        with (
            socket.create_connection(("127.0.0.1", port), 5) as raw,
            context.wrap_socket(raw) as tls,
        ):
            tls.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            assert tls.recv(64).startswith(b"HTTP/1.1 200")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
    entries = _json_lines(log_path.read_text())
    loggers = {e["logger"] for e in entries}
    assert {"gunicorn.error", "gunicorn.access"} <= loggers, loggers
    assert any(e["msg"].startswith("Listening at: https://127.0.0.1:") for e in entries)
    assert any("GET /healthz" in e["msg"] for e in entries if e["logger"] == "gunicorn.access")


@pytest.mark.timeout(180)
def test_manager_json_logs_every_line_and_a_waiting_podgroup_once(
    e2e_plane: ControlPlane,
    replicas: list[ManagerProcess],
    tmp_path: Path,
    namespace: str,
) -> None:
    admin = KubeClient(e2e_plane.admin_config())
    process = start_manager(
        e2e_plane,
        tmp_path,
        "--log-format=json",
        "--webhook-access-log=true",
        "--leader-elect=false",
        "--controllers=pg-controller",
    )
    replicas.append(process)
    install_webhook(admin, tmp_path / "certs", process.webhook_port, "volcano-py-json-logs")
    try:
        admin.create(R.HYPERNODES, HYPERNODE)
        # the API server starts calling a new webhook configuration a moment after it exists
        deadline = time.monotonic() + 30
        probe = 0
        while "/hypernodes/validate" not in process.log() and time.monotonic() < deadline:
            probe += 1
            labels = {"probe": str(probe)}
            admin.patch(
                R.HYPERNODES, HYPERNODE["metadata"]["name"], {"metadata": {"labels": labels}}
            )
            time.sleep(0.5)
        admin.create(
            R.PODGROUPS,
            {
                "apiVersion": "scheduling.volcano.sh/v1beta1",
                "kind": "PodGroup",
                "metadata": {
                    "name": "no-pods",
                    "namespace": namespace,
                    # left behind by pods that are gone: dropped (and said) every cycle
                    "annotations": {"volcano.sh/job-allocated-hypernode": "json-logs-rack"},
                },
                "spec": {
                    "minMember": 2,
                    "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
                },
            },
        )
        time.sleep(5)  # ten scheduling cycles (--schedule-period=0.5)
    finally:
        uninstall_webhook(admin, "volcano-py-json-logs")
        with contextlib.suppress(Exception):
            admin.delete(R.HYPERNODES, "json-logs-rack")
    assert stop_manager(process) == 0
    entries = _json_lines(process.log())
    gunicorn = [e for e in entries if e["logger"].startswith("gunicorn.")]
    assert any(e["msg"].startswith("Booting worker") for e in gunicorn)
    assert any(
        "/hypernodes/validate" in e["msg"] for e in gunicorn if e["logger"].endswith("access")
    )
    about = [e["msg"] for e in entries if f"{namespace}/no-pods" in e["msg"]]
    assert about  # it is said ...
    assert len(about) == len(set(about)), about  # ... once, not once per cycle
