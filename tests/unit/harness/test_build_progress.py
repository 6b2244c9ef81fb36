"""The cold build's progress lines (``devcluster.buildprogress.follow``), clock injected."""

from __future__ import annotations

from devcluster.buildprogress import PROGRESS_S, follow, is_package


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
