"""An API server that does not answer: the process retries, says so, and exits 1 in bounded time.

The whole process as a user runs it (``python -m volcano_py``), pointed at a loopback port
nothing listens on. No control plane is needed: the point is what happens without one.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

API_WAIT = 2.0
STARTUP_SLACK = 60.0  # a hang guard: interpreter and imports on a loaded shared machine


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed again when the block ends


def _kubeconfig(tmp_path: Path) -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        f"clusters: [{{name: c, cluster: {{server: 'https://127.0.0.1:{_closed_port()}'}}}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
    )
    return path


def _run(*argv: str) -> tuple[subprocess.CompletedProcess[str], float]:
    start = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "volcano_py", *argv],
        capture_output=True,
        text=True,
        timeout=API_WAIT + STARTUP_SLACK + 30,
        check=False,
    )
    return result, time.monotonic() - start


@pytest.mark.timeout(60)
def test_tree_against_an_unreachable_server_retries_then_exits_1(tmp_path: Path) -> None:
    result, elapsed = _run("tree", "--kubeconfig", str(_kubeconfig(tmp_path)), "--api-wait", "2")
    assert result.returncode == 1, result.stderr
    lines = result.stderr.splitlines()
    assert "Traceback" not in result.stderr
    retries = [
        line for line in lines if "cannot reach the API server at https://127.0.0.1:" in line
    ]
    assert len(retries) >= 2
    assert all("retrying in" in line for line in retries)
    assert "did not answer after" in lines[-1]
    assert "--api-wait" in lines[-1]
    assert API_WAIT <= elapsed < API_WAIT + STARTUP_SLACK
    assert result.stdout == ""


@pytest.mark.timeout(60)
def test_manager_against_an_unreachable_server_logs_json_and_exits_1(tmp_path: Path) -> None:
    result, elapsed = _run(
        "manager",
        "--kubeconfig",
        str(_kubeconfig(tmp_path)),
        "--api-wait",
        "2",
        "--log-format",
        "json",
        "--cert-dir",
        str(tmp_path / "certs"),
    )
    assert result.returncode == 1, result.stderr
    entries = [json.loads(line) for line in result.stderr.splitlines()]  # every line is JSON
    assert entries[-1]["level"] == "error"
    assert "did not answer after" in entries[-1]["msg"]
    assert any("retrying in" in e["msg"] for e in entries if e["level"] == "warning")
    assert elapsed < API_WAIT + STARTUP_SLACK
    assert not (tmp_path / "certs").exists()  # nothing prepared before the server answered
