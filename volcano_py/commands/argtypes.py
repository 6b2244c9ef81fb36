"""argparse helpers: ``type=`` functions for numeric flags, and flags several commands share.

A bad value is argparse's usage error: ``--schedule-period -1`` or ``--webhook-threads 0``
would otherwise get past the parser and fail later inside a thread (or never); these reject
them up front with the flag's name, exit 2, the way argparse reports ``invalid int value``.
"""

from __future__ import annotations

import argparse
import math
import re
from typing import TypeVar

_N = TypeVar("_N", int, float)


def add_log_format_argument(parser: argparse.ArgumentParser) -> None:
    """``--log-format text|json`` (``volcano_py.logsetup``)."""
    parser.add_argument(
        "--log-format",
        choices=("text", "json"),
        default="text",
        help="text lines or one JSON object per line (gunicorn's lines included)",
    )


def boolean(value: str) -> bool:
    """``true``/``1``/``yes`` or ``false``/``0``/``no``, any case (a ``BOOL`` flag)."""
    lowered = value.lower()
    if lowered in {"true", "1", "yes"}:
        return True
    if lowered in {"false", "0", "no"}:
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {value!r}")


def positive_float(value: str) -> float:
    """A number of seconds (or a rate) above zero."""
    number = _float(value)
    if number <= 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0, got {value!r}")
    return number


def non_negative_float(value: str) -> float:
    """A number of seconds, zero allowed."""
    return _not_negative(_float(value), value)


def positive_int(value: str) -> int:
    """A count of threads or workers, at least 1."""
    number = _int(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value!r}")
    return number


def non_negative_int(value: str) -> int:
    """A count, zero allowed."""
    return _not_negative(_int(value), value)


def _not_negative(number: _N, value: str) -> _N:
    if number < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {value!r}")
    return number


def percentage(value: str) -> int:
    """A whole percentage, 0 to 100."""
    number = _int(value)
    if not 0 <= number <= 100:
        raise argparse.ArgumentTypeError(f"must be a percentage between 0 and 100, got {value!r}")
    return number


def port(value: str) -> int:
    """A TCP port, 0 (any free port) to 65535."""
    number = _int(value)
    if not 0 <= number <= 65535:
        raise argparse.ArgumentTypeError(f"must be a port between 0 and 65535, got {value!r}")
    return number


def _float(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {value!r}") from None
    if not math.isfinite(number):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {value!r}")
    return number


def _int(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {value!r}") from None


_REST_ROLE = re.compile(r":[a-z]+:`([^`]*)`")
_REST_LITERAL = re.compile(r"``([^`]*)``")
_REST_INTERPRETED = re.compile(r"`([^`]*)`")


def plain_text(doc: str | None) -> str | None:
    """A module docstring for ``--help``: reST inline markup (``x``, :role:`x`) left out."""
    if not doc:
        return doc
    text = _REST_ROLE.sub(r"\1", doc)
    text = _REST_LITERAL.sub(r"\1", text)
    return _REST_INTERPRETED.sub(r"\1", text)
