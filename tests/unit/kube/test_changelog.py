"""``ChangeLog``: a line per (object, message) once per change; cycles and the cap forget."""

from __future__ import annotations

import logging

import pytest

from volcano_py.kube.changelog import ChangeLog

log = logging.getLogger("test.changelog")
DROP = "job %s: dropping AllocatedHyperNode %s"


def _lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == log.name]


def test_changelog_writes_a_repeated_line_once_and_again_when_its_text_changes(
    caplog: pytest.LogCaptureFixture,
) -> None:
    notes = ChangeLog()
    with caplog.at_level(logging.INFO):
        for _ in range(54):
            notes.new_cycle()
            notes.info(log, "ns/pg", DROP, "ns/pg", "rack-1")
        notes.new_cycle()
        notes.info(log, "ns/pg", DROP, "ns/pg", "rack-2")
        notes.info(log, "ns/other", DROP, "ns/other", "rack-2")
    assert _lines(caplog) == [
        "job ns/pg: dropping AllocatedHyperNode rack-1",
        "job ns/pg: dropping AllocatedHyperNode rack-2",
        "job ns/other: dropping AllocatedHyperNode rack-2",
    ]


def test_changelog_keeps_different_messages_about_one_object_apart(
    caplog: pytest.LogCaptureFixture,
) -> None:
    notes = ChangeLog()
    with caplog.at_level(logging.INFO):
        for _ in range(3):
            notes.new_cycle()
            notes.info(log, "ns/pg", "job %s: tier name %r unknown", "ns/pg", "spine")
            notes.warning(log, "ns/pg", DROP, "ns/pg", "rack-1")
    assert len(_lines(caplog)) == 2
    assert [r.levelname for r in caplog.records] == ["INFO", "WARNING"]


def test_changelog_says_it_again_after_a_cycle_without_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    notes = ChangeLog()
    with caplog.at_level(logging.INFO):
        notes.new_cycle()
        assert notes.info(log, "ns/pg", DROP, "ns/pg", "rack-1")
        notes.new_cycle()
        assert not notes.info(log, "ns/pg", DROP, "ns/pg", "rack-1")
        notes.new_cycle()  # a cycle where the condition cleared
        notes.new_cycle()
        assert notes.info(log, "ns/pg", DROP, "ns/pg", "rack-1")
    assert len(_lines(caplog)) == 2


def test_changelog_forgets_deleted_objects_and_stays_under_its_cap() -> None:
    notes = ChangeLog(capacity=100)
    for i in range(1000):
        notes.error(log, f"ns/pg-{i}", DROP, i, "x")
    assert len(notes) == 100
    assert notes.error(log, "ns/pg-0", DROP, 0, "x")  # the oldest went first
    assert not notes.error(log, "ns/pg-999", DROP, 999, "x")
    notes.forget("ns/pg-999")
    assert notes.error(log, "ns/pg-999", DROP, 999, "x")
    notes.new_cycle()
    notes.new_cycle()
    assert len(notes) == 0  # nothing said for a whole cycle: forgotten


def test_changelog_does_not_remember_lines_below_the_logger_level(
    caplog: pytest.LogCaptureFixture,
) -> None:
    notes = ChangeLog()
    with caplog.at_level(logging.WARNING):
        assert not notes.info(log, "ns/pg", DROP, "ns/pg", "rack-1")
    assert len(notes) == 0
    with caplog.at_level(logging.INFO):
        assert notes.info(log, "ns/pg", DROP, "ns/pg", "rack-1")
