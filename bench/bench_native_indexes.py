"""Kubernetes' own Workloads arriving after their PodGroups: the index against the scan, in one run.

A native ``scheduling.k8s.io`` PodGroup that names a Workload (``spec.workloadRef``) waits for
it, so each Workload's change re-reviews the PodGroups naming it, under the scheduler cache's
lock. ``N`` native PodGroups (each naming its own Workload, with one pod) are put in the cache
first, then their ``N`` Workloads arrive one by one: the order an informer's first lists can
give at start-up or after a failover, and a controller creating both. Measured in-process,
CPU time (``time.process_time``: the machine is shared) for the ``N`` Workload events: the
cache's index (``scheduler/cache/natives.py``) against a scan of every held PodGroup per
Workload (what the cache did before it), same objects, same run. The scan is quadratic, so
it runs up to ``BENCH_NW_SCAN_MAX`` PodGroups (4,000).

Goals: the cost per Workload flat in ``N`` (at the largest ``N`` <= 2x the smallest's) and
the largest ``N``'s Workloads in <= 1 s of CPU.

``python -m bench native_workloads``; ``BENCH_NW_SIZES`` (``1000,4000,10000``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import Any

from volcano_py.api import JSON
from volcano_py.scheduler.cache.natives import NativeGroups, named_workload
from volcano_py.scheduler.simulator import Simulator

SIZES = [int(n) for n in os.environ.get("BENCH_NW_SIZES", "1000,4000,10000").split(",")]
SCAN_MAX = int(os.environ.get("BENCH_NW_SCAN_MAX", "4000"))
NAMESPACE = "bench"


class ScanGroups(NativeGroups):
    """The anchor: every held group read for each Workload, as the cache did before."""

    def naming(self, workload: str | None) -> Iterator[tuple[str, JSON]]:
        if workload is None:
            yield from super().naming(None)
            return
        for key, pg in list(self._groups.items()):
            if named_workload(pg) == workload:
                yield key, pg


def _podgroup(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": f"g{i}", "namespace": NAMESPACE, "uid": f"uid-g{i}"},
        "spec": {
            "schedulingPolicy": {"gang": {"minCount": 1}},
            "workloadRef": {"workloadName": f"w{i}", "templateName": "t"},
        },
    }


def _workload(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "Workload",
        "metadata": {"name": f"w{i}", "namespace": NAMESPACE},
        "spec": {"podGroupTemplates": [{"name": "t"}]},
    }


def workloads_after_groups(n: int, scan: bool) -> float:
    """CPU seconds for ``n`` Workloads arriving after their ``n`` PodGroups."""
    sim = Simulator([])
    cache = sim.cache
    if scan:
        cache._native = ScanGroups()  # the anchor in place of the index
    cache.read_workloads()
    for i in range(n):
        cache.update_podgroup(_podgroup(i))
    waiting = sum(1 for i in range(n) if _waits(sim, i))
    assert waiting == n, f"{waiting} of {n} PodGroups wait for their Workload"
    started = time.process_time()
    for i in range(n):
        cache.update_workload(_workload(i))
    spent = time.process_time() - started
    still = sum(1 for i in range(n) if _waits(sim, i))
    assert still == 0, f"{still} of {n} PodGroups still wait after their Workloads came"
    return spent


def _waits(sim: Simulator, i: int) -> bool:
    job = sim.cache.podgroup(f"{NAMESPACE}/g{i}") or {}
    return "volcano-py.io/native-waiting" in ((job.get("metadata") or {}).get("annotations") or {})


def main() -> None:
    """Each size, the index and (up to ``SCAN_MAX``) the scan; per-Workload cost and ratio."""
    print(__doc__.split("\n\n")[0])
    print(
        f"{'PodGroups':>10} {'index s':>8} {'per Workload':>13} {'scan s':>8} {'scan / index':>13}"
    )
    per: dict[int, float] = {}
    for n in SIZES:
        index = workloads_after_groups(n, scan=False)
        per[n] = index / n
        scan = workloads_after_groups(n, scan=True) if n <= SCAN_MAX else None
        print(
            f"{n:>10} {index:>8.3f} {per[n] * 1e6:>10.1f} us "
            + (
                f"{scan:>8.3f} {scan / index:>12.1f}x"
                if scan is not None
                else f"{'-':>8} {'-':>13}"
            )
        )
    small, large = min(SIZES), max(SIZES)
    growth = per[large] / per[small]
    print(
        f"per Workload at {large} / at {small}: {growth:.2f}x (goal <= 2x); "
        f"{large} Workloads in {per[large] * large:.3f} s of CPU (goal <= 1 s)"
    )


if __name__ == "__main__":
    main()
