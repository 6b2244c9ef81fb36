"""What a starting manager imports before its informers' lists can start (issue 30).

``volcano-py manager`` starts its lists as soon as its flags are parsed (kube/prefetch.py), and
the process's first bind waits for everything imported on the way: the command line imports
only the named command, the manager's module keeps flask, cel-python, urllib3 and the
kubernetes package off that path (they are built after the first cycle or when used), and
the controllers are imported only when the worker builds them, after the first cycle.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("flask", "celpy", "lark", "urllib3", "kubernetes", "jinja2")
CONTROLLER_MODULES = {
    "volcano_py.controllers.hypernode.controller",
    "volcano_py.controllers.job.controller",
    "volcano_py.controllers.podgroup.controller",
}


def imported_after(code: str) -> set[str]:
    probe = code + "\nimport sys\nprint(' '.join(sorted(sys.modules)))\n"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


@pytest.mark.timeout(60)
def test_the_manager_command_line_imports_no_other_command_and_nothing_heavy() -> None:
    modules = imported_after(
        "from volcano_py.cli import build_parser\nbuild_parser('manager').parse_args(['manager'])\n"
    )
    assert "volcano_py.commands.manager" in modules
    others = {m for m in modules if m.startswith("volcano_py.commands.")} - {
        "volcano_py.commands.manager",
        "volcano_py.commands.argtypes",
        "volcano_py.commands.cluster_access",
        "volcano_py.commands.ports",
    }
    assert others == set()
    assert "volcano_py.manager" not in modules  # imported by run(), after the lists started
    assert {m for m in modules if m.split(".")[0] in HEAVY} == set()


@pytest.mark.timeout(60)
def test_the_manager_module_leaves_the_webhook_and_ufm_libraries_for_later() -> None:
    modules = imported_after("import volcano_py.manager\n")
    assert {m for m in modules if m.split(".")[0] in HEAVY} == set()
    assert modules & CONTROLLER_MODULES == set()


@pytest.mark.timeout(60)
def test_checking_the_controllers_flag_imports_no_controller_building_one_imports_it() -> None:
    modules = imported_after(
        "from volcano_py.commands.manager import check_flags\n"
        "from volcano_py.manager import ManagerOptions\n"
        "assert check_flags(ManagerOptions(controllers=['*', '-job-controller'])) is None\n"
        "assert 'unknown controller' in check_flags(ManagerOptions(controllers=['nope']))\n"
    )
    assert modules & CONTROLLER_MODULES == set()
    modules = imported_after(
        "from volcano_py.controllers.builtin import register_builtin_controllers\n"
        "from volcano_py.controllers.framework import ControllerRegistry\n"
        "registry = ControllerRegistry()\n"
        "register_builtin_controllers(registry)\n"
        "assert registry.get('pg-controller')().name == 'pg-controller'\n"
    )
    assert modules & CONTROLLER_MODULES == {"volcano_py.controllers.podgroup.controller"}


def test_help_still_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    from volcano_py.cli import main

    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for name in ("manager", "webhook", "validate", "discover", "simulate", "explain", "tree"):
        assert name in out
