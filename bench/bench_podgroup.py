"""pg-controller throughput: 1,000 pods from 20 Deployments get their PodGroups (goal <= 2x the
API server's floor; 0 duplicate PodGroups).

A real control plane with kube-controller-manager runs three rounds, each on 20 Deployments
of 50 replicas:

- **floor**: the pods exist (a scheduler name we do not take); a plain client loop issues
  the same writes the controller must make, one after the other: 20 PodGroup creates and
  1,000 pod patches. That is what the API server costs for this work.
- **catch-up**: the pods exist (``schedulerName: volcano``) and pg-controller starts (fresh
  caches: it lists, then reconciles). Timed from its start until every pod carries its
  ``scheduling.k8s.io/group-name``, as seen by a watch. Compared to the floor.
- **live**: pg-controller runs while the 20 Deployments are created at once; printed are the
  time until the last pod exists (kube-controller-manager's pace, not ours) and until the
  last pod is annotated; the difference is the controller's lag.

After each controller round the PodGroups are counted: exactly one per ReplicaSet, and every
pod names its own ReplicaSet's.
"""

from __future__ import annotations

import os
import threading
import time
from collections import Counter
from typing import Any

from devcluster.crds import install_crds
from devcluster.harness import ControlPlane
from volcano_py.api import resources as R
from volcano_py.controllers.framework import ControllerOptions
from volcano_py.controllers.podgroup import PodGroupController
from volcano_py.kube.client import ClientConfig, KubeClient
from volcano_py.kube.errors import AlreadyExists
from volcano_py.kube.informer import EventHandler, Informer, SharedInformerFactory
from volcano_py.kube.runtime import tune_gc

JSON = dict[str, Any]
DEPLOYMENTS = int(os.environ.get("BENCH_DEPLOYMENTS", "20"))
REPLICAS = int(os.environ.get("BENCH_REPLICAS", "50"))
PODS = DEPLOYMENTS * REPLICAS
GROUP = "scheduling.k8s.io/group-name"


def deployment(name: str, namespace: str, scheduler: str) -> JSON:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "annotations": {"scheduling.volcano.sh/group-min-member": str(REPLICAS)},
        },
        "spec": {
            "replicas": REPLICAS,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {
                    "labels": labels,
                    "annotations": {"volcano.sh/network-topology-mode": "hard"},
                },
                "spec": {
                    "schedulerName": scheduler,
                    "containers": [
                        {
                            "name": "main",
                            "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                        }
                    ],
                },
            },
        },
    }


class Watcher:
    """Counts the pods of a namespace (all, and annotated) from a watch."""

    def __init__(self, client: KubeClient, namespace: str) -> None:
        self.informer = Informer(client, R.PODS, namespace=namespace)
        self._lock = threading.Lock()
        self.pods: set[str] = set()
        self.annotated: set[str] = set()
        self.all_created = threading.Event()
        self.all_annotated = threading.Event()
        self.last_created = 0.0
        self.last_annotated = 0.0
        self.informer.add_event_handler(EventHandler(on_add=self._seen, on_update=self._updated))
        self.informer.start()
        self.informer.wait_for_sync(30)

    def _updated(self, old: JSON, new: JSON) -> None:
        self._seen(new)

    def _seen(self, pod: JSON) -> None:
        name = pod["metadata"]["name"]
        now = time.monotonic()
        with self._lock:
            if name not in self.pods:
                self.pods.add(name)
                self.last_created = now
                if len(self.pods) >= PODS:
                    self.all_created.set()
            if (pod["metadata"].get("annotations") or {}).get(GROUP) and name not in self.annotated:
                self.annotated.add(name)
                self.last_annotated = now
                if len(self.annotated) >= PODS:
                    self.all_annotated.set()

    def stop(self) -> None:
        self.informer.stop()
        self.informer.join(5)


def create_namespace(client: KubeClient, name: str) -> None:
    client.create(
        R.NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    )


def create_deployments(client: KubeClient, namespace: str, scheduler: str) -> None:
    for i in range(DEPLOYMENTS):
        client.create(R.DEPLOYMENTS, deployment(f"d{i:02d}", namespace, scheduler))


def floor(client: KubeClient, namespace: str) -> float:
    """The same writes as the controller's, by a plain loop."""
    replicasets = client.list(R.REPLICASETS, namespace)["items"]
    pods = client.list(R.PODS, namespace)["items"]
    started = time.monotonic()
    for rs in replicasets:
        uid = rs["metadata"]["uid"]
        body = {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": f"podgroup-{uid}", "namespace": namespace},
            "spec": {"minMember": REPLICAS},
            "status": {"phase": "Pending"},
        }
        client.create(R.PODGROUPS, body, namespace)
    for pod in pods:
        owner = pod["metadata"]["ownerReferences"][0]["uid"]
        patch = {"metadata": {"annotations": {GROUP: f"podgroup-{owner}"}}}
        client.patch(R.PODS, pod["metadata"]["name"], patch, namespace, patch_type="strategic")
    return time.monotonic() - started


class CountingClient(KubeClient):
    """The controller's client, counting its writes (to show none is wasted)."""

    def __init__(self, config: ClientConfig) -> None:
        super().__init__(config)
        self.writes: Counter[str] = Counter()

    def create(
        self, resource: R.Resource, body: JSON, namespace: str | None = None, **kw: Any
    ) -> JSON:
        self.writes[f"create {resource.plural}"] += 1
        try:
            return super().create(resource, body, namespace, **kw)
        except AlreadyExists:
            self.writes[f"create {resource.plural} AlreadyExists"] += 1
            raise

    def patch(self, resource: R.Resource, name: str, patch: Any, *args: Any, **kw: Any) -> JSON:
        self.writes[f"patch {resource.plural}"] += 1
        return super().patch(resource, name, patch, *args, **kw)

    def update(self, resource: R.Resource, body: JSON, **kw: Any) -> JSON:
        self.writes[f"update {resource.plural}"] += 1
        return super().update(resource, body, **kw)

    def delete(self, resource: R.Resource, name: str, *args: Any, **kw: Any) -> JSON:
        self.writes[f"delete {resource.plural}"] += 1
        return super().delete(resource, name, *args, **kw)

    def take(self) -> str:
        text = ", ".join(f"{k}: {v}" for k, v in sorted(self.writes.items())) or "none"
        self.writes.clear()
        return text


class Running:
    """pg-controller with its own informers, as the manager runs it."""

    def __init__(self, config: ClientConfig) -> None:
        self.client = CountingClient(config)
        self.factory = SharedInformerFactory(KubeClient(config))
        self.controller = PodGroupController()
        self.controller.initialize(ControllerOptions(client=self.client, informers=self.factory))
        self.stop_event = threading.Event()
        self.thread = threading.Thread(
            target=self.controller.run, args=(self.stop_event,), name="pg-controller"
        )

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stop_event.set()
        self.thread.join(30)
        self.factory.shutdown()


def check(client: KubeClient, namespace: str) -> tuple[int, int]:
    """(duplicate or missing PodGroups, pods naming a PodGroup other than their RS's)."""
    replicasets = {rs["metadata"]["uid"] for rs in client.list(R.REPLICASETS, namespace)["items"]}
    names = [pg["metadata"]["name"] for pg in client.list(R.PODGROUPS, namespace)["items"]]
    expected = {f"podgroup-{uid}" for uid in replicasets}
    extra = len(names) - len(set(names)) + len(set(names) ^ expected)
    wrong = 0
    for pod in client.list(R.PODS, namespace)["items"]:
        owner = pod["metadata"]["ownerReferences"][0]["uid"]
        if (pod["metadata"].get("annotations") or {}).get(GROUP) != f"podgroup-{owner}":
            wrong += 1
    return extra, wrong


def main() -> None:
    tune_gc()
    cp = ControlPlane()
    cp.start()
    try:
        client = KubeClient(cp.admin_config())
        install_crds(client)
        for ns in ("floor", "ours", "live"):
            create_namespace(client, ns)

        watch_floor = Watcher(client, "floor")
        watch_ours = Watcher(client, "ours")
        started = time.monotonic()
        create_deployments(client, "floor", "floor-scheduler")
        create_deployments(client, "ours", "volcano")
        watch_floor.all_created.wait(300)
        watch_ours.all_created.wait(300)
        print(
            f"{2 * PODS} pods from {2 * DEPLOYMENTS} Deployments: {time.monotonic() - started:.1f}s"
        )
        time.sleep(2)  # let the ReplicaSet status updates settle

        base = floor(client, "floor")
        print(
            f"floor     {DEPLOYMENTS} PodGroup creates + {PODS} pod patches, "
            f"plain loop: {base:.2f}s"
        )

        running = Running(cp.admin_config())
        started = time.monotonic()
        running.start()
        if not watch_ours.all_annotated.wait(300):
            raise SystemExit(f"catch-up: only {len(watch_ours.annotated)}/{PODS} annotated")
        mine = watch_ours.last_annotated - started
        extra, wrong = check(client, "ours")
        print(
            f"catch-up  pg-controller from start to {PODS} pods annotated: {mine:.2f}s "
            f"({mine / base:.2f}x the floor; goal <= 2x); duplicate PodGroups: {extra}, "
            f"wrong group names: {wrong}"
        )
        print(f"catch-up  controller writes: {running.client.take()}")

        watch_live = Watcher(client, "live")
        started = time.monotonic()
        create_deployments(client, "live", "volcano")
        if not watch_live.all_annotated.wait(300):
            raise SystemExit(f"live: only {len(watch_live.annotated)}/{PODS} annotated")
        created = watch_live.last_created - started
        done = watch_live.last_annotated - started
        extra, wrong = check(client, "live")
        print(
            f"live      {PODS} pods created by kube-controller-manager in {created:.2f}s; all "
            f"annotated at {done:.2f}s (lag {done - created:.2f}s); duplicate PodGroups: {extra}, "
            f"wrong group names: {wrong}"
        )
        print(
            f"live      end to end {done / base:.2f}x the floor; controller writes: "
            f"{running.client.take()}"
        )
        queue = running.controller.queue
        print(f"pg-controller queue depth at the end: {len(queue)}")
        running.stop()
        for watcher in (watch_floor, watch_ours, watch_live):
            watcher.stop()
    finally:
        cp.stop()


if __name__ == "__main__":
    main()
