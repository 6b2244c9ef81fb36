"""The ops server's probe bodies stay small whatever a check reports (issue 26)."""

from __future__ import annotations

from volcano_py.ops import MAX_PROBE_LINES, _bounded


def test_probe_bodies_are_bounded_whatever_a_check_says() -> None:
    lines = _bounded(["x" * 10**6] * (MAX_PROBE_LINES + 5))
    assert len(lines) == MAX_PROBE_LINES + 1
    assert all(len(line) <= 300 for line in lines)
    assert lines[-1] == "... 5 more"
