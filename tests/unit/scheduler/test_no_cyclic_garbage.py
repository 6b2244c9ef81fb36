"""A scheduling cycle leaves no reference cycles behind (issue 17, R12).

The manager runs full garbage collections rarely (``volcano_py/kube/runtime.py``), so a cycle
that survives a young pass holds its whole graph (for a session: the snapshot, every job, task
and pod of the cycle) until one runs. The churn soak saw those pile up. Every scenario is
scheduled with the collector off; a collection afterwards must find nothing unreachable.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from tests.unit.scheduler.objects import expand
from tests.unit.scheduler.test_scenarios import SCENARIOS
from volcano_py.scheduler.framework.registry import load_conf
from volcano_py.scheduler.scheduler import builtin_registries
from volcano_py.scheduler.simulator import Simulator, load_scheduler_conf


@pytest.fixture
def collector_off() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


CHUNK = 8
CHUNKS = [SCENARIOS[i : i + CHUNK] for i in range(0, len(SCENARIOS), CHUNK)]


@pytest.mark.parametrize("paths", CHUNKS, ids=[f"{c[0].stem}..{c[-1].stem}" for c in CHUNKS])
def test_scheduling_every_scenario_leaves_no_cyclic_garbage(
    collector_off: None, paths: list[Any]
) -> None:
    # In chunks of CHUNK scenarios: a cycle left behind is reported with the few scenarios
    # that made it, and no chunk comes near the hang guard however loaded the machine is.
    scenarios: list[dict[str, Any]] = [yaml.safe_load(p.read_text()) for p in paths]
    plugins, actions = builtin_registries()
    bound = 0
    gc.collect()
    for scenario in scenarios:
        conf = load_scheduler_conf(None)
        if scenario.get("conf"):
            conf = load_conf(scenario["conf"], plugins, actions)
        bound += len(Simulator(expand(scenario["cluster"]), conf).run().bindings)
    assert bound > 0  # the scenarios really scheduled
    assert gc.collect() == 0
