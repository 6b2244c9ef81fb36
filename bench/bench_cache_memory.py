"""Resident memory of the informer cache: bytes per cached Pod and Node, and the whole
10,000-node + 50,000-pod cache (goal: <= 600 MB RSS for the process). Issue 44 adds the
bytes per HyperNode (``HYPERNODES`` racks of 10 nodes by ``exactMatch``, as label discovery
writes them): the informer's object with the webhook's tree indexes, plus the scheduler
cache's tree built from them (one snapshot), for the sizing rule in docs/operations.md.

Objects go through the informer's own path (JSON bytes -> orjson -> the Pod/Node
transforms of ``volcano_py.kube.transforms`` -> indexed Store), each measured in a fresh
process so one run does not pollute the other. The baseline is the same objects decoded
with the stdlib ``json`` and kept whole (with managedFields), i.e. a naive cache.
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys

import orjson

from bench.objects import node, pod
from volcano_py.kube.store import NAMESPACE_INDEX, Store, key_of, namespace_index
from volcano_py.kube.transforms import slim_node, slim_pod

NODES = 10_000
PODS = 50_000
HYPERNODES = 10_000


def rack(i: int) -> dict:
    """A tier-1 HyperNode of 10 nodes, as label discovery writes it (issue 44's sizing)."""
    members = [
        {"type": "Node", "selector": {"exactMatch": {"name": f"node-{(i * 10 + j) % NODES:05d}"}}}
        for j in range(10)
    ]
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {
            "name": f"hypernode-bench-tier1-r{i:05d}",
            "uid": f"uid-{i}",
            "resourceVersion": str(i + 1),
            "labels": {"volcano.sh/network-topology-source": "label", "bench/rack": f"r{i}"},
        },
        "spec": {"tier": 1, "tierName": "bench/rack", "members": members},
    }


def fill_hypernodes(count: int) -> int:
    """RSS growth for ``count`` HyperNodes in an indexed informer store and the scheduler tree."""
    from volcano_py.scheduler.cache import SchedulerCache
    from webhooks.hypernodes.treeindex import add_tree_indexes

    cache = SchedulerCache()
    gc.collect()
    before = rss_bytes()
    store = Store()
    add_tree_indexes(store)
    for i in range(count):
        obj = orjson.loads(orjson.dumps(rack(i)))
        store.put(key_of(obj), obj)
        cache.update_hypernode(obj)
    cache.snapshot()  # the tree is built once, as the first cycle does
    KEEP.append(store)
    KEEP_CACHE.append(cache)
    gc.collect()
    return rss_bytes() - before


KEEP_CACHE: list[object] = []


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


KEEP: list[Store] = []


def fill(kind: str, count: int, naive: bool) -> int:
    gc.collect()
    before = rss_bytes()
    store = Store({NAMESPACE_INDEX: namespace_index}) if kind == "pods" else Store()
    for i in range(count):
        obj = pod(i, node=f"node-{i % NODES:05d}") if kind == "pods" else node(i)
        data = orjson.dumps(obj)
        del obj
        if naive:
            decoded = json.loads(data)
        else:
            decoded = orjson.loads(data)
            decoded = slim_pod(decoded) if kind == "pods" else slim_node(decoded)
        store.put(key_of(decoded), decoded)
    KEEP.append(store)
    gc.collect()
    return rss_bytes() - before


def child(kind: str, count: int, naive: bool) -> None:
    delta = fill_hypernodes(count) if kind == "hypernodes" else fill(kind, count, naive)
    print(json.dumps({"delta": delta, "rss": rss_bytes()}))


def run_child(kind: str, count: int, naive: bool) -> dict[str, int]:
    out = subprocess.check_output(
        [
            sys.executable,
            "-m",
            "bench.bench_cache_memory",
            "child",
            kind,
            str(count),
            "1" if naive else "0",
        ]
    )
    result: dict[str, int] = json.loads(out)
    return result


def both(naive: bool) -> int:
    out = subprocess.check_output(
        [sys.executable, "-m", "bench.bench_cache_memory", "both", "1" if naive else "0"]
    )
    return int(out)


def main() -> None:
    mib = 1024 * 1024
    sample_pod = len(orjson.dumps(pod(1, node="node-00001")))
    sample_node = len(orjson.dumps(node(1)))
    print(
        f"object sizes as served (JSON incl. managedFields): pod {sample_pod} B, "
        f"node {sample_node} B"
    )
    rows = []
    for kind, count in (("pods", PODS), ("nodes", NODES)):
        ours = run_child(kind, count, naive=False)["delta"] / count
        naive = run_child(kind, count, naive=True)["delta"] / count
        rows.append((kind, ours, naive))
        print(
            f"{kind:>5}: {ours:8.0f} B/object cached  (naive json cache {naive:8.0f} B, "
            f"ratio {naive / ours:.2f}x)"
        )
    per_hypernode = run_child("hypernodes", HYPERNODES, naive=False)["delta"] / HYPERNODES
    print(
        f"hypernodes: {per_hypernode:8.0f} B/HyperNode (10 exactMatch nodes each: the informer "
        "object with the webhook's tree indexes, and the scheduler's tree)"
    )
    total = both(naive=False)
    total_naive = both(naive=True)
    print(
        f"process RSS with {NODES} nodes + {PODS} pods cached: {total / mib:.0f} MiB "
        f"(goal <= 600 MB; naive json cache {total_naive / mib:.0f} MiB)"
    )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        child(sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1")
    elif len(sys.argv) > 1 and sys.argv[1] == "both":
        naive_flag = sys.argv[2] == "1"
        fill("nodes", NODES, naive_flag)
        fill("pods", PODS, naive_flag)
        print(rss_bytes())
    else:
        main()
