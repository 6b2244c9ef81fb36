"""Test helpers for Grafana dashboards and Prometheus text: which metric names they use."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

METRIC = re.compile(r"\bvolcano_[a-z0-9_]+")


def _exprs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("expr", "query") and isinstance(value, str):
                yield value
            else:
                yield from _exprs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _exprs(item)


def dashboard_metric_names(path: Path) -> set[str]:
    """Every ``volcano_*`` name a dashboard's queries (``expr``, templating ``query``) use."""
    return {
        m.group(0) for expr in _exprs(json.loads(path.read_text())) for m in METRIC.finditer(expr)
    }


def sampled_names(text: str) -> set[str]:
    """Names with at least one sample line in a Prometheus text exposition."""
    return {m.group(1) for m in re.finditer(r"^([a-zA-Z_:][\w:]*)[{ ]", text, re.MULTILINE)}
