"""No product module grows past 500 lines (issue 29): split by concept before it does."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 500


def test_no_module_of_the_product_or_the_dev_cluster_is_over_the_limit() -> None:
    long = {
        str(path.relative_to(ROOT)): lines
        for folder in ("volcano_py", "webhooks", "devcluster")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if (lines := len(path.read_text().splitlines())) > LIMIT
    }
    assert not long, f"modules over {LIMIT} lines: {long}"
