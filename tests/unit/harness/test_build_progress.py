"""The cold build's progress lines (``devcluster.buildprogress``), clock injected.

``follow`` while a build runs; ``hold_build_lock`` while another build holds the cache's lock
(a real ``flock`` on a file, the clock and the sleep injected).
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

import pytest

from devcluster.buildprogress import PROGRESS_S, follow, hold_build_lock, is_package


def test_package_lines_are_import_paths_and_messages_are_not() -> None:
    assert is_package("k8s.io/apimachinery/pkg/util/sets\n")
    assert is_package("runtime")
    assert not is_package("go: downloading k8s.io/api v0.37.1")
    assert not is_package("# k8s.io/kubernetes/cmd/kube-apiserver")
    assert not is_package("./main.go:3:2: undefined: x")
    assert not is_package("   \n")


def test_follow_counts_packages_and_reports_every_progress_interval() -> None:
    ticks = iter(float(t) for t in range(0, 1000, 5))  # each line takes 5 s
    said: list[str] = []
    lines = ["go: downloading k8s.io/api v0.37.1\n"] + [f"pkg/p{i}\n" for i in range(12)]
    packages, others = follow(lines, lambda: next(ticks), said.append, "kube-apiserver", "~6 min")
    assert packages == 12
    assert others == ["go: downloading k8s.io/api v0.37.1"]
    # 13 lines x 5 s = 65 s: a line at 20 s, 40 s and 60 s
    assert len(said) == int(65 // PROGRESS_S)
    assert said[0] == (
        "  building kube-apiserver: 3 packages compiled, 0m20s so far (a cold build takes ~6 min)"
    )
    assert "0m40s" in said[1]


def test_a_run_behind_another_build_says_who_holds_the_lock_every_progress_interval(
    tmp_path: Path,
) -> None:
    path = tmp_path / ".lock"
    holder = path.open("a+")
    fcntl.flock(holder, fcntl.LOCK_EX)
    holder.write(json.dumps({"pid": 4242, "started": 1000.0}))
    holder.flush()
    now = [1804.0]  # the holder started 13m24s ago
    said: list[str] = []

    def sleep(seconds: float) -> None:
        now[0] += seconds
        if now[0] >= 1804.0 + 45:  # the other build finishes after 45 s
            holder.close()

    with path.open("a+") as lock:
        hold_build_lock(lock, clock=lambda: now[0], sleep=sleep, say=said.append, poll_s=5.0)
        record = json.loads(path.read_text())
    line = "waiting for another build of the control-plane binaries (pid 4242, started {} ago)"
    assert said == [line.format("13m24s"), line.format("13m44s"), line.format("14m04s")]
    assert record == {"pid": os.getpid(), "started": 1849.0}


def test_a_free_lock_is_taken_at_once_without_a_word(tmp_path: Path) -> None:
    said: list[str] = []
    with (tmp_path / ".lock").open("a+") as lock:
        hold_build_lock(lock, clock=lambda: 5.0, sleep=pytest.fail, say=said.append)
    assert said == []
    assert json.loads((tmp_path / ".lock").read_text())["pid"] == os.getpid()
