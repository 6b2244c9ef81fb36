"""kube-scheduler's resource scores as Volcano's ``nodeorder`` configures them: integers 0-100.

Volcano's nodeorder runs kube-scheduler's own score plugins, so its node scores are
integers and near ties break as kube-scheduler's do; these are the same computations.

- **Least allocated** (``NodeResourcesFit``, LeastAllocated, cpu and memory weighted 50 each):
  per resource ``(allocatable - requested) * 100 // allocatable`` (0 when requested exceeds
  allocatable), requested = the node's non-zero requests plus the pod's (a container asking
  no cpu counts 100m, no memory 200Mi: ``TaskInfo.non_zero``); the weighted mean, rounded
  down. A resource the node has none of is left out.
- **Balanced allocation** (cpu, memory and ``nvidia.com/gpu``, weight 1 each, the real
  requests): the balance ``int((1 - std) * 100)`` of the resources' usage fractions (capped at
  1; std is ``|f1 - f2| / 2`` for two, the population deviation for three) with the pod and
  without it; the score is ``50 + (50 + with - without) // 2``, 75 when the pod leaves the
  balance as it was. A pod asking nothing of these scores 0 (kube-scheduler skips it); gpu
  counts only when the pod asks for it and the node has it.
"""

from __future__ import annotations

import math

from volcano_py.scheduler.api.node_info import NodeInfo
from volcano_py.scheduler.api.resource import CPU, MEMORY
from volcano_py.scheduler.api.task_info import TaskInfo

MAX_NODE_SCORE = 100
LEAST_ALLOCATED_WEIGHT = 50  # Volcano's cpu and memory weights for LeastAllocated
BALANCED_RESOURCES = (CPU, MEMORY, "nvidia.com/gpu")


def least_allocated(task: TaskInfo, node: NodeInfo) -> int:
    """kube-scheduler's LeastAllocated score of ``node`` for ``task`` (0-100)."""
    total = weights = 0
    used_cpu, used_memory = node.non_zero_used
    for capacity, requested in (
        (node.allocatable.milli_cpu, used_cpu + task.non_zero[0]),
        (node.allocatable.memory, used_memory + task.non_zero[1]),
    ):
        if capacity == 0:
            continue
        weights += LEAST_ALLOCATED_WEIGHT
        if requested <= capacity:
            total += (capacity - requested) * MAX_NODE_SCORE // capacity * LEAST_ALLOCATED_WEIGHT
    return total // weights if weights else 0


def balanced_allocation(task: TaskInfo, node: NodeInfo) -> int:
    """kube-scheduler's BalancedAllocation score of ``node`` for ``task`` (0 or 50-100)."""
    with_pod: list[float] = []
    without: list[float] = []
    asked = False
    for name in BALANCED_RESOURCES:
        request = task.resreq.get(name)
        asked = asked or request > 0
        if name not in (CPU, MEMORY) and request == 0:
            continue
        capacity = node.allocatable.get(name)
        if capacity == 0:
            continue
        used = node.used.get(name)
        with_pod.append(min(1.0, (used + request) / capacity))
        without.append(min(1.0, used / capacity))
    if not asked:
        return 0
    change = _balance(with_pod) - _balance(without)
    return MAX_NODE_SCORE // 2 + (MAX_NODE_SCORE // 2 + change) // 2


def _balance(fractions: list[float]) -> int:
    """``int((1 - std) * 100)`` of the usage fractions."""
    std = 0.0
    if len(fractions) == 2:
        std = abs(fractions[0] - fractions[1]) / 2
    elif len(fractions) > 2:
        mean = sum(fractions) / len(fractions)
        std = math.sqrt(sum((f - mean) ** 2 for f in fractions) / len(fractions))
    return int((1 - std) * MAX_NODE_SCORE)
