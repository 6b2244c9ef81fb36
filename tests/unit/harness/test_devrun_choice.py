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


def test_manager_args_are_appended_to_the_manager_command_line_as_a_shell_splits_them() -> None:
    from pathlib import Path

    from devcluster.devrun import manager_argv

    argv = manager_argv("/k", Path("/c"), 1, 2, local=False,
                        extra="--controllers=*,-job-controller -v '4'")  # fmt: skip
    assert argv[-3:] == ["--controllers=*,-job-controller", "-v", "4"]
    assert manager_argv("/k", Path("/c"), 1, 2, local=False)[-1] == "--metrics-address=127.0.0.1:2"


def test_controllers_without_star_enable_only_what_they_name() -> None:
    from volcano_py.controllers.builtin import register_builtin_controllers
    from volcano_py.controllers.framework import ControllerRegistry

    registry = ControllerRegistry()
    register_builtin_controllers(registry)
    assert registry.enabled(["-job-controller"]) == []  # docs/vcjob.md: every one off
    assert "job-controller" not in registry.enabled(["*", "-job-controller"])
    assert len(registry.enabled(["*", "-job-controller"])) == len(registry.names()) - 1
