"""Reading the files commands are given: one line naming the file (and line) when it fails.

``read_text`` turns a missing, unreadable, non-UTF-8 or oversized (``FILE_LIMITS``) file
into ``InputError`` naming it (``-`` reads stdin); ``yaml_problem`` renders a YAML/JSON
parse error as ``<file>:<line>: invalid YAML/JSON: <problem>`` on one line instead of
PyYAML's multi-line report (``volcano_py.api.safeload.yaml_message``).

Not a subcommand itself (it is not listed in ``COMMANDS``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

from volcano_py.api.safeload import FILE_LIMITS, LoadError, check_size, yaml_message


class InputError(Exception):
    """A file that cannot be read or parsed; the message names the file and line."""


def read_text(path: str) -> str:
    """The text of ``path`` (``-``: stdin); ``InputError`` when it cannot be read as UTF-8."""
    try:
        cap = FILE_LIMITS.max_bytes
        if path == "-":
            text = sys.stdin.read(cap + 1)  # characters: at least as many bytes
        else:
            with Path(path).open(encoding="utf-8") as f:
                text = f.read(cap + 1)
        check_size(text, path, FILE_LIMITS)
        return text
    except LoadError as e:
        raise InputError(str(e)) from None
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror or e}") from e
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: cannot read: not UTF-8 text (byte {e.start})") from e


def yaml_problem(path: str, error: yaml.YAMLError) -> str:
    """``<file>:<line>: invalid YAML/JSON: <problem>`` for a parse error (or a passed cap)."""
    return yaml_message(path, error)
