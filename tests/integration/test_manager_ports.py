"""A taken port stops ``volcano-py manager`` with one line naming it and its flag.

The check runs once the API server answered (the real control plane's) and before anything
listens: no worker starts, no bare ``OSError`` traceback.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from devcluster.harness import ControlPlane
from volcano_py.commands.ports import port_problem


def _manager(kubeconfig: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "volcano_py", "manager", f"--kubeconfig={kubeconfig}", *flags],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize("which", ["webhook", "metrics"])
def test_a_taken_port_is_one_line_naming_the_port_and_the_flag(
    control_plane: ControlPlane, taken: int, which: str
) -> None:
    if which == "webhook":
        flags = ["--webhook-host=127.0.0.1", f"--webhook-port={taken}"]
        flag = "--webhook-port"
    else:
        flags = ["--webhook-host=127.0.0.1", f"--metrics-address=127.0.0.1:{taken}"]
        flag = "--metrics-address"
    if which == "metrics":
        with socket.socket() as free:
            free.bind(("127.0.0.1", 0))
            flags.append(f"--webhook-port={free.getsockname()[1]}")
    done = _manager(control_plane.kubeconfig, *flags)
    assert done.returncode == 2
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert f"{flag} 127.0.0.1:{taken}: port {taken} is already in use" in lines[0]
    assert "Traceback" not in done.stderr


def test_port_problem_says_nothing_about_a_free_or_any_port() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        free = int(sock.getsockname()[1])
    assert port_problem("--webhook-port", "127.0.0.1", free) is None
    assert port_problem("--webhook-port", "127.0.0.1", 0) is None
