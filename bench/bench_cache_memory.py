"""Resident memory of the informer cache: bytes per cached Pod and Node, and the whole
10,000-node + 50,000-pod cache (goal: <= 600 MB RSS for the process).

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
    print(json.dumps({"delta": fill(kind, count, naive), "rss": rss_bytes()}))


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
