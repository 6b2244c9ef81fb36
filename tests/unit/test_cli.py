from __future__ import annotations

import subprocess
import sys

import pytest

from volcano_py import __version__
from volcano_py.cli import build_parser, main


def test_cli_without_command_prints_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "usage: volcano-py" in capsys.readouterr().err


def test_cli_version_flag_prints_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"volcano-py {__version__}"


def test_cli_every_registered_subcommand_has_a_handler() -> None:
    parser = build_parser()
    subparsers = next(a for a in parser._actions if a.dest == "command")
    for name, sub in subparsers.choices.items():  # type: ignore[union-attr]
        assert sub.get_default("handler") is not None, name


@pytest.mark.timeout(20)
def test_cli_python_dash_m_entry_point_shows_help() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "volcano_py", "--help"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0
    assert "usage: volcano-py" in result.stdout


def test_manager_worker_counts_reach_the_options() -> None:
    from volcano_py.commands.manager import options_from
    from volcano_py.scheduler.writer import DEFAULT_BIND_WORKERS

    parser = build_parser()
    defaults = options_from(parser.parse_args(["manager"]))
    assert (defaults.bind_workers, defaults.worker_threads_for_podgroup) == (
        DEFAULT_BIND_WORKERS,
        5,
    )
    tuned = options_from(
        parser.parse_args(["manager", "--bind-workers=4", "--worker-threads-for-podgroup=2"])
    )
    assert (tuned.bind_workers, tuned.worker_threads_for_podgroup) == (4, 2)


def test_help_shows_no_rest_markup(capsys: pytest.CaptureFixture[str]) -> None:
    from volcano_py.cli import build_parser

    parser = build_parser()
    for name in ("tree", "simulate", "explain", "validate", "manager", "webhook", "discover"):
        with pytest.raises(SystemExit):
            parser.parse_args([name, "--help"])
        out = capsys.readouterr().out
        assert "``" not in out, name
        assert ":func:`" not in out, name


def test_webhook_takes_the_managers_flag_spellings_and_its_own() -> None:
    from volcano_py.cli import build_parser

    parser = build_parser()
    common = ["webhook", "--cert-dir", "certs"]
    long = parser.parse_args(
        [
            *common,
            "--webhook-port",
            "9443",
            "--webhook-host",
            "127.0.0.1",
            "--webhook-threads",
            "4",
            "--webhook-service",
            "svc",
            "--webhook-configuration",
            "cfg",
            "--webhook-access-log",
        ]
    )
    short = parser.parse_args(
        [
            *common,
            "--port",
            "9443",
            "--host",
            "127.0.0.1",
            "--threads",
            "4",
            "--service",
            "svc",
            "--webhook-config",
            "cfg",
            "--access-log",
        ]
    )
    for args in (long, short):
        assert (args.port, args.host, args.threads, args.service) == (9443, "127.0.0.1", 4, "svc")
        assert (args.webhook_config, args.access_log) == ("cfg", True)
