"""``make run``'s choice of cluster: a $KUBECONFIG it did not create is never used unasked."""

from __future__ import annotations

import pytest

from devcluster.devrun import choose_cluster, made_by_run

OURS = "/tmp/volcano-py-run-abc123/kubeconfig"
REAL = "/home/me/.kube/config"


def test_a_kubeconfig_in_a_run_folder_is_ours_and_any_other_is_not() -> None:
    assert made_by_run(OURS)
    assert not made_by_run(REAL)
    assert not made_by_run("/tmp/volcano-py-run-abc123/sub/kubeconfig")


@pytest.mark.parametrize(
    ("mode", "env", "demo", "want"),
    [
        ("auto", None, False, None),  # nothing set: a local cluster
        ("auto", OURS, False, None),  # a previous make run's: a (new) local cluster
        ("local", REAL, False, None),  # asked for local
        ("existing", REAL, False, REAL),  # asked for the real one
        ("auto", REAL, True, None),  # make demo is always local
    ],
)
def test_choose_cluster_runs_where_asked(
    mode: str, env: str | None, demo: bool, want: str | None
) -> None:
    assert choose_cluster(mode, env, demo=demo) == (want, "")


def test_a_foreign_kubeconfig_is_refused_saying_how_to_choose() -> None:
    kubeconfig, refusal = choose_cluster("auto", REAL, demo=False)
    assert kubeconfig is None
    assert REAL in refusal
    assert "make run CLUSTER=existing" in refusal
    assert "make run CLUSTER=local" in refusal


def test_existing_without_a_kubeconfig_is_refused() -> None:
    kubeconfig, refusal = choose_cluster("existing", None, demo=False)
    assert kubeconfig is None
    assert "$KUBECONFIG" in refusal
