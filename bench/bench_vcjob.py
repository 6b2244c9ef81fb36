"""Volcano Jobs end to end: 100 vcjobs x 16 pods on 500 kwok nodes vs the same pods written by hand.

A real control plane (kwok as kubelets, no kube-controller-manager) with 500 nodes of 8 GPUs
under two tiers of HyperNodes (10 nodes per tier-1, 5 tier-1s per tier-2), and the scheduler
running throughout. Two rounds, each timed from the first create to the moment every pod of
the round is bound (as the scheduler's pod informer sees it):

- **hand-written** (the baseline): 100 PodGroups (``minMember 16``, ``minResources``, hard
  within tier 1) and their 1,600 pods (1 GPU each, ``scheduling.k8s.io/group-name``), created
  by 16 client threads; deleted again before the next round.
- **vcjob**: job-controller runs too; 100 Volcano Jobs of one 16-replica task with the same
  pod template and topology are created by 16 client threads. The controller makes each
  PodGroup, waits until the scheduler admits it (Inqueue), then creates its 16 pods.

Printed: both times, their ratio (goal <= 1.3) and job-controller CPU per job (thread CPU
time spent in its sync function over the round, divided by the jobs). The hand-written round
runs first and is deleted (kwok completes the deletions) before the vcjob round starts, so
both rounds start from the same scheduler cache. Each round also prints when its PodGroups
were created and admitted and when its pods were created.

Knobs: ``BENCH_VCJOB_JOBS`` (100), ``BENCH_VCJOB_PODS`` (16 per job), ``BENCH_VCJOB_NODES``
(500, a multiple of 50).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

from bench.bench_scheduler import GPU, _create_node, synthetic_cluster
from devcluster.crds import install_crds
from devcluster.harness import ControlPlane
from devcluster.nodes import wait_nodes_up
from volcano_py.api import resources as R
from volcano_py.controllers.framework import ControllerOptions
from volcano_py.controllers.job import JobController
from volcano_py.kube.client import KubeClient
from volcano_py.kube.informer import EventHandler, Informer, SharedInformerFactory
from volcano_py.kube.runtime import tune_gc
from volcano_py.scheduler.scheduler import Scheduler

JSON = dict[str, Any]
JOBS = int(os.environ.get("BENCH_VCJOB_JOBS", "100"))
PODS = int(os.environ.get("BENCH_VCJOB_PODS", "16"))
NODES = int(os.environ.get("BENCH_VCJOB_NODES", "500"))
TOPOLOGY = {"mode": "hard", "highestTierAllowed": 1}


def template() -> JSON:
    """The pod template both rounds use."""
    return {
        "spec": {
            "schedulerName": "volcano",
            "containers": [
                {
                    "name": "main",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {
                        "requests": {GPU: "1", "cpu": "100m"},
                        "limits": {GPU: "1"},
                    },
                }
            ],
        }
    }


def hand_written(namespace: str, j: int) -> list[tuple[R.APIResource, JSON]]:
    """One PodGroup and its pods, as a user would write them for the scheduler."""
    name = f"hand-{j:03d}"
    group: JSON = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "minMember": PODS,
            "minResources": {GPU: str(PODS), "cpu": f"{PODS * 100}m", "pods": str(PODS)},
            "networkTopology": TOPOLOGY,
        },
    }
    out: list[tuple[R.APIResource, JSON]] = [(R.PODGROUPS, group)]
    for i in range(PODS):
        pod = template()
        pod.update(
            apiVersion="v1",
            kind="Pod",
            metadata={
                "name": f"{name}-{i}",
                "namespace": namespace,
                "annotations": {"scheduling.k8s.io/group-name": name},
            },
        )
        out.append((R.PODS, pod))
    return out


def vcjob(namespace: str, j: int) -> JSON:
    """One Volcano Job with the same pods."""
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": f"job-{j:03d}", "namespace": namespace},
        "spec": {
            "schedulerName": "volcano",
            "minAvailable": PODS,
            "networkTopology": TOPOLOGY,
            "tasks": [
                {"name": "worker", "replicas": PODS, "minAvailable": PODS, "template": template()}
            ],
        },
    }


def wait_bound(pods: Informer, namespace: str, count: int, started: float) -> float:
    """Seconds from ``started`` until ``count`` pods of ``namespace`` have a node."""
    while True:
        bound = sum(
            1
            for p in pods.store.list()
            if p["metadata"]["namespace"] == namespace and p["spec"].get("nodeName")
        )
        if bound >= count:
            return time.perf_counter() - started
        time.sleep(0.02)


class Timeline:
    """When each namespace's pods were first seen and its PodGroups first left Pending."""

    def __init__(self) -> None:
        self.created: dict[str, list[float]] = {}
        self.groups: dict[str, list[float]] = {}
        self.admitted: dict[str, list[float]] = {}
        self._seen: set[str] = set()

    def pod_added(self, pod: JSON) -> None:
        ns = pod["metadata"]["namespace"]
        self.created.setdefault(ns, []).append(time.perf_counter())

    def podgroup_added(self, group: JSON) -> None:
        ns = group["metadata"]["namespace"]
        self.groups.setdefault(ns, []).append(time.perf_counter())

    def podgroup_changed(self, old: JSON, new: JSON) -> None:
        uid = new["metadata"].get("uid", "")
        if (new.get("status") or {}).get("phase") in (None, "", "Pending") or uid in self._seen:
            return
        self._seen.add(uid)
        self.admitted.setdefault(new["metadata"]["namespace"], []).append(time.perf_counter())

    def report(self, ns: str, started: float) -> str:
        created = self.created.get(ns) or [started]
        admitted = self.admitted.get(ns) or [started]
        groups = self.groups.get(ns) or [started]
        g0, g1 = min(groups) - started, max(groups) - started
        a0, a1 = min(admitted) - started, max(admitted) - started
        c0, c1 = min(created) - started, max(created) - started
        return (
            f"PodGroups created {g0:.2f}-{g1:.2f}s, admitted {a0:.2f}-{a1:.2f}s; "
            f"pods created {c0:.2f}-{c1:.2f}s"
        )


def timed_sync(controller: JobController) -> Callable[[], float]:
    """Wrap the controller's sync to add up its thread CPU time; returns a reader."""
    spent = [0.0]
    lock = threading.Lock()
    inner = controller.sync

    def sync(request: Any) -> None:
        before = time.thread_time()
        try:
            inner(request)
        finally:
            with lock:
                spent[0] += time.thread_time() - before

    controller.sync = sync  # type: ignore[method-assign]
    return lambda: spent[0]


@contextmanager
def control_plane() -> Iterator[KubeClient]:
    """A control plane (kwok as kubelets, no kube-controller-manager), CRDs installed.

    Yields its admin client; the control plane stops when the block ends.
    """
    tune_gc()
    cp = ControlPlane(controller_manager=False)
    cp.start()
    try:
        client = KubeClient(cp.admin_config())
        install_crds(client)
        yield client
    finally:
        cp.stop()


class InProcess:
    """The scheduler and job-controller on one informer factory, as the manager wires them.

    ``sync()`` starts the informers and waits for their caches; ``start(run, name)`` runs
    the scheduler's or the controller's ``run`` on a thread; ``stop()`` stops every thread
    started, then the informers.
    """

    def __init__(self, client: KubeClient) -> None:
        self.informers = SharedInformerFactory(client)
        self.scheduler = Scheduler(
            client, self.informers, None, "volcano", None, schedule_period=0.2
        )
        self.controller = JobController()
        self.controller.initialize(ControllerOptions(client=client, informers=self.informers))
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def sync(self) -> None:
        self.informers.start()
        assert self.informers.wait_for_cache_sync(120)

    def start(self, run: Callable[[threading.Event], None], name: str) -> None:
        thread = threading.Thread(target=run, args=(self._stop,), name=name)
        self._threads.append(thread)
        thread.start()

    def stop(self) -> None:
        self._stop.set()
        self.scheduler.cache.changed.set()
        for thread in self._threads:
            thread.join(15)
        self.informers.shutdown()


def main() -> None:
    with control_plane() as client:
        objects = synthetic_cluster(NODES, [10, 5])
        started = time.perf_counter()
        with ThreadPoolExecutor(16) as pool:
            nodes = [o for o in objects if o["kind"] == "Node"]
            list(pool.map(lambda o: _create_node(client, o), nodes))
            wait_nodes_up(client, [o["metadata"]["name"] for o in nodes], 300)
        for o in objects:
            if o["kind"] == "HyperNode":
                client.create(R.HYPERNODES, dict(o, apiVersion="topology.volcano.sh/v1alpha1"))
        for ns in ("hand", "vcjob"):
            client.create(R.NAMESPACES, {"metadata": {"name": ns}})
        took = time.perf_counter() - started
        hypernodes = len(objects) - NODES
        print(
            f"setup: {NODES} nodes, {hypernodes} HyperNodes in {took:.1f}s;"
            f" {JOBS} jobs x {PODS} pods"
        )

        manager = InProcess(client)
        cpu = timed_sync(manager.controller)
        timeline = Timeline()
        pods = manager.informers.informer(R.PODS)
        pods.add_event_handler(EventHandler(on_add=timeline.pod_added))
        manager.informers.informer(R.PODGROUPS).add_event_handler(
            EventHandler(on_add=timeline.podgroup_added, on_update=timeline.podgroup_changed)
        )
        manager.sync()
        try:
            manager.start(manager.scheduler.run, "scheduler:loop")
            work = [item for j in range(JOBS) for item in hand_written("hand", j)]
            started = time.perf_counter()
            with ThreadPoolExecutor(16) as pool:
                list(pool.map(lambda rb: client.create(rb[0], rb[1], "hand"), work))
            hand = wait_bound(pods, "hand", JOBS * PODS, started)
            print(f"hand-written: {JOBS} PodGroups + {JOBS * PODS} pods bound in {hand:.2f}s")
            print(f"   {timeline.report('hand', started)}")

            # Round A's pods and PodGroups go away first, so both rounds start from the same
            # scheduler cache (kwok completes the deletions).
            cleared = time.perf_counter()
            with ThreadPoolExecutor(16) as pool:
                list(pool.map(lambda rb: client.delete(rb[0], rb[1]["metadata"]["name"], "hand"),
                              work))  # fmt: skip
            while any(p["metadata"]["namespace"] == "hand" for p in pods.store.list()):
                time.sleep(0.1)
            time.sleep(2.0)  # let the scheduler's cycles catch up with the deletions
            print(f"   round A deleted in {time.perf_counter() - cleared:.1f}s")

            manager.start(manager.controller.run, "controller:job-controller")
            started = time.perf_counter()
            with ThreadPoolExecutor(16) as pool:
                list(pool.map(lambda j: client.create(R.VCJOBS, vcjob("vcjob", j), "vcjob"),
                              range(JOBS)))  # fmt: skip
            ours = wait_bound(pods, "vcjob", JOBS * PODS, started)
            print(f"vcjob:        {JOBS} Jobs -> {JOBS * PODS} pods bound in {ours:.2f}s")
            print(f"   {timeline.report('vcjob', started)}")
            print(f"   ratio {ours / hand:.2f} vs hand-written (goal <= 1.3)")
            print(f"   job-controller CPU: {cpu() * 1000 / JOBS:.1f} ms per job "
                  f"({cpu():.2f}s in sync for {JOBS} jobs)")  # fmt: skip
        finally:
            manager.stop()


if __name__ == "__main__":
    main()
