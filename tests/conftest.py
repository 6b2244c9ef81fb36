"""Test-wide configuration: markers by path, the unit-test time limit."""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).parent
UNIT_TIMEOUT_S = 2


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test by the folder it lives in; unit tests get a 2 s limit."""
    for item in items:
        parts = Path(str(item.fspath)).relative_to(TESTS).parts
        kind = parts[0] if parts else ""
        if kind in {"unit", "integration", "e2e"}:
            item.add_marker(getattr(pytest.mark, kind))
        if kind == "unit" and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(UNIT_TIMEOUT_S))
