"""Kubernetes' own gang objects at scale: the scheduler cache's indexes against scans, in one run.

Three paths the cache used to answer with a scan under its lock, each measured in-process as
CPU time (``time.process_time``: the machine is shared), the index against the scan (what
the cache did before) over the same objects in the same run:

- **Workloads after their PodGroups**: a native PodGroup naming a Workload
  (``spec.workloadRef``) waits for it, so each Workload's change re-reviews the PodGroups
  naming it. ``N`` PodGroups (each naming its own Workload) are put first, then their ``N``
  Workloads arrive one by one: the order an informer's first lists can give at start-up or
  after a failover, and a controller creating both. Index: ``scheduler/cache/natives.py``;
  scan: every held PodGroup read per Workload. The scan runs up to ``BENCH_NI_SCAN_MAX``
  (4,000): it is quadratic.
- **CompositePodGroup children after their pods**: a child PodGroup joining its parent
  refiles the pods naming it. ``PODS`` pods are cached (half of them bound plain pods, half
  members of the children, 20 per child), then their CompositePodGroups arrive, then the
  children, two per parent. Index: the cache's pods by the PodGroup they name
  (``_naming_group``); scan: every cached pod read per child.
- **CompositePodGroups' children**: ``N / 2`` CompositePodGroups, then their ``N`` children
  (two each) arrive, then each parent's children are read once, as a cycle's status writes
  read them (``native_children``). Index: the children by parent
  (``scheduler/cache/composites.py``); scan: every child read (and sorted) per parent.

Goals: the cost per Workload flat in ``N`` (at the largest ``N`` <= 2x the smallest's), the
largest ``N``'s Workloads in <= 1 s of CPU, the children's arrival at 20,000 pods in
<= 1 s of CPU, and the largest ``N``'s children (arrival and reads) in <= 1 s of CPU.

``python -m bench native_indexes``; ``BENCH_NI_SIZES`` (``1000,4000,10000``), ``BENCH_NI_PODS``
(20,000).
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Iterator
from typing import Any

from volcano_py.api import JSON
from volcano_py.api.native_composite import parent_name
from volcano_py.api.native_groups import pod_group_name
from volcano_py.scheduler.cache.composites import CompositeGroups
from volcano_py.scheduler.cache.natives import NativeGroups, named_workload
from volcano_py.scheduler.cache.scheduler_cache import SchedulerCache
from volcano_py.scheduler.simulator import Simulator

SIZES = [int(n) for n in os.environ.get("BENCH_NI_SIZES", "1000,4000,10000").split(",")]
SCAN_MAX = int(os.environ.get("BENCH_NI_SCAN_MAX", "4000"))
PODS = int(os.environ.get("BENCH_NI_PODS", "20000"))
NAMESPACE = "bench"
MEMBERS_PER_CHILD = 20


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


def _scan_refile(cache: SchedulerCache, child: JSON) -> None:
    """The anchor: every cached pod read for each child, as the cache did before."""
    meta = child.get("metadata") or {}
    namespace, name = meta.get("namespace", ""), meta.get("name", "")
    for key, task in list(cache._tasks.items()):
        pod = cache._pods.get(key)
        if pod is not None and task.namespace == namespace and pod_group_name(pod) == name:
            cache._drop_task(key)
            cache._add_task(key, pod)


def _pod(name: str, group: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulerName": "volcano", "containers": [{"name": "c"}]}
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    else:
        spec["nodeName"] = "n0"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NAMESPACE, "uid": f"uid-{name}"},
        "spec": spec,
        "status": {"phase": "Running" if not group else "Pending"},
    }


def _native(kind: str, name: str, parent: str = "") -> dict[str, Any]:
    """A child PodGroup of ``parent`` (one pod makes its gang), or a CompositePodGroup of two."""
    spec: dict[str, Any]
    if parent:
        spec = {"schedulingPolicy": {"gang": {"minCount": 1}}}
        spec["parentCompositePodGroupName"] = parent
    else:
        spec = {"schedulingPolicy": {"gang": {"minGroupCount": 2}}}
    version = "v1beta1" if kind == "PodGroup" else "v1alpha3"
    return {
        "apiVersion": f"scheduling.k8s.io/{version}",
        "kind": kind,
        "metadata": {"name": name, "namespace": NAMESPACE, "uid": f"uid-{name}"},
        "spec": spec,
    }


def children_after_pods(pods: int, scan: bool) -> tuple[int, float]:
    """(children, CPU seconds) for CompositePodGroup children joining after ``pods`` pods."""
    parents = pods // 2 // MEMBERS_PER_CHILD // 2
    sim = Simulator([])
    cache = sim.cache
    if scan:
        cache._refile = functools.partial(_scan_refile, cache)  # type: ignore[method-assign]
    for i in range(pods // 2):
        cache.update_pod(_pod(f"plain-{i}"))
    for j in range(parents):
        for k in range(2):
            for m in range(MEMBERS_PER_CHILD):
                cache.update_pod(_pod(f"c{j}-{k}-{m}", f"c{j}-{k}"))
        cache.update_composite(_native("CompositePodGroup", f"c{j}"))
    waiting = len(cache.waiting_for_native_group())
    assert waiting == parents * 2 * MEMBERS_PER_CHILD, waiting
    started = time.process_time()
    for j in range(parents):
        for k in range(2):
            cache.update_native_podgroup(_native("PodGroup", f"c{j}-{k}", parent=f"c{j}"))
    spent = time.process_time() - started
    still = len(cache.waiting_for_native_group())
    assert still == 0, f"{still} member pods still wait after their PodGroups came"
    return parents * 2, spent


class ScanComposites(CompositeGroups):
    """The anchor: every child read and sorted for each parent, as the cache did before."""

    def children_of(self, key: str) -> list[JSON]:
        return [
            pg
            for child, pg in sorted(self._children.items())
            if f"{child.split('/', 1)[0]}/{parent_name(pg)}" == key
        ]


def composite_children(children: int, scan: bool) -> tuple[float, float]:
    """CPU seconds for ``children`` children to arrive, then for every parent's to be read."""
    sim = Simulator([])
    cache = sim.cache
    if scan:
        cache._composites = ScanComposites()
    parents = children // 2
    for j in range(parents):
        cache.update_composite(_native("CompositePodGroup", f"c{j}"))
    started = time.process_time()
    for j in range(parents):
        for k in range(2):
            cache.update_native_podgroup(_native("PodGroup", f"c{j}-{k}", parent=f"c{j}"))
    arrived = time.process_time() - started
    started = time.process_time()
    read = [len(cache.native_children(f"{NAMESPACE}/c{j}")) for j in range(parents)]
    reads = time.process_time() - started
    assert read == [2] * parents, "a parent did not see its two children"
    return arrived, reads


def main() -> None:
    """Workloads: each size, the index and (up to ``SCAN_MAX``) the scan; then the children."""
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
    children, index = children_after_pods(PODS, scan=False)
    _, scan = children_after_pods(PODS, scan=True)
    print(
        f"{children} CompositePodGroup children after {PODS} pods: index {index:.3f} s, "
        f"scan {scan:.3f} s, scan / index {scan / index:.1f}x (goal <= 1 s)"
    )
    print(f"{'children':>10} {'arrive, index':>14} {'reads':>7} {'arrive, scan':>13} {'reads':>7}")
    for n in SIZES:
        arrived, reads = composite_children(n, scan=False)
        scanned = composite_children(n, scan=True) if n <= SCAN_MAX else None
        print(
            f"{n:>10} {arrived:>13.3f}s {reads:>6.3f}s "
            + (f"{scanned[0]:>12.3f}s {scanned[1]:>6.3f}s" if scanned else f"{'-':>13} {'-':>7}")
            + (f"  scan / index {sum(scanned) / (arrived + reads):.1f}x" if scanned else "")
            + (f"  (goal <= 1 s: {arrived + reads:.3f} s)" if n == max(SIZES) else "")
        )


if __name__ == "__main__":
    main()
