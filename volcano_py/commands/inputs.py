"""Reading the files commands are given: one line naming the file (and line) when it fails.

``read_text`` turns a missing, unreadable or non-UTF-8 file into ``InputError`` naming it
(``-`` reads stdin); ``yaml_problem`` renders a YAML/JSON parse error as ``<file>:<line>:
invalid YAML/JSON: <problem>`` on one line instead of PyYAML's multi-line report.

Not a subcommand itself (it is not listed in ``COMMANDS``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml


class InputError(Exception):
    """A file that cannot be read or parsed; the message names the file and line."""


def read_text(path: str) -> str:
    """The text of ``path`` (``-``: stdin); ``InputError`` when it cannot be read as UTF-8."""
    try:
        return sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror or e}") from e
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: cannot read: not UTF-8 text (byte {e.start})") from e


def yaml_problem(path: str, error: yaml.YAMLError) -> str:
    """``<file>:<line>: invalid YAML/JSON: <problem>`` for a parse error."""
    mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    where = f"{path}:{mark.line + 1}" if mark is not None else path
    problem = getattr(error, "problem", None) or " ".join(str(error).split())
    return f"{where}: invalid YAML/JSON: {problem}"
