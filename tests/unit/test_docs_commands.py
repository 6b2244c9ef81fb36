"""Every command README.md and docs/*.md write runs as written from a fresh clone.

``tests/docblocks.py`` finds the commands and the output shown under them. Each command is
checked for what it names: the program (``.venv/bin/volcano-py``, since a fresh clone has no
``volcano-py`` on ``PATH``), the subcommand and flags (against its ``--help``), the Makefile
target, the Python module, the files. Commands that need no cluster (``validate``,
``discover``, ``simulate``, ``explain``/``tree`` with ``--cluster``) are run from the
repository root, and where the doc shows their output, it must be what they print. Commands
that need a cluster (``kubectl``, ``make run``, live ``tree``) get the checks without running.
"""

from __future__ import annotations

import functools
import glob
import importlib.util
import itertools
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docblocks import ROOT, DocCommand, doc_commands, doc_files, output_matches, path_words

VOLCANO_PY = ".venv/bin/volcano-py"
OFFLINE = {"validate", "discover", "simulate"}
NEEDS_CLUSTER_FILE = {"explain", "tree"}
COMMANDS = [command for path in doc_files() for command in doc_commands(path)]


def _runnable_offline(command: DocCommand) -> bool:
    segments = command.segments(optional=False)
    if (
        not command.runnable
        or len(segments) != 1
        or segments[0][0] not in {VOLCANO_PY, "volcano-py"}
    ):
        return False
    words = segments[0]
    sub = words[1] if len(words) > 1 else ""
    return sub in OFFLINE or (sub in NEEDS_CLUSTER_FILE and "--cluster" in words)


OFFLINE_COMMANDS = [command for command in COMMANDS if _runnable_offline(command)]


@functools.cache
def _help(sub: str) -> str:
    program = Path(sys.executable).parent / "volcano-py"
    done = subprocess.run(
        [str(program), *([sub] if sub else []), "--help"],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    return done.stdout + done.stderr


def _make_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text()
    return set(re.findall(r"^([\w.-]+):", text, re.MULTILINE))


def _expanded(words: list[str]) -> list[str]:
    out = []
    for word in words:
        matches = sorted(glob.glob(word, root_dir=ROOT)) if "*" in word else []
        out.extend(matches or [word])
    return out


def _problems(words: list[str], before: list[list[str]]) -> list[str]:
    program, args = words[0], words[1:]
    problems = []
    webhook = program in {VOLCANO_PY, "volcano-py"} and args[:1] == ["webhook"]
    if webhook and "--self-signed" not in args and ["make", "certs"] not in before:
        problems.append("webhook: a fresh clone has no certificates: --self-signed")
    if program in {"volcano-py", "python", "python3"}:
        problems.append(f"{program!r} is not on PATH in a fresh clone: write .venv/bin/{program}")
    files = path_words(args)
    if program == "kubectl":
        # ``-f -`` reads the manifest from standard input (a here-document), not a file
        files = [a for f, a in itertools.pairwise(args) if f in {"-f", "-k"} and a != "-"]
    for name in files:
        if not glob.glob(name, root_dir=ROOT):
            problems.append(f"{name}: no such file in the repository")
    if program == "make":
        targets = [a for a in args if "=" not in a and not a.startswith("-")]
        problems += [f"make {t}: no such target" for t in targets if t not in _make_targets()]
    module = args[1] if program == ".venv/bin/python" and args[:1] == ["-m"] else ""
    if module and importlib.util.find_spec(module) is None:
        problems.append(f"python -m {args[1]}: no such module")
    if program in {VOLCANO_PY, "volcano-py"} and args:
        problems += _volcano_py_problems(args)
    return problems


def _volcano_py_problems(args: list[str]) -> list[str]:
    sub = args[0]
    if sub.startswith("-"):
        text = _help("")
    else:
        if not re.search(rf"^\s+{re.escape(sub)}\s", _help(""), re.MULTILINE):
            return [f"volcano-py {sub}: no such subcommand"]
        text = _help(sub)
    problems = []
    for word in args:
        flag = word.split("=", 1)[0]
        if (
            flag.startswith("-")
            and flag != "-"
            and not re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", text)
        ):
            problems.append(f"volcano-py {sub}: no flag {flag}")
    return problems


def test_the_docs_have_commands_and_some_run_offline() -> None:
    assert len(COMMANDS) >= 20
    assert len(OFFLINE_COMMANDS) >= 5


@pytest.mark.timeout(60)
@pytest.mark.parametrize("command", COMMANDS, ids=[c.where for c in COMMANDS])
def test_a_doc_command_names_only_what_exists(command: DocCommand) -> None:
    segments = command.segments()
    problems = [p for i, words in enumerate(segments) for p in _problems(words, segments[:i])]
    assert problems == [], f"{command.where}: {command.text}"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("command", OFFLINE_COMMANDS, ids=[c.where for c in OFFLINE_COMMANDS])
def test_an_offline_doc_command_runs_and_prints_what_the_doc_shows(command: DocCommand) -> None:
    words = _expanded(command.segments(optional=False)[0])
    program = Path(sys.executable).parent / "volcano-py"
    done = subprocess.run(
        [str(program), *words[1:]], capture_output=True, text=True, check=False, cwd=ROOT
    )
    denied_shown = any(line.startswith("DENIED") for line in command.shown)
    assert done.returncode in ({0, 1} if denied_shown else {0}), (
        f"{command.where}: {command.text}\n{done.stderr}"
    )
    if command.shown:
        actual = (done.stdout + done.stderr).splitlines()
        assert output_matches(command.shown, actual), (
            f"{command.where}: {command.text}\nthe doc shows:\n"
            + "\n".join(command.shown)
            + "\nit prints:\n"
            + "\n".join(actual)
        )


@pytest.mark.parametrize(
    ("shown", "actual", "matches"),
    [
        (["OK a", "OK b"], ["OK a", "OK b"], True),
        (["OK a"], ["OK a", "WARNING a"], False),
        (["OK ...: x"], ["OK rack-1: x"], True),
        (["A", "...", "Z"], ["A", "b", "c", "Z"], True),
        (["A", "...", "Z"], ["A", "Z"], True),
        (["A ... B"], ["A B x"], False),
    ],
    ids=["equal", "a-line-missing", "dots-in-a-line", "dots-lines", "dots-no-lines", "tail"],
)
def test_shown_output_matches_with_dots_as_wildcards(
    shown: list[str], actual: list[str], matches: bool
) -> None:
    assert output_matches(shown, actual) is matches
