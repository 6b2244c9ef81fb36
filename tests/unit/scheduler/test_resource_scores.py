"""kube-scheduler's integer resource scores (``plugins/support/resource_scores.py``).

The tables are kube-scheduler v1.37's ``TestLeastAllocatedScoringStrategy`` and
``TestNodeResourcesBalancedAllocation`` cases (inputs and expected scores) with the resources
Volcano's nodeorder configures (LeastAllocated: cpu and memory weighted 50 each; balanced:
cpu, memory and nvidia.com/gpu). Then a near tie that the old float scores broke the other
way.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.scheduler.helpers import filters_only_conf
from tests.unit.scheduler.objects import node, pod, podgroup
from volcano_py.scheduler.api.node_info import NodeInfo
from volcano_py.scheduler.api.task_info import TaskInfo
from volcano_py.scheduler.plugins.support.resource_scores import (
    balanced_allocation,
    least_allocated,
)
from volcano_py.scheduler.simulator import Simulator

JSON = dict[str, Any]
GPU = "nvidia.com/gpu"


def _c(cpu: str | None = None, memory: str | None = None, gpu: str | None = None) -> JSON:
    """One container asking exactly the given requests (a missing key is not asked)."""
    asked = {"cpu": cpu, "memory": memory, GPU: gpu}
    return {
        "name": "c",
        "resources": {"requests": {k: v for k, v in asked.items() if v is not None}},
    }


def _pod(name: str, containers: list[JSON], node_name: str | None = None) -> JSON:
    obj = pod(
        name,
        None if node_name else "g",
        node_name=node_name,
        phase="Running" if node_name else "Pending",
    )
    obj["spec"]["containers"] = containers
    return obj


def _nodes(
    sizes: list[tuple[str, str, int]], existing: list[tuple[str, list[JSON]]]
) -> list[NodeInfo]:
    infos = []
    for i, (cpu, memory, gpus) in enumerate(sizes, start=1):
        allocatable: dict[str, Any] = {"cpu": cpu, "memory": memory}
        if gpus:
            allocatable[GPU] = gpus
        info = NodeInfo(node(f"node{i}", allocatable))
        for j, (on, containers) in enumerate(existing):
            if on == info.name:
                info.add_task(TaskInfo(_pod(f"e{j}", containers, node_name=on)))
        infos.append(info)
    return infos


TWO_CONTAINERS = [_c("1000", "2000"), _c("2000", "3000")]
LEAST_ALLOCATED = [
    ("nothing-scheduled-nothing-requested", [], [("4000", "10000", 0)] * 2, [], [100, 100]),
    (
        "nothing-scheduled-differently-sized-nodes",
        TWO_CONTAINERS,
        [("4000", "10000", 0), ("6000", "10000", 0)],
        [],
        [37, 50],
    ),
    (
        "no-resources-requested-pods-scheduled",
        [],
        [("4000", "10000", 0)] * 2,
        [("node1", []), ("node1", []), ("node2", []), ("node2", [])],
        [100, 100],
    ),
    (
        "no-resources-requested-pods-scheduled-with-resources",
        [],
        [("10000", "20000", 0)] * 2,
        [
            ("node1", [_c("3000", "0")]),
            ("node1", [_c("3000", "0")]),
            ("node2", [_c("3000", "0")]),
            ("node2", [_c("3000", "5000")]),
        ],
        [70, 57],
    ),
    (
        "resources-requested-pods-scheduled-with-resources",
        TWO_CONTAINERS,
        [("10000", "20000", 0)] * 2,
        [("node1", [_c("3000", "0")]), ("node2", [_c("3000", "5000")])],
        [57, 45],
    ),
    (
        "differently-sized-nodes",
        TWO_CONTAINERS,
        [("10000", "20000", 0), ("10000", "50000", 0)],
        [("node1", [_c("3000", "0")]), ("node2", [_c("3000", "5000")])],
        [57, 60],
    ),
    (
        "requested-resources-exceed-node-capacity",
        [_c("3000", "0")],
        [("4000", "10000", 0)] * 2,
        [("node1", [_c("3000", "0")]), ("node2", [_c("3000", "5000")])],
        [50, 25],
    ),
]

MILLI_TWO = [_c("1000m", "2000"), _c("2000m", "3000")]
CPU_ONLY = [_c("1000m"), _c("2000m")]
BALANCED = [
    ("nothing-requested-skipped", [], [("4", "10000", 0)] * 2, [], [0, 0]),
    (
        "differently-sized-nodes",
        MILLI_TWO,
        [("4", "10000", 0), ("6", "10000", 0)],
        [],
        [68, 75],
    ),
    (
        "pods-scheduled-with-resources",
        MILLI_TWO,
        [("10", "20000", 0)] * 2,
        [("node1", CPU_ONLY), ("node2", MILLI_TWO)],
        [73, 74],
    ),
    (
        "pods-scheduled-differently-sized-nodes",
        MILLI_TWO,
        [("10", "20000", 0), ("10", "50000", 0)],
        [("node1", CPU_ONLY), ("node2", MILLI_TWO)],
        [73, 70],
    ),
    (
        "nodes-to-reach-min-max-score",
        [_c(memory="2000"), _c(memory="3000")],
        [("3", "5000", 0)] * 2,
        [("node1", CPU_ONLY)],
        [100, 50],
    ),
    (
        "requested-resources-at-node-capacity",
        CPU_ONLY,
        [("6", "10000", 0)] * 2,
        [("node1", CPU_ONLY), ("node2", MILLI_TWO)],
        [62, 62],
    ),
    (
        "scalar-resource-counted-when-requested",
        [_c("0", "0", "1")],
        [("3500m", "40000", 8)] * 2,
        [("node1", [_c("1000m", "2000"), _c("2000m", "3000", "3")]), ("node2", MILLI_TWO)],
        [75, 76],
    ),
    (
        "scalar-resource-ignored-when-not-requested",
        MILLI_TWO,
        [("3500m", "40000", 8), ("3500m", "40000", 0)],
        [],
        [56, 56],
    ),
]


def _params(table: list[Any]) -> list[Any]:
    return [pytest.param(*case[1:], id=case[0]) for case in table]


@pytest.mark.parametrize(("containers", "sizes", "existing", "scores"), _params(LEAST_ALLOCATED))
def test_kube_scheduler_least_allocated_cases(
    containers: list[JSON], sizes: list[Any], existing: list[Any], scores: list[int]
) -> None:
    task = TaskInfo(_pod("p", containers))
    assert [least_allocated(task, n) for n in _nodes(sizes, existing)] == scores


@pytest.mark.parametrize(("containers", "sizes", "existing", "scores"), _params(BALANCED))
def test_kube_scheduler_balanced_allocation_cases(
    containers: list[JSON], sizes: list[Any], existing: list[Any], scores: list[int]
) -> None:
    task = TaskInfo(_pod("p", containers))
    assert [balanced_allocation(task, n) for n in _nodes(sizes, existing)] == scores


def test_a_near_tie_breaks_as_kube_scheduler_scores_it() -> None:
    # n-a: cpu 3/10 free -> 30, memory 7/10 -> 70: 50.
    # n-b: cpu 2.95/10 -> 29 (float 29.5), memory 7244/10240 -> 70 (float 70.7): 49
    # (float 50.1). kube-scheduler (and Volcano) pick n-a; float scores picked n-b.
    objects = [
        node("n-a", {"cpu": "10", "memory": "10Gi"}),
        node("n-b", {"cpu": "10", "memory": "10Gi"}),
        _pod("held-a", [_c("6", "2Gi")], node_name="n-a"),
        _pod("held-b", [_c("6050m", "1972Mi")], node_name="n-b"),
        podgroup("g", 1),
        _pod("p", [_c("1", "1Gi")]),
    ]
    conf = filters_only_conf({"balancedresource.weight": 0})
    result = Simulator(objects, conf).run()
    assert result.bindings == {"default/p": "n-a"}
