"""``volcano-py manager --ui``: on by default, ``--ui=false`` turns the view off."""

from __future__ import annotations

import pytest

from volcano_py.cli import build_parser
from volcano_py.commands.manager import options_from


@pytest.mark.parametrize(
    ("argv", "enabled"),
    [([], True), (["--ui=true"], True), (["--ui=false"], False), (["--ui", "0"], False)],
    ids=["default", "true", "false", "zero"],
)
def test_manager_ui_flag_reaches_the_options(argv: list[str], enabled: bool) -> None:
    options = options_from(build_parser().parse_args(["manager", *argv]))
    assert options.ui_enabled is enabled


def test_manager_ui_flag_rejects_a_non_boolean(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["manager", "--ui=maybe"])
    assert "--ui: expected true or false, got 'maybe'" in capsys.readouterr().err
