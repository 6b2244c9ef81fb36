"""IdleTrimmer: releases memory once per quiet spell that follows activity, never while busy."""

from __future__ import annotations

import os
import subprocess

import pytest

from volcano_py.kube.idle_trim import IdleTrimmer, _malloc_trim, release_memory


def test_trims_once_after_activity_stops_and_never_while_busy() -> None:
    key = [0]
    released: list[int] = []
    trimmer = IdleTrimmer(lambda: key[0], release=lambda: released.append(key[0]))
    assert not trimmer.tick()  # quiet from the start: nothing to give back
    key[0] = 1
    assert not trimmer.tick()  # busy
    key[0] = 2
    assert not trimmer.tick()  # still busy
    assert trimmer.tick()  # a quiet period after activity: released
    assert not trimmer.tick()  # and only once per quiet spell
    assert released == [2]
    key[0] = 3
    trimmer.tick()
    assert trimmer.tick()
    assert released == [2, 3]
    assert trimmer.trims == 2


def test_release_memory_runs_with_this_c_library() -> None:
    trim = _malloc_trim()  # glibc here; None where there is no malloc_trim
    release_memory(trim)


def test_finding_malloc_trim_starts_no_child_process(monkeypatch: pytest.MonkeyPatch) -> None:
    # ctypes.util.find_library runs ``ldconfig -p``: a fork and exec in the worker's start-up
    def no_child(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"a child process was started: {args}")

    monkeypatch.setattr(subprocess, "Popen", no_child)
    monkeypatch.setattr(os, "posix_spawn", no_child)
    trim = _malloc_trim()
    assert trim is not None  # glibc, as on every machine this runs on
    assert trim() in (0, 1)
