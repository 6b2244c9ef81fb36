"""Progress of a cold ``go build``: what is built, how far along, how long it usually takes.

``go_build(argv, ...)`` runs ``go build -v`` (which names every package as it is compiled, on
stderr) and, at most every ``PROGRESS_S`` seconds, prints one line: the binaries, the packages
compiled so far, the time spent and the usual cold build time. Lines that are not a package
name (``go: downloading ...``, compiler errors) are kept and shown when the build fails, so
an error reads as it would without ``-v``. ``follow`` is the loop on its own (lines and clock
injected) for tests.

``hold_build_lock(lock, ...)`` takes the binary cache's build lock the same way: a run that
finds another build holding it says so at once and then every ``PROGRESS_S`` seconds (the
holder's pid and how long ago it started, which the holder writes into the lock file), so a
first ``make run`` behind another build is never silent.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO

PROGRESS_S = 20.0
KEPT_LINES = 60


def is_package(line: str) -> bool:
    """A ``go build -v`` package line (an import path), not a message."""
    text = line.strip()
    return bool(text) and " " not in text and not text.startswith(("#", "go:"))


def _minutes(seconds: float) -> str:
    return f"{int(seconds // 60)}m{int(seconds % 60):02d}s"


def follow(
    lines: Iterable[str],
    clock: Callable[[], float],
    say: Callable[[str], None],
    what: str,
    expected: str,
) -> tuple[int, list[str]]:
    """Count package lines, report every ``PROGRESS_S``; ``(packages, other lines kept)``."""
    started = last = clock()
    packages = 0
    others: list[str] = []
    for line in lines:
        if is_package(line):
            packages += 1
        elif line.strip():
            others = [*others[-(KEPT_LINES - 1) :], line.rstrip("\n")]
        now = clock()
        if now - last >= PROGRESS_S:
            last = now
            say(
                f"  building {what}: {packages} packages compiled, {_minutes(now - started)} "
                f"so far (a cold build takes {expected})"
            )
    return packages, others


def _holder(lock: IO[str]) -> tuple[str, float | None]:
    """The pid and start time (epoch seconds) the lock's holder wrote; ``?`` when unreadable."""
    lock.seek(0)
    try:
        record = json.loads(lock.read() or "{}")
        return str(int(record["pid"])), float(record["started"])
    except (ValueError, KeyError, TypeError):
        return "?", None


def hold_build_lock(
    lock: IO[str],
    *,
    clock: Callable[[], float] = time.time,
    sleep: Callable[[float], None] = time.sleep,
    say: Callable[[str], None] | None = None,
    poll_s: float = 1.0,
) -> None:
    """Take ``lock`` (a file opened ``a+``) exclusively, saying while another build holds it.

    Once held, the file records this process' pid and the time, for the next waiter's lines.
    """

    def stderr(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    report = say or stderr
    last: float | None = None
    while True:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            now = clock()
            if last is None or now - last >= PROGRESS_S:
                last = now
                pid, started = _holder(lock)
                since = (
                    "at an unknown time"
                    if started is None
                    else (f"{_minutes(max(0.0, now - started))} ago")
                )
                report(
                    "waiting for another build of the control-plane binaries "
                    f"(pid {pid}, started {since})"
                )
            sleep(poll_s)
    lock.seek(0)
    lock.truncate()
    lock.write(json.dumps({"pid": os.getpid(), "started": clock()}))
    lock.flush()


def go_build(argv: list[str], cwd: Path, env: dict[str, str], what: str, expected: str) -> int:
    """Run ``go build -v`` + ``argv`` with progress lines; the packages compiled.

    Raises:
        subprocess.CalledProcessError: the build failed (its messages printed first).
    """
    command = ["go", "build", "-v", *argv]

    def say(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    with subprocess.Popen(
        command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    ) as proc:
        assert proc.stderr is not None
        packages, others = follow(proc.stderr, time.monotonic, say, what, expected)
        code = proc.wait()
    if code:
        for line in others:
            say(line)
        raise subprocess.CalledProcessError(code, command)
    say(f"  built {what}: {packages} packages compiled")
    return packages
