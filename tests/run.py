"""Run pytest on the given paths; an empty selection (pytest's exit 5) is reported, not failed.

``make test`` always collects tests, so exit 5 there can only come from a narrower
``PYTEST_ARGS`` selection (``-k``) or an empty suite such as ``tests/e2e`` before it has
tests; both are worth a loud line, neither is a failure of the code under test.
"""

from __future__ import annotations

import sys

import pytest

NO_TESTS_COLLECTED = 5


def main(argv: list[str]) -> int:
    """Run pytest with ``argv`` and translate its exit code."""
    code = int(pytest.main(argv))
    if code == NO_TESTS_COLLECTED:
        print(f"pytest collected no tests for {' '.join(argv)!r}", file=sys.stderr)
        return 0
    return code


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
