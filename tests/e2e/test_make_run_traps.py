"""``make run``'s first-hour traps, through ``make`` itself (devcluster/devrun.py).

- a ``$KUBECONFIG`` that ``make run`` did not create is refused (exit 2, nothing started) with
  the two commands to choose from; ``CLUSTER=existing`` without one is refused too;
- a taken ``WEBHOOK_PORT`` / ``METRICS_PORT`` is one line naming the port and its flag, and
  ``make run`` exits at once, before starting anything;
- a ``$KUBECONFIG`` left from an earlier ``make run`` is not refused: a local cluster starts;
- SIGHUP to ``make run``'s process group (what a closed terminal sends) stops everything.

Every run records itself in a private ``$VOLCANO_PY_RUN_DIR``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from devcluster import devstate
from tests.builders import wait_until

pytestmark = pytest.mark.timeout(300)

ROOT = Path(__file__).resolve().parents[2]


def _env(run_dir: Path, kubeconfig: str | None) -> dict[str, str]:
    env = {**os.environ, "VOLCANO_PY_RUN_DIR": str(run_dir), "PYTHONUNBUFFERED": "1"}
    env.pop("KUBECONFIG", None)
    if kubeconfig is not None:
        env["KUBECONFIG"] = kubeconfig
    return env


def _make_run(run_dir: Path, *variables: str, kubeconfig: str | None = None) -> tuple[int, str]:
    """``make run`` that is expected to stop by itself: its exit code and stderr."""
    started = time.monotonic()
    done = subprocess.run(
        ["make", "--no-print-directory", "run", "NODES=0", *variables],
        cwd=ROOT,
        env=_env(run_dir, kubeconfig),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    took = time.monotonic() - started
    assert not (run_dir / "make-run.json").exists(), "a refused run started something"
    assert took < 60, f"make run took {took:.0f}s to refuse"
    return done.returncode, done.stderr


def test_a_foreign_kubeconfig_is_refused_saying_how_to_choose(tmp_path: Path) -> None:
    real = tmp_path / "real-cluster.kubeconfig"
    real.write_text("apiVersion: v1\nkind: Config\n")
    code, err = _make_run(tmp_path / "state", kubeconfig=str(real))
    assert code != 0
    lines = [line for line in err.splitlines() if line.startswith("make run:")]
    assert len(lines) == 1, err
    assert str(real) in lines[0]
    assert "make run CLUSTER=existing" in lines[0]
    assert "make run CLUSTER=local" in lines[0]
    code, err = _make_run(tmp_path / "state", "CLUSTER=existing")
    assert code != 0
    assert "CLUSTER=existing needs $KUBECONFIG" in err


@pytest.mark.parametrize("variable", ["WEBHOOK_PORT", "METRICS_PORT"])
def test_a_taken_port_is_one_line_and_make_run_exits_at_once(
    tmp_path: Path, taken: int, variable: str
) -> None:
    code, err = _make_run(tmp_path / "state", f"{variable}={taken}")
    assert code != 0
    lines = [line for line in err.splitlines() if line.startswith("make run:")]
    assert len(lines) == 1, err
    assert f"{variable} (--{variable.lower().replace('_', '-')}) 127.0.0.1:{taken}" in lines[0]
    assert f"port {taken} is already in use" in lines[0]
    assert "Traceback" not in err


def test_a_kubeconfig_of_an_earlier_run_starts_a_local_cluster_and_sighup_to_the_group_stops_it(
    tmp_path: Path,
) -> None:
    earlier = f"/tmp/{devstate.RUN_PREFIX}gone/kubeconfig"
    run_dir = tmp_path / "state"
    log = tmp_path / "run.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            ["make", "--no-print-directory", "run", "NODES=0"],
            cwd=ROOT,
            env=_env(run_dir, earlier),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, as a terminal's job
        )
    folder: Path | None = None
    try:
        wait_until(lambda: "local cluster up" in log.read_text(), 180, "the local cluster is up")
        folder = Path(json.loads((run_dir / "make-run.json").read_text())["dir"])
        text = log.read_text()
        assert "$KUBECONFIG is set" not in text
        assert f"kill -HUP -{proc.pid}" in text  # the group to signal is named
        os.killpg(proc.pid, signal.SIGHUP)
        proc.wait(90)
        wait_until(lambda: not devstate.processes_using(folder), 60, "every process stopped")
        assert not folder.exists()
        assert not (run_dir / "make-run.json").exists()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
        if folder is not None:
            devstate.terminate(devstate.processes_using(folder))
