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
from volcano_py.scheduler.api.task_info import TaskInfo

MAX_NODE_SCORE = 100
LEAST_ALLOCATED_WEIGHT = 50  # Volcano's cpu and memory weights for LeastAllocated
GPU = "nvidia.com/gpu"


def least_allocated(task: TaskInfo, node: NodeInfo) -> int:
    """kube-scheduler's LeastAllocated score of ``node`` for ``task`` (0-100)."""
    total = weights = 0
    used_cpu, used_memory = node.non_zero_used
    asked_cpu, asked_memory = task.non_zero
    allocatable = node.allocatable
    capacity = allocatable.milli_cpu
    if capacity != 0:
        weights += LEAST_ALLOCATED_WEIGHT
        requested = used_cpu + asked_cpu
        if requested <= capacity:
            total += (capacity - requested) * MAX_NODE_SCORE // capacity * LEAST_ALLOCATED_WEIGHT
    capacity = allocatable.memory
    if capacity != 0:
        weights += LEAST_ALLOCATED_WEIGHT
        requested = used_memory + asked_memory
        if requested <= capacity:
            total += (capacity - requested) * MAX_NODE_SCORE // capacity * LEAST_ALLOCATED_WEIGHT
    return total // weights if weights else 0


def balanced_allocation(task: TaskInfo, node: NodeInfo) -> int:
    """kube-scheduler's BalancedAllocation score of ``node`` for ``task`` (0 or 50-100).

    Runs for every feasible node of every pod placed whose score is not cached, so the
    resources are read directly (cpu, memory, then gpu when asked), not by name, and not
    through a loop over tuples built per call.
    """
    request = task.resreq
    asked_cpu, asked_memory = request.milli_cpu, request.memory
    asked_gpu = request.scalars.get(GPU, 0) if request.scalars else 0
    if asked_cpu <= 0 and asked_memory <= 0 and asked_gpu <= 0:
        return 0
    allocatable, used = node.allocatable, node.used
    with_pod: list[float] = []
    without: list[float] = []
    if allocatable.milli_cpu != 0:
        _usage(with_pod, without, used.milli_cpu, asked_cpu, allocatable.milli_cpu)
    if allocatable.memory != 0:
        _usage(with_pod, without, used.memory, asked_memory, allocatable.memory)
    if asked_gpu and allocatable.scalars.get(GPU, 0) != 0:
        _usage(with_pod, without, used.scalars.get(GPU, 0), asked_gpu, allocatable.scalars[GPU])
    change = _balance(with_pod) - _balance(without)
    return MAX_NODE_SCORE // 2 + (MAX_NODE_SCORE // 2 + change) // 2


def _usage(
    with_pod: list[float], without: list[float], in_use: int, asked: int, capacity: int
) -> None:
    """Append one resource's usage fraction with the pod and without it, each capped at 1."""
    fraction = (in_use + asked) / capacity
    with_pod.append(fraction if fraction < 1.0 else 1.0)
    fraction = in_use / capacity
    without.append(fraction if fraction < 1.0 else 1.0)


def _balance(fractions: list[float]) -> int:
    """``int((1 - std) * 100)`` of the usage fractions (population standard deviation).

    Summed left to right and squared by multiplying, as kube-scheduler's Go does (``** 2``
    would call the C library's ``pow``, slower and not promised to round as a product does).
    """
    count = len(fractions)
    if count == 2:
        std = abs(fractions[0] - fractions[1]) / 2
    elif count == 3:
        first, second, third = fractions
        mean = (first + second + third) / 3
        first, second, third = first - mean, second - mean, third - mean
        std = math.sqrt((first * first + second * second + third * third) / 3)
    else:
        return MAX_NODE_SCORE  # one resource or none: nothing to be out of balance with
    return int((1 - std) * MAX_NODE_SCORE)
