"""HyperNode admission as the tree grows (issue 44): the index against the walk, in one run.

Label discovery of single-node racks: ``N`` tier-1 rack HyperNodes (one Node each, by
``exactMatch``, labelled with the ``label`` source) under 10 tier-2 HyperNodes; each review
is a new rack (CREATE) going through the whole ``HyperNodeValidator`` (schema, CEL, RE2,
tree). Measured in-process, ``REVIEWS`` reviews per case after a warm-up: the tree checks on
the informer store's indexes (``treeindex.py``, what the webhook runs) against the walk of
every HyperNode (``tree.check_tree``, what it ran before issue 44) over the same objects.
Goal: p99 <= 5 ms at 10,000 HyperNodes with the index. Then the review of one parent that
selects every rack (label discovery's zone over 10,000 single-node racks), index and walk:
its cost is its own size, not a product of sizes. Prints p50/p99 of the review's CPU
time (``time.thread_time``: the machine is shared, and a wall clock's p99 is the other
processes' time slices) and the wall p99, and walk/index.

``python -m bench tree_admission``.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from volcano_py.api.constants import NETWORK_TOPOLOGY_SOURCE_LABEL
from volcano_py.kube.store import Store
from webhooks.hypernodes.validator import HyperNodeValidator

SIZES = (1_000, 10_000)
REVIEWS = 200
SPINES = 10


def rack(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": f"rack-{i}", "labels": {NETWORK_TOPOLOGY_SOURCE_LABEL: "label"}},
        "spec": {
            "tier": 1,
            "members": [{"type": "Node", "selector": {"exactMatch": {"name": f"node-{i}"}}}],
        },
    }


def spine(s: int, racks: range) -> dict[str, Any]:
    members = [
        {"type": "HyperNode", "selector": {"exactMatch": {"name": f"rack-{i}"}}} for i in racks
    ]
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": f"spine-{s}", "labels": {NETWORK_TOPOLOGY_SOURCE_LABEL: "label"}},
        "spec": {"tier": 2, "members": members},
    }


class Walked:
    """The same store seen only through ``get``/``list``: the validator walks it."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def get(self, key: str) -> Any:
        return self._store.get(key)

    def list(self) -> list[Any]:
        return self._store.list()


def store_of(size: int) -> Store:
    store = Store()
    per = size // SPINES
    for i in range(size):
        store.put(f"rack-{i}", rack(i))
    for s in range(SPINES):
        store.put(f"spine-{s}", spine(s, range(s * per, (s + 1) * per)))
    return store


def review_times(validator: HyperNodeValidator, size: int) -> tuple[list[float], list[float]]:
    """CPU and wall seconds per review."""
    cpu, wall = [], []
    for i in range(REVIEWS + 20):
        obj = rack(size + i)  # a new rack, its node new too
        started, started_cpu = time.perf_counter(), time.thread_time()
        verdict = validator.validate(obj)
        elapsed_cpu, elapsed = time.thread_time() - started_cpu, time.perf_counter() - started
        assert verdict.allowed, verdict.message
        if i >= 20:  # warm-up: the first reviews compile and fill memos
            cpu.append(elapsed_cpu)
            wall.append(elapsed)
    return cpu, wall


def p99(times: list[float]) -> float:
    return statistics.quantiles(times, n=100)[98]


def main() -> int:
    print(f"HyperNode review, {REVIEWS} new racks per case (ms: CPU p50 / p99, wall p99)")
    for size in SIZES:
        store = store_of(size)
        indexed, indexed_wall = review_times(HyperNodeValidator(store), size)
        walker = HyperNodeValidator(Walked(store))  # type: ignore[arg-type]
        walked, walked_wall = review_times(walker, size)
        print(
            f"{size:6d} HyperNodes: index {statistics.median(indexed) * 1e3:6.2f} / "
            f"{p99(indexed) * 1e3:6.2f}, {p99(indexed_wall) * 1e3:6.2f}   "
            f"walk {statistics.median(walked) * 1e3:7.2f} / {p99(walked) * 1e3:7.2f}, "
            f"{p99(walked_wall) * 1e3:7.2f}   walk/index CPU p99 {p99(walked) / p99(indexed):6.1f}x"
            f"   goal p99 <= 5 ms: {'met' if p99(indexed) <= 0.005 else 'NOT met'}",
            flush=True,
        )
        parent = spine(SPINES, range(size))
        parent["spec"]["tier"] = 3  # above the spines, selecting every rack
        for s in range(SPINES):
            store.remove(f"spine-{s}")
        for name, validator in (("index", HyperNodeValidator(store)), ("walk", walker)):
            started = time.thread_time()
            verdict = validator.validate(parent)
            assert verdict.allowed, verdict.message
            print(
                f"        a parent of all {size} racks, {name}: "
                f"{(time.thread_time() - started) * 1e3:7.1f} ms CPU",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
