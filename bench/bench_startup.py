"""Start-up, in process (issue 30): what lies between the informers' lists and the first bind.

The first bind should follow the cache sync by one cycle. This bench times, on P3's shape
(``BENCH_START_NODES`` nodes, 5,000 by default, racks of 10, spines of 5 racks, 40 hard
gangs x 50 pods), the parts of that path that run in the manager's worker:

- **cache fill**: the scheduler cache's handlers fed every Node, HyperNode, PodGroup and
  Pod, in the order the informers usually deliver them (HyperNodes listed before the more
  numerous Nodes) against the baseline order (Nodes first). Both must cost the same: a Node
  event re-checks only regex/label HyperNodes, so the order cannot make it quadratic (before
  the fix, HyperNodes first cost ~20 s at 5,000 nodes in the real process, 66 s profiled).
  Goal: ratio <= 1.5.
- **first cycle**: the decisions for every gang (``bench_scheduler.decide``), no binding.
- **HyperNode validator build**: the CEL policy compile the manager now runs after the
  first cycle instead of before the informers start (printed for reference, not on the path).

Figures come from one process on a loaded machine: compare the ratio, not the seconds.
"""

from __future__ import annotations

import os
import time
from typing import Any

from bench.bench_scheduler import decide, gang, synthetic_cluster
from volcano_py.scheduler.cache import SchedulerCache
from webhooks.hypernodes.validator import HyperNodeValidator

JSON = dict[str, Any]
NODES = int(os.environ.get("BENCH_START_NODES", "5000"))
GOAL_RATIO = 1.5


def objects(nodes: int) -> tuple[list[JSON], list[JSON], list[JSON]]:
    """P3's cluster: its Nodes, its HyperNodes, and its gangs' PodGroups and Pods."""
    cluster = synthetic_cluster(nodes, [10, 5])
    gangs: list[JSON] = []
    for g in range(min(40, max(1, nodes // 12))):
        gangs += gang(f"g{g:02d}", 50, 1, created=f"2026-01-01T00:00:{g:02d}Z")
    return (
        [o for o in cluster if o["kind"] == "Node"],
        [o for o in cluster if o["kind"] == "HyperNode"],
        gangs,
    )


def fill(first: list[JSON], then: list[JSON], gangs: list[JSON]) -> float:
    """Seconds to feed a fresh cache ``first``, ``then``, then ``gangs``, and snapshot it."""
    cache = SchedulerCache()
    handlers = {
        "Node": cache.update_node,
        "HyperNode": cache.update_hypernode,
        "PodGroup": cache.update_podgroup,
        "Pod": cache.update_pod,
    }
    started = time.perf_counter()
    for obj in [*first, *then, *gangs]:
        handlers[obj["kind"]](obj)
    cache.snapshot()
    return time.perf_counter() - started


def main() -> None:
    """Print the three figures and the fill-order ratio against its goal."""
    print(__doc__.split("\n\n")[0])
    nodes, hypernodes, gangs = objects(NODES)
    baseline = fill(nodes, hypernodes, gangs)
    informer_order = fill(hypernodes, nodes, gangs)
    ratio = informer_order / baseline
    print(f"{NODES} nodes, {len(hypernodes)} HyperNodes, {len(gangs)} PodGroups+Pods")
    print(f"  cache fill, Nodes first (baseline):      {baseline:6.3f}s")
    print(f"  cache fill, HyperNodes first (informer): {informer_order:6.3f}s")
    print(
        f"  ratio {ratio:.2f} (goal <= {GOAL_RATIO}): {'met' if ratio <= GOAL_RATIO else 'MISSED'}"
    )
    seconds, placed = decide([*nodes, *hypernodes, *gangs])
    print(f"  first cycle, decisions only:             {seconds:6.3f}s ({placed} tasks placed)")
    started = time.perf_counter()
    HyperNodeValidator()
    print(f"  HyperNode validator build (after cycle): {time.perf_counter() - started:6.3f}s")


if __name__ == "__main__":
    main()
