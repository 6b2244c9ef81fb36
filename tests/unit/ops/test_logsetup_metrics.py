from __future__ import annotations

import json
import logging

import pytest

from volcano_py.logsetup import JsonFormatter, level_for_verbosity
from volcano_py.metrics import REGISTRY, PrometheusQueueMetrics


@pytest.mark.parametrize(
    ("verbosity", "level"),
    [
        (0, logging.WARNING),
        (1, logging.WARNING),
        (2, logging.INFO),
        (3, logging.INFO),
        (4, logging.DEBUG),
        (5, logging.DEBUG),
    ],
    ids=["v0", "v1", "v2", "v3", "v4", "v5"],
)
def test_level_for_verbosity_maps_klog_levels(verbosity: int, level: int) -> None:
    assert level_for_verbosity(verbosity) == level


def test_json_formatter_emits_one_parseable_line_with_the_message() -> None:
    record = logging.LogRecord(
        "volcano_py.x", logging.INFO, __file__, 1, "bound %s", ("ns/p",), None
    )
    line = JsonFormatter().format(record)
    entry = json.loads(line)
    assert "\n" not in line
    assert entry["msg"] == "bound ns/p"
    assert entry["level"] == "info"
    assert entry["logger"] == "volcano_py.x"


def test_prometheus_queue_metrics_feed_the_registry() -> None:
    sink = PrometheusQueueMetrics()
    sink.added("unit-q")
    sink.added("unit-q")
    sink.depth("unit-q", 7)
    sink.retried("unit-q")
    assert REGISTRY.get_sample_value("volcano_workqueue_adds_total", {"name": "unit-q"}) == 2
    assert REGISTRY.get_sample_value("volcano_workqueue_depth", {"name": "unit-q"}) == 7
    assert REGISTRY.get_sample_value("volcano_workqueue_retries_total", {"name": "unit-q"}) == 1


def test_json_logging_turns_warnings_and_uncaught_exceptions_into_json_lines(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import sys
    import threading
    import warnings

    from volcano_py.logsetup import configure_logging

    configure_logging(2, "json")
    warnings.warn("deprecated knob", DeprecationWarning, stacklevel=1)
    worker = threading.Thread(target=lambda: 1 / 0, name="scheduler:loop")
    worker.start()
    worker.join()
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        sys.excepthook(*sys.exc_info())  # what the interpreter calls for an uncaught one
    entries = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    assert [(e["logger"], e["level"]) for e in entries] == [
        ("py.warnings", "warning"),
        ("volcano_py", "critical"),
        ("volcano_py", "critical"),
    ]
    assert "deprecated knob" in entries[0]["msg"]
    assert entries[1]["msg"] == "uncaught exception in thread scheduler:loop"
    assert "ZeroDivisionError" in entries[1]["exc"]
    assert "RuntimeError: boom" in entries[2]["exc"]
