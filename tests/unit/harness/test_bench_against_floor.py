"""bench_vs_kube_scheduler prints every scheduler that ran against the bind floor."""

from __future__ import annotations

import re

import pytest

import bench.bench_vs_kube_scheduler as bench

T = bench.Timing


def _rows(with_anchor: bool) -> list[tuple[int, str, int, dict[str, bench.Timing]]]:
    runs = [
        {"volcano-py": T(3.0, 0.5), "kube-scheduler": T(5.0, 0.4), "bind-floor": T(2.1, 0.1)},
        {"bind-floor": T(2.2, 0.2), "kube-scheduler": T(4.2, 0.2), "volcano-py": T(2.6, 0.4)},
    ]
    if not with_anchor:
        for run in runs:
            del run["kube-scheduler"]
    return [(500, "gangs", i + 1, run) for i, run in enumerate(runs)]


def _summary(out: str, kind: str) -> tuple[float, float]:
    found = re.search(
        rf"{kind} against the floor.*all bound ([\d.]+)x, first to last ([\d.]+)x", out
    )
    assert found, out
    return float(found.group(1)), float(found.group(2))


def test_the_anchor_is_printed_beside_volcano_py_with_its_own_ratios(
    capsys: pytest.CaptureFixture[str],
) -> None:
    bench._against_floor(_rows(with_anchor=True))
    out = capsys.readouterr().out
    # run 1, kube-scheduler: 5.0 / 2.1 all bound, (5.0 - 0.4) / (2.1 - 0.1) first to last
    assert re.search(
        r"1 kube-scheduler\s+5\.00 / 2\.10\s+2\.38\s+4\.60 / 2\.00\s+2\.30\s*$", out, re.M
    )
    # the goals belong to volcano-py's rows only
    assert all("goals" in line for line in out.splitlines() if " volcano-py " in line)
    assert not any("goals" in line for line in out.splitlines() if "kube-scheduler" in line)
    total, spread = _summary(out, "kube-scheduler")
    assert total == pytest.approx(((5.0 / 2.1) * (4.2 / 2.2)) ** 0.5, abs=0.005)
    assert spread == pytest.approx(((4.6 / 2.0) * (4.0 / 2.0)) ** 0.5, abs=0.005)
    total, spread = _summary(out, "volcano-py")
    assert total == pytest.approx(((3.0 / 2.1) * (2.6 / 2.2)) ** 0.5, abs=0.005)
    assert spread == pytest.approx(((2.5 / 2.0) * (2.2 / 2.0)) ** 0.5, abs=0.005)


def test_without_the_anchor_only_volcano_py_is_printed(capsys: pytest.CaptureFixture[str]) -> None:
    bench._against_floor(_rows(with_anchor=False))
    out = capsys.readouterr().out
    assert "kube-scheduler" not in out
    assert len(re.findall(r"^\s+500 gangs\s+\d volcano-py ", out, re.M)) == 2
    _summary(out, "volcano-py")
