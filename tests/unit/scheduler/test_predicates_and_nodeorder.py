"""predicates (node affinity, taints) and nodeorder scores."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.scheduler.objects import node, pod
from volcano_py.scheduler.api.node_info import NodeInfo
from volcano_py.scheduler.api.task_info import TaskInfo
from volcano_py.scheduler.framework.arguments import Arguments
from volcano_py.scheduler.plugins.nodeorder import NodeOrderPlugin
from volcano_py.scheduler.plugins.predicates import resource_reason, static_reason
from volcano_py.scheduler.plugins.support.node_affinity import (
    selector_and_affinity_match,
    tolerates,
)
from volcano_py.scheduler.plugins.support.resource_scores import (
    balanced_allocation,
    least_allocated,
)


def _required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}
        }
    }


def _expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    return {"matchExpressions": [{"key": key, "operator": operator, "values": list(values)}]}


LABELS = {"zone": "a", "gpus": "8"}


@pytest.mark.parametrize(
    ("affinity", "matches"),
    [
        (_required(_expr("zone", "In", "a", "b")), True),
        (_required(_expr("zone", "NotIn", "a")), False),
        (_required(_expr("rack", "Exists")), False),
        (_required(_expr("rack", "DoesNotExist")), True),
        (_required(_expr("gpus", "Gt", "4")), True),
        (_required(_expr("gpus", "Lt", "4")), False),
        (_required(_expr("zone", "In", "b"), _expr("gpus", "Gt", "2")), True),
        (_required({}), False),
        (
            _required(
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n"]}]}
            ),
            True,
        ),
    ],
    ids=[
        "in",
        "notin",
        "exists",
        "doesnotexist",
        "gt",
        "lt",
        "terms-ored",
        "empty-term",
        "match-fields",
    ],
)
def test_required_node_affinity(affinity: dict[str, Any], matches: bool) -> None:
    p = pod("p", affinity=affinity)
    assert selector_and_affinity_match(p, "n", LABELS) is matches


@pytest.mark.parametrize(
    ("toleration", "taint", "expected"),
    [
        ({"operator": "Exists"}, {"key": "k", "effect": "NoSchedule"}, True),
        ({"key": "k", "value": "v"}, {"key": "k", "value": "v", "effect": "NoSchedule"}, True),
        ({"key": "k", "value": "w"}, {"key": "k", "value": "v", "effect": "NoSchedule"}, False),
        (
            {"key": "k", "operator": "Exists", "effect": "NoExecute"},
            {"key": "k", "effect": "NoSchedule"},
            False,
        ),
    ],
    ids=["exists-all", "equal", "value-differs", "effect-differs"],
)
def test_tolerations(toleration: dict[str, Any], taint: dict[str, Any], expected: bool) -> None:
    assert tolerates(toleration, taint) is expected


def test_prefer_no_schedule_taint_does_not_filter() -> None:
    n = NodeInfo(node("n", taints=[{"key": "k", "effect": "PreferNoSchedule"}]))
    assert static_reason(TaskInfo(pod("p", "g")), n) is None


def test_resource_and_pod_count_reasons() -> None:
    n = NodeInfo(node("n", {"cpu": "2", "pods": "1", "example.com/fpga": "1"}))
    assert resource_reason(TaskInfo(pod("p", "g", {"cpu": "3"})), n) == "Insufficient cpu"
    assert (
        resource_reason(TaskInfo(pod("p", "g", {"example.com/fpga": "2"})), n)
        == "Insufficient example.com/fpga"
    )
    n.add_task(TaskInfo(pod("q", None, {"cpu": "1"}, node_name="n", phase="Running")))
    assert resource_reason(TaskInfo(pod("p", "g", {"cpu": "1"})), n) == "Too many pods"


def test_least_requested_and_balanced_scores() -> None:
    n = NodeInfo(node("n", {"cpu": "4", "memory": "8Gi"}))
    task = TaskInfo(pod("p", "g", {"cpu": "2", "memory": "2Gi"}))
    # free after placing: cpu 50, memory 75 -> 62 (integer mean); the balance goes from
    # 100 (empty) to 87 (fractions .5/.25) -> 50 + (50 + 87 - 100) // 2 = 68
    assert least_allocated(task, n) == 62
    assert balanced_allocation(task, n) == 68


def test_nodeorder_weights_and_preferred_affinity() -> None:
    plugin = NodeOrderPlugin(
        Arguments(
            "nodeorder",
            {"leastrequested.weight": 0, "balancedresource.weight": 0, "nodeaffinity.weight": 3},
        )
    )
    preferred = {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 30, "preference": _expr("zone", "In", "a")},
                {"weight": 10, "preference": _expr("zone", "In", "b")},
            ]
        }
    }
    task = TaskInfo(pod("p", "g", {"cpu": "1"}, affinity=preferred))
    in_a = NodeInfo(node("a", labels={"zone": "a"}))
    in_b = NodeInfo(node("b", labels={"zone": "b"}))
    assert plugin.score(task, in_a) == pytest.approx(3 * 100 * 30 / 40)
    assert plugin.score(task, in_b) == pytest.approx(3 * 100 * 10 / 40)
