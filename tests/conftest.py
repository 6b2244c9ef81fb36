"""Test-wide configuration: markers by path, the unit tests' hang guard, hypothesis settings.

No wall-clock limit decides a unit test's verdict: the suite must pass on a loaded 2-core
machine (a busy laptop, a shared CI runner). ``UNIT_TIMEOUT_S`` only stops a test that hangs;
how fast the unit tests are is a report (``make unit`` prints the slowest ten), and speed
itself is measured in ``bench/``. Hypothesis runs without deadlines and without its
too-slow health check, for the same reason (the ``volcano-py`` profile).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

TESTS = Path(__file__).parent
UNIT_TIMEOUT_S = 60

settings.register_profile("volcano-py", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("volcano-py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test by the folder it lives in; unit tests get a 60 s hang guard."""
    for item in items:
        parts = Path(str(item.fspath)).relative_to(TESTS).parts
        kind = parts[0] if parts else ""
        if kind in {"unit", "integration", "e2e"}:
            item.add_marker(getattr(pytest.mark, kind))
        if kind == "unit" and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(UNIT_TIMEOUT_S))
