"""What ``make run`` started, recorded so that a later ``make run`` can clean up after a killed one.

``make run`` writes ``make-run.json`` (its pid and its temporary folder) into
``$VOLCANO_PY_RUN_DIR`` (default: ``.run/`` in the checkout) before it starts anything. Every
process it starts names that folder on its command line (etcd's data dir, the kubeconfig of
kube-apiserver's clients, kube-controller-manager, kwok and the manager), so the processes of
a run are found by their command line, not by pids that may have been reused. A run that ends
normally removes the record; one that finds a record whose owner is gone kills what is left
and removes the folder (``clean_stale``). A record whose owner still runs is another live
``make run`` from this checkout: that is refused, not killed.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OWNER_MARK = "devcluster.devrun"
RUN_PREFIX = "volcano-py-run-"


def state_file() -> Path:
    """The record's path."""
    return Path(os.environ.get("VOLCANO_PY_RUN_DIR") or ROOT / ".run") / "make-run.json"


def _cmdline(pid: int) -> str:
    try:
        return (
            Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        )
    except OSError:
        return ""


def processes_using(folder: Path) -> list[int]:
    """Pids (other than ours) whose command line names ``folder``."""
    mark = str(folder)
    found = []
    for entry in Path("/proc").iterdir():
        if (
            entry.name.isdigit()
            and int(entry.name) != os.getpid()
            and mark in _cmdline(int(entry.name))
        ):
            found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie has exited: it holds nothing any more.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][:1] != "Z"
    except OSError:
        return False


def terminate(pids: list[int], timeout: float = 15.0) -> None:
    """SIGTERM every pid, then SIGKILL whatever is still there after ``timeout``."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in pids:
        if _alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def record(folder: Path) -> None:
    """Note that this process owns ``folder`` (before anything is started in it)."""
    path = state_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"pid": os.getpid(), "dir": str(folder), "started": time.time()}))


def forget() -> None:
    """Drop the record (the run cleaned up after itself)."""
    path = state_file()
    try:
        if json.loads(path.read_text()).get("pid") == os.getpid():
            path.unlink()
    except (OSError, ValueError):
        pass


class AlreadyRunning(RuntimeError):
    """Another ``make run`` from this checkout is alive."""


def clean_stale() -> str | None:
    """Clean up after a ``make run`` that was killed; say what was done (None: nothing)."""
    path = state_file()
    try:
        state = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    owner, folder = int(state.get("pid") or 0), Path(state.get("dir") or "/nonexistent")
    if owner and owner != os.getpid() and _alive(owner) and OWNER_MARK in _cmdline(owner):
        raise AlreadyRunning(
            f"make run is already running here (pid {owner}, {folder}); stop it first "
            f"(kill {owner}) or remove {path} if that is not so"
        )
    leftovers: list[int] = []
    if folder.name.startswith(RUN_PREFIX):  # never act on a folder that is not ours
        leftovers = processes_using(folder)
        terminate(leftovers)
        shutil.rmtree(folder, ignore_errors=True)
    path.unlink(missing_ok=True)
    return (
        f"cleaned up after a make run that was killed (pid {owner}): "
        f"stopped {len(leftovers)} leftover process(es), removed {folder}"
    )
