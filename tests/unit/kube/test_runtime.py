"""Process-wide runtime settings: GC thresholds around the first cache sync, GIL interval."""

from __future__ import annotations

import gc
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.unit.waits import WAIT_S
from volcano_py.kube import runtime


@pytest.fixture
def restore_interpreter() -> Iterator[None]:
    thresholds, interval = gc.get_threshold(), sys.getswitchinterval()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)
    sys.setswitchinterval(interval)


@pytest.mark.usefixtures("restore_interpreter")
def test_ingest_thresholds_then_steady_ones_after_the_first_sync() -> None:
    runtime.tune_gc()
    assert gc.get_threshold() == (
        runtime.GEN0_THRESHOLD,
        runtime.GEN1_THRESHOLD,
        runtime.GEN2_THRESHOLD,
    )
    cached = [{"spec": {"n": i}} for i in range(1000)]
    runtime.freeze_after_sync()
    assert gc.get_threshold() == runtime.STEADY_THRESHOLDS
    assert runtime.STEADY_THRESHOLDS[0] < runtime.GEN0_THRESHOLD
    assert gc.get_freeze_count() >= len(cached)
    assert gc.get_count()[0] < 100  # the young generation starts empty


@pytest.mark.usefixtures("restore_interpreter")
def test_switch_interval_is_shortened_and_previous_returned() -> None:
    sys.setswitchinterval(0.005)
    assert runtime.tune_switch_interval() == pytest.approx(0.005)
    assert sys.getswitchinterval() == pytest.approx(runtime.SWITCH_INTERVAL_S)


def test_threads_exited_waits_for_the_system_to_drop_each_thread(tmp_path: Path) -> None:
    (tmp_path / "11").mkdir()
    (tmp_path / "12").mkdir()

    def end_both() -> None:
        time.sleep(0.05)
        (tmp_path / "11").rmdir()
        time.sleep(0.05)
        (tmp_path / "12").rmdir()

    ender = threading.Thread(target=end_both)
    ender.start()
    assert runtime.threads_exited([11, 12], WAIT_S, tasks=tmp_path)
    assert not (tmp_path / "12").exists()  # it returned after the last one went
    ender.join()


def test_threads_exited_says_false_for_a_thread_that_stays_and_true_without_a_list(
    tmp_path: Path,
) -> None:
    (tmp_path / "11").mkdir()
    assert not runtime.threads_exited([11], 0.01, tasks=tmp_path)
    assert runtime.threads_exited([11], 0.01, tasks=tmp_path / "no-such-folder")
