"""Inter-pod affinity and topology spread: what they cost, in process (no API server).

- **P3-anti**: P3's shape (500 nodes of 8 GPUs, ToRs of 10, 40 hard gangs x 50 pods within a
  ToR), every pod with required anti-affinity on ``kubernetes.io/hostname`` against pods of
  the *other* gangs: one cycle's decision time, how many pods were placed, and a check that no
  node holds two gangs. Printed with the same cluster without the terms, as a ratio.
- **P-spread**: the issue's plain workload, in process: 500 nodes in 50 racks, 5,000 one-cpu
  pods of one job, each spreading ``ScheduleAnyway`` over racks: decision time, the rack skew
  it leaves, and the same pods without the constraint as a ratio.
- **No constraints, before/after**: P1, P2 and P3 (no terms) decided with the
  ``podconstraints`` hooks and without them (``predicates`` / ``nodeorder`` as they were
  before: no PodFilters, no batch score), interleaved, best of ``BENCH_PC_ROUNDS`` (3); goal:
  after <= 1.05x before. Times are the process's CPU seconds (the machine is shared).

``BENCH_SCHED_SCALE`` scales P1/P2 as in ``bench_scheduler``.
"""

from __future__ import annotations

import gc
import os
import time
from collections import defaultdict

from bench.bench_scheduler import SCALE, gang, p1_objects, synthetic_cluster
from volcano_py.api import JSON
from volcano_py.kube.runtime import tune_gc
from volcano_py.scheduler.framework.conf import DEFAULT_SCHEDULER_CONF
from volcano_py.scheduler.framework.framework import close_session, open_session
from volcano_py.scheduler.framework.registry import ActionRegistry, PluginRegistry, load_conf
from volcano_py.scheduler.framework.session import Session
from volcano_py.scheduler.plugins.nodeorder import NodeOrderPlugin
from volcano_py.scheduler.plugins.predicates import PredicatesPlugin
from volcano_py.scheduler.scheduler import builtin_registries
from volcano_py.scheduler.simulator import Simulator

ROUNDS = int(os.environ.get("BENCH_PC_ROUNDS", "3"))
HOSTNAME = "kubernetes.io/hostname"


class BarePredicates(PredicatesPlugin):
    """``predicates`` without the inter-pod/spread filters (as before them)."""

    def on_session_open(self, ssn: Session) -> None:
        ssn.add_predicate_fn(self.name, self.predicate)


class BareNodeOrder(NodeOrderPlugin):
    """``nodeorder`` without the inter-pod/spread batch score (as before it)."""

    def on_session_open(self, ssn: Session) -> None:
        ssn.add_node_order_fn(self.name, self.score)


def _registries(bare: bool) -> tuple[PluginRegistry, ActionRegistry]:
    base_plugins, actions = builtin_registries()
    if not bare:
        return base_plugins, actions
    plugins = PluginRegistry()
    swap = {"predicates": BarePredicates, "nodeorder": BareNodeOrder}
    for name in base_plugins:
        plugins.register(name, swap.get(name, base_plugins.get(name)))
    return plugins, actions


def decide(objects: list[JSON], bare: bool = False) -> tuple[float, Session]:
    """One cycle's decision CPU time (no binding) and the closed session.

    CPU seconds of this process, not wall time: the machine is shared with other work, and
    the ratios below compare code paths, not the machine's mood.
    """
    plugins, actions = _registries(bare)
    conf = load_conf(DEFAULT_SCHEDULER_CONF, plugins, actions)
    sim = Simulator(objects, conf)
    sim.cache.snapshot()  # the HyperNode tree is built once, when HyperNodes change
    gc.collect()
    started = time.process_time()
    ssn = open_session(sim.cache.snapshot(), conf, plugins)
    for name in conf.actions:
        actions.get(name).execute(ssn)
    close_session(ssn)
    return time.process_time() - started, ssn


def p3_objects(anti: bool) -> list[JSON]:
    """P3's cluster and gangs; with ``anti``, anti-affinity against the other gangs' pods."""
    objects = synthetic_cluster(500, [10, 5])
    for obj in objects:
        if obj["kind"] == "Node":
            obj["metadata"]["labels"][HOSTNAME] = obj["metadata"]["name"]
    for g in range(40):
        name = f"g{g:02d}"
        # one labels and one affinity object per gang: the Pod transform shares them
        # between a workload's pods in a real cache (kube/transforms.py)
        labels = {"gang": name}
        selector = {
            "matchExpressions": [
                {"key": "gang", "operator": "Exists"},
                {"key": "gang", "operator": "NotIn", "values": [name]},
            ]
        }
        affinity = {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": selector, "topologyKey": HOSTNAME}
                ]
            }
        }
        for obj in gang(name, 50, 1, created=f"2026-01-01T00:00:{g:02d}Z"):
            if obj["kind"] == "Pod" and anti:
                obj["metadata"]["labels"] = labels
                obj["spec"]["affinity"] = affinity
            objects.append(obj)
    return objects


def spread_objects(spread: bool) -> list[JSON]:
    """500 nodes in 50 racks (``rack`` label), one job of 5,000 one-cpu pods (minMember 1).

    With ``spread``: each pod spreads ``ScheduleAnyway`` over racks (maxSkew 1), its labels
    and constraint shared by all, as a Deployment's pods are.
    """
    objects = synthetic_cluster(500, [10, 5])
    for obj in objects:
        if obj["kind"] == "Node":
            index = int(obj["metadata"]["name"][1:])
            obj["metadata"]["labels"] = {
                HOSTNAME: obj["metadata"]["name"],
                "rack": f"r{index // 10}",
            }
    labels = {"app": "web"}
    constraints = [
        {
            "maxSkew": 1,
            "topologyKey": "rack",
            "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": {"matchLabels": labels},
        }
    ]
    objects.append(
        {
            "kind": "PodGroup",
            "metadata": {
                "name": "web",
                "namespace": "bench",
                "creationTimestamp": "2026-01-01T00:00:00Z",
            },
            "spec": {"minMember": 1},
        }
    )
    for i in range(5000):
        spec: JSON = {
            "schedulerName": "volcano",
            "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
        }
        if spread:
            spec["topologySpreadConstraints"] = constraints
        objects.append(
            {
                "kind": "Pod",
                "metadata": {
                    "name": f"web-{i}",
                    "namespace": "bench",
                    "annotations": {"scheduling.k8s.io/group-name": "web"},
                    "labels": labels,
                },
                "spec": spec,
                "status": {"phase": "Pending"},
            }
        )
    return objects


def _rack_skew(ssn: Session) -> int:
    """Most minus fewest pods per rack after the cycle."""
    racks: dict[str, int] = defaultdict(int)
    for task in ssn.binds:
        racks[ssn.nodes[task.node_name].labels["rack"]] += 1
    return max(racks.values()) - min(racks.values()) if racks else 0


def _gangs_per_node(ssn: Session) -> int:
    """The most gangs any node holds after the cycle."""
    holders: dict[str, set[str]] = defaultdict(set)
    for task in ssn.binds:
        holders[task.node_name].add(task.job)
    return max((len(jobs) for jobs in holders.values()), default=0)


def _best(objects: list[JSON], bare: bool) -> tuple[float, int]:
    best, placed = float("inf"), 0
    for _ in range(ROUNDS):
        seconds, ssn = decide(objects, bare)
        best, placed = min(best, seconds), len(ssn.binds)
    return best, placed


def main() -> None:
    tune_gc()
    plain = p3_objects(anti=False)
    anti = p3_objects(anti=True)
    plain_s, plain_placed = _best(plain, bare=False)
    anti_s, ssn = float("inf"), None
    for _ in range(ROUNDS):
        seconds, run = decide(anti)
        if seconds < anti_s:
            anti_s, ssn = seconds, run
    assert ssn is not None
    print("P3-anti 500 nodes, 40 hard gangs x 50, anti-affinity between gangs on hostname:")
    print(
        f"   decision {anti_s:.3f} s, {len(ssn.binds)} placed, at most "
        f"{_gangs_per_node(ssn)} gang(s) per node; without the terms {plain_s:.3f} s "
        f"({plain_placed} placed)  ratio {anti_s / plain_s:.2f}x"
    )
    soft_s, soft = float("inf"), None
    for _ in range(ROUNDS):
        seconds, run = decide(spread_objects(spread=True))
        if seconds < soft_s:
            soft_s, soft = seconds, run
    assert soft is not None
    bare_s, _ = _best(spread_objects(spread=False), bare=False)
    print("P-spread 500 nodes in 50 racks, 5,000 pods spreading ScheduleAnyway over racks:")
    print(
        f"   decision {soft_s:.3f} s, {len(soft.binds)} placed, rack skew {_rack_skew(soft)}; "
        f"without the constraint {bare_s:.3f} s  ratio {soft_s / bare_s:.2f}x"
    )
    print(f"No constraints, with the podconstraints hooks vs without (best of {ROUNDS}):")
    p2 = synthetic_cluster(int(2000 * SCALE), [8, 5])
    for g in range(int(100 * SCALE)):
        p2 += gang(f"g{g:03d}", 64, 2, created=f"2026-01-01T00:{g // 60:02d}:{g % 60:02d}Z")
    for label, objects in (("P1", p1_objects(SCALE)[0]), ("P2", p2), ("P3", plain)):
        after, placed = _best(objects, bare=False)
        before, before_placed = _best(objects, bare=True)
        assert placed == before_placed, (label, placed, before_placed)
        print(
            f"   {label}: after {after:.3f} s, before {before:.3f} s ({placed} placed)  "
            f"ratio {after / before:.3f}x (goal <= 1.05x)"
        )


if __name__ == "__main__":
    main()
