"""``binpack``: prefer nodes that are fuller after the task lands (Volcano's binpack plugin).

Arguments (Volcano's keys and defaults): ``binpack.weight`` (1), ``binpack.cpu`` (1),
``binpack.memory`` (1), ``binpack.resources`` (comma-separated extra resource names) with
``binpack.resources.<name>`` (1 each). For each resource the task requests that has a
weight: ``(used + request) x weight / allocatable``; a resource that would not fit scores
the node 0. The sum over those resources is divided by their weight sum and scaled to
``100 x binpack.weight``. Like nodeorder, scores are cached by (template, node) and the
node's generation.
"""

from __future__ import annotations

from volcano_py.scheduler.api.node_info import NodeInfo
from volcano_py.scheduler.api.resource import CPU, MEMORY
from volcano_py.scheduler.api.task_info import TaskInfo
from volcano_py.scheduler.framework.arguments import Arguments, ConfError
from volcano_py.scheduler.framework.session import Session

MAX_NODE_SCORE = 100.0


class BinpackPlugin:
    """Node order by how full the node becomes."""

    name = "binpack"

    def __init__(self, args: Arguments) -> None:
        """Read the weights; a negative weight is an error naming the key."""
        self.weight = self._weight(args, "binpack.weight")
        self.resources: dict[str, int] = {
            CPU: self._weight(args, "binpack.cpu"),
            MEMORY: self._weight(args, "binpack.memory"),
        }
        extra = args.get_str("binpack.resources", "")
        for name in (n.strip() for n in extra.split(",")):
            if name:
                self.resources[name] = self._weight(args, f"binpack.resources.{name}")
        self._cache: dict[tuple[str, str], tuple[int, float]] = {}

    @staticmethod
    def _weight(args: Arguments, key: str) -> int:
        value = args.get_int(key, 1)
        if value < 0:
            raise ConfError(f"tiers[].plugins[binpack].arguments[{key}]: must not be negative")
        return value

    def on_session_open(self, ssn: Session) -> None:
        """Register the node order function (nothing when the weight is 0)."""
        if self.weight:
            ssn.add_node_order_fn(self.name, self.score)

    def on_session_close(self, ssn: Session) -> None:
        """Drop the cache."""
        self._cache = {}

    def score(self, task: TaskInfo, node: NodeInfo) -> float:
        """Volcano's ``BinPackingScore``."""
        key = (task.template, node.name)
        hit = self._cache.get(key)
        if hit is not None and hit[0] == node.generation:
            return hit[1]
        total = 0.0
        weights = 0
        for name, request in task.resreq.items():
            weight = self.resources.get(name)
            if not weight or request <= 0:
                continue
            capacity = node.allocatable.get(name)
            weights += weight
            if capacity <= 0:  # Volcano: scores 0 but its weight still counts
                continue
            final = node.used.get(name) + request
            if final > capacity:
                total, weights = 0.0, 0
                break
            total += final * weight / capacity
        score = (total / weights if weights else 0.0) * MAX_NODE_SCORE * self.weight
        self._cache[key] = (node.generation, score)
        return score
