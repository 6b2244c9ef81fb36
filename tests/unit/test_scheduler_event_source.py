"""The scheduler's Events come from ``volcano``, as Volcano's scheduler's do."""

from __future__ import annotations

import pytest

from volcano_py.manager import scheduler_component


@pytest.mark.parametrize(
    ("names", "component"),
    [(("volcano",), "volcano"), (("gpu-sched",), "gpu-sched"), (("a", "b"), "volcano")],
    ids=["default", "one-custom-name", "several-names"],
)
def test_scheduler_component_is_volcanos_generate_component_name(
    names: tuple[str, ...], component: str
) -> None:
    assert scheduler_component(names) == component
