"""Topology-aware preemption on P1's cluster (``python -m bench preempt``).

P1's 6,000 nodes (8 GPUs each, HyperNodes in 5 tiers of fan-out 1, 3, 3, 4, 4) at 95% GPU
occupancy: 60% of the nodes run one 8-GPU pod, the rest 1-GPU pods with 0-2 GPUs left free;
every victim is its own Running job (priority 1, 5 or 10). A 64-pod high-priority hard gang
(1 GPU per pod) arrives; P1's tier-2 HyperNodes hold 3 nodes = 24 GPUs, so the lowest tier
that can hold it is tier 3 (9 nodes, 72 GPUs): ``highestTierAllowed: 3``.

Printed: the decision time of one cycle's ``allocate`` (fails: the cluster is full) plus
``preempt`` (goal <= 1 s), the pods it evicts, and the optimum — the fewest evictions over
every candidate domain (tiers 1-3), found exhaustively: in each domain every count of
8-GPU and 1-GPU victims is tried (pods of one size are interchangeable for a 1-GPU gang), the
fewest that frees 64 GPUs is the domain's minimum, the least over all domains the optimum.
"""

from __future__ import annotations

import os
import random
import time
from typing import Any

from bench.bench_scheduler import GPU, gang, synthetic_cluster
from volcano_py.scheduler.framework.framework import close_session, open_session
from volcano_py.scheduler.framework.registry import load_conf
from volcano_py.scheduler.scheduler import builtin_registries
from volcano_py.scheduler.simulator import Simulator

JSON = dict[str, Any]
SCALE = float(os.environ.get("BENCH_SCHED_SCALE", "1.0"))
FANOUTS = [1, 3, 3, 4, 4]
CONF = """
actions: "enqueue, allocate, preempt"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: predicates}, {name: nodeorder}, {name: network-topology-aware}]
"""


def victim(name: str, node: str, gpus: int, priority: int) -> list[JSON]:
    """A Running one-pod job on ``node``."""
    return [
        {
            "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "load"},
            "spec": {"minMember": 1},
            "status": {"phase": "Running"},
        },
        {
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": "load",
                "annotations": {"scheduling.k8s.io/group-name": name},
            },
            "spec": {
                "schedulerName": "volcano",
                "nodeName": node,
                "priority": priority,
                "containers": [{"name": "c", "resources": {"requests": {GPU: str(gpus)}}}],
            },
            "status": {"phase": "Running"},
        },
    ]


def full_cluster(nodes: int, seed: int = 7) -> list[JSON]:
    """P1's shape at 95% GPU occupancy (see the module docstring)."""
    rng = random.Random(seed)
    objects = synthetic_cluster(nodes, FANOUTS)
    for i in range(nodes):
        node = f"n{i:05d}"
        if rng.random() < 0.6:
            objects += victim(f"big-{i}", node, 8, rng.choice((1, 5, 10)))
            continue
        for k in range(8 - rng.choice((0, 1, 2))):
            objects += victim(f"small-{i}-{k}", node, 1, rng.choice((1, 5, 10)))
    for obj in gang("urgent", 64, 3, min_resources=False):
        if obj["kind"] == "Pod":
            obj["spec"]["priority"] = 1000
        objects.append(obj)
    return objects


def optimum(sim: Simulator, need: int, highest_tier: int) -> tuple[int, str]:
    """Fewest evictions over every domain within ``highest_tier`` (exhaustive per domain)."""
    ssn = sim.open_session()
    try:
        best, where = 1 << 30, ""
        for tier in ssn.hypernode_tiers:
            if tier > highest_tier:
                break
            for name in ssn.hypernodes_by_tier.get(tier, ()):
                free, sizes = 0, {1: 0, 8: 0}
                for node in ssn.nodes_in(name):
                    free += node.idle.get(GPU) // 1000
                    for task in node.tasks.values():
                        sizes[task.resreq.get(GPU) // 1000] += 1
                short = need - free
                for big in range(sizes[8] + 1):
                    small = max(0, short - 8 * big)
                    if small <= sizes[1] and big + small < best:
                        best, where = big + small, name
        return best, where
    finally:
        close_session(ssn)


def main() -> None:
    nodes = int(6000 * SCALE)
    started = time.perf_counter()
    objects = full_cluster(nodes)
    plugins, actions = builtin_registries()
    sim = Simulator(objects, load_conf(CONF, plugins, actions))
    sim.cache.snapshot()
    pods = sum(1 for o in objects if o["kind"] == "Pod")
    print(f"cluster: {nodes} nodes, {pods} pods, built in {time.perf_counter() - started:.1f} s")
    snapshot = sim.cache.snapshot()
    job = snapshot.jobs["bench/urgent"]
    job.phase = "Inqueue"
    t0 = time.perf_counter()
    ssn = open_session(snapshot, sim.conf, plugins)
    actions.get("allocate").execute(ssn)
    t1 = time.perf_counter()
    actions.get("preempt").execute(ssn)
    t2 = time.perf_counter()
    close_session(ssn)
    evicted = len(ssn.evictions)
    domain = ssn.nominations.get("bench/urgent", "-")
    print(
        f"P-preempt 64-pod hard gang (tier 3) on a 95%-full cluster: decision {t2 - t0:.3f} s "
        f"(allocate {t1 - t0:.3f} s + preempt {t2 - t1:.3f} s; goal <= 1 s), "
        f"evicts {evicted} pods in {domain}"
    )
    best, where = optimum(sim, 64, 3)
    verdict = "optimal" if evicted == best else "NOT optimal"
    print(f"optimum by exhaustive search over every domain: {best} pods (in {where}): {verdict}")


if __name__ == "__main__":
    main()
