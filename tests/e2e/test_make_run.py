"""``make run`` as a newcomer meets it (devcluster/devrun.py).

- the README's first steps: ``make run`` in the background, ``kubectl apply`` the example gang
  Deployment, every pod Running inside one rack, scale it down, roll it, delete it, then
  SIGTERM ``make run``: no process and no temporary folder left;
- SIGTERM, SIGINT and SIGHUP each stop everything the run started and remove its folder;
- a run killed with SIGKILL leaves its processes behind; the next run cleans them up.

Every run records itself in a private ``$VOLCANO_PY_RUN_DIR`` so these never touch a
developer's own ``make run``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from devcluster import devstate, fleet
from devcluster.provision import ensure_binaries
from tests.builders import wait_until

pytestmark = pytest.mark.timeout(300)

ROOT = Path(__file__).resolve().parents[2]
KUBECTL = str(ensure_binaries()["kubectl"])


class Run:
    """One ``make run`` (or devrun) in the background, its output in a file."""

    def __init__(self, argv: list[str], run_dir: Path, log: Path) -> None:
        self.run_dir = run_dir
        self.log_path = log
        env = {**os.environ, "VOLCANO_PY_RUN_DIR": str(run_dir), "PYTHONUNBUFFERED": "1"}
        env.pop("KUBECONFIG", None)
        with open(log, "wb") as out:
            self.proc = subprocess.Popen(
                argv, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT
            )
        self._folder: Path | None = None

    def wait_up(self) -> Run:
        self._folder = Path(wait_until(self._recorded, 120, "make run records its folder"))
        try:
            wait_until(self._up, 180, "make run is up")
        except AssertionError:
            # the output as it is now (a message built before the wait showed it empty)
            raise AssertionError(f"make run not up in 180 s; its output:\n{self.log()}") from None
        return self

    def _up(self) -> bool:
        assert self.proc.poll() is None, f"make run exited with {self.proc.returncode}"
        return "local cluster up" in self.log()

    def _recorded(self) -> str | None:
        assert self.proc.poll() is None, self.log()
        try:
            state = json.loads((self.run_dir / "make-run.json").read_text())
            owner = int(state["pid"])
            # ours: the devrun we started, or the one make started for us (not a stale record)
            ppid = int(Path(f"/proc/{owner}/stat").read_text().rsplit(") ", 1)[1].split()[1])
        except (OSError, ValueError, KeyError):
            return None
        return str(state["dir"]) if self.proc.pid in (owner, ppid) else None

    @property
    def folder(self) -> Path:
        """The run's temporary folder (known once it is up)."""
        assert self._folder is not None, "not up yet"
        return self._folder

    def recorded_folder(self) -> Path | None:
        """Whatever folder the record names now (cleanup after a failed start)."""
        try:
            return Path(json.loads((self.run_dir / "make-run.json").read_text())["dir"])
        except (OSError, ValueError, KeyError):
            return None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    @property
    def kubeconfig(self) -> str:
        return str(self.folder / "kubeconfig")

    def kubectl(self, *args: str) -> str:
        done = subprocess.run(
            [KUBECTL, f"--kubeconfig={self.kubeconfig}", *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 90) -> None:
        """Send ``sig`` and wait until nothing of this run is left."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout)
        wait_until(lambda: not devstate.processes_using(self.folder), 60, "every process stopped")

    def leftovers(self) -> list[int]:
        return devstate.processes_using(self.folder)


@pytest.fixture
def runs(tmp_path: Path) -> Iterator[Callable[..., Run]]:
    started: list[Run] = []

    def start(*argv: str, make: bool = False) -> Run:
        command = (
            ["make", "--no-print-directory", "run", *argv]
            if make
            else [sys.executable, "-m", "devcluster.devrun", *argv]
        )
        run = Run(command, tmp_path / "state", tmp_path / f"run-{len(started)}.log")
        started.append(run)
        return run.wait_up()

    yield start
    for run in started:  # whatever a failed test left behind
        if run.proc.poll() is None:
            run.proc.kill()
            run.proc.wait(10)
        folder = run._folder or run.recorded_folder()
        if folder is not None:
            devstate.terminate(devstate.processes_using(folder))


def _pods(run: Run, app: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = json.loads(
        run.kubectl("get", "pods", "-l", f"app={app}", "-o", "json")
    )["items"]
    return items


def _all_running(run: Run, app: str, count: int) -> list[dict[str, Any]] | None:
    pods = [p for p in _pods(run, app) if not p["metadata"].get("deletionTimestamp")]
    if len(pods) == count and all(p["status"].get("phase") == "Running" for p in pods):
        return pods
    return None


def _racks(run: Run, pods: list[dict[str, Any]]) -> set[str]:
    nodes = json.loads(run.kubectl("get", "nodes", "-o", "json"))["items"]
    rack = {n["metadata"]["name"]: n["metadata"]["labels"][fleet.RACK_LABEL] for n in nodes}
    return {rack[p["spec"]["nodeName"]] for p in pods}


VCJOB = """apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {{name: {name}, namespace: default}}
spec:
  minAvailable: {minimum}
  tasks:
    - {{name: worker, replicas: 1, template: {{spec: {{containers: [{{name: c, image: pause}}]}}}}}}
"""


def _create_vcjob(run: Run, name: str, minimum: int) -> subprocess.CompletedProcess[str]:
    path = run.folder / f"{name}.yaml"
    path.write_text(VCJOB.format(name=name, minimum=minimum))
    return subprocess.run(
        [KUBECTL, f"--kubeconfig={run.kubeconfig}", "create", "-f", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def _check_job_admission(run: Run) -> None:
    denied = _create_vcjob(run, "too-many", 2)
    assert denied.returncode != 0
    assert 'admission webhook "validatejob.volcano.sh" denied the request' in denied.stderr
    assert "spec.minAvailable: Invalid value: 2" in denied.stderr
    assert _create_vcjob(run, "defaulted", 1).returncode == 0, "a valid Job is admitted"
    job = json.loads(run.kubectl("get", "jobs.batch.volcano.sh", "defaulted", "-o", "json"))
    assert job["spec"]["schedulerName"] == "volcano"  # filled by the mutating webhook
    run.kubectl("delete", "jobs.batch.volcano.sh", "defaulted")


def test_the_readme_first_steps_work_and_sigterm_leaves_nothing_behind(
    runs: Callable[..., Run],
) -> None:
    run = runs(make=True)
    assert ".venv/bin/volcano-py tree" in run.log() or "volcano_py tree" in run.log()
    assert f"export KUBECONFIG={run.kubeconfig}" in run.log()
    assert len(json.loads(run.kubectl("get", "nodes", "-o", "json"))["items"]) == 8

    started = time.monotonic()
    run.kubectl("apply", "-f", str(fleet.DEMO_WORKLOAD))
    pods = wait_until(lambda: _all_running(run, "training-workers", 4), 60, "4 gang pods Running")
    print(f"gang Running {time.monotonic() - started:.1f}s after kubectl apply")
    assert len(_racks(run, pods)) == 1, "the gang fits one rack, so it lands in one"

    run.kubectl("scale", "deployment/training-workers", "--replicas=2")
    wait_until(lambda: _all_running(run, "training-workers", 2), 60, "scaled down to 2 Running")
    wait_until(lambda: len(_pods(run, "training-workers")) == 2, 60, "the other 2 pods are gone")

    run.kubectl("rollout", "restart", "deployment/training-workers")
    run.kubectl("rollout", "status", "deployment/training-workers", "--timeout=90s")
    pods = wait_until(lambda: _all_running(run, "training-workers", 2), 60, "rolled: 2 Running")
    assert len(_racks(run, pods)) == 1

    run.kubectl("delete", "-f", str(fleet.DEMO_WORKLOAD))
    wait_until(lambda: not _pods(run, "training-workers"), 60, "every pod gone after the delete")

    # Volcano Job admission is enforced: the API server calls both Job webhooks of the process
    _check_job_admission(run)

    run.stop(signal.SIGTERM)
    assert not run.folder.exists()
    assert not (run.run_dir / "make-run.json").exists()


@pytest.mark.parametrize(
    "sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=lambda s: s.name
)
def test_a_stop_signal_stops_every_process_and_removes_the_folder(
    runs: Callable[..., Run], sig: signal.Signals
) -> None:
    run = runs("--nodes=2")
    assert len(run.leftovers()) >= 5  # etcd, apiserver, controller-manager, kwok, manager
    run.stop(sig)
    assert run.proc.returncode == 0, run.log()[-3000:]
    assert not run.leftovers()
    assert not run.folder.exists()
    assert not (run.run_dir / "make-run.json").exists()


def test_a_run_killed_with_sigkill_is_cleaned_up_by_the_next_one(runs: Callable[..., Run]) -> None:
    first = runs("--nodes=0")
    first.proc.kill()
    first.proc.wait(10)
    orphans = first.leftovers()
    assert orphans, "SIGKILL cannot clean up: the control plane outlives it"

    second = runs("--nodes=0")
    assert "cleaned up after a make run that was killed" in second.log()
    assert not first.leftovers()
    assert not first.folder.exists()
    assert second.folder != first.folder

    refused = subprocess.run(
        [sys.executable, "-m", "devcluster.devrun", "--nodes=0"],
        cwd=ROOT,
        env={**os.environ, "VOLCANO_PY_RUN_DIR": str(second.run_dir)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 1
    assert "already running" in refused.stderr
    assert second.proc.poll() is None
    assert second.folder.exists()
    second.stop()
    assert not second.folder.exists()
