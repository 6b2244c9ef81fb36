"""A manager (scheduler + topology view, no controllers, no webhook) on the real control plane.

``ui_cluster`` starts one ``Manager`` in this process for the package: its ops server on a
free loopback port serves ``/ui`` and ``/api/topology``; the scheduler places gangs on a
small topology made for the package (two racks of two nodes under one spine). The nodes
carry a package-unique GPU-like resource whose name ends in ``gpu`` (so the view counts it
as GPUs, and only these nodes can take the tests' gangs). Everything is deleted afterwards;
each test's gangs right after it (``clean_gangs``), so every test starts with free racks.
"""

from __future__ import annotations

import contextlib
import json
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.builders import (
    create_node,
    exact,
    force_delete_pod,
    hypernode_body,
    pod_body,
    podgroup_body,
)
from tests.fixtures import client, control_plane
from tests.integration.scheduler.conftest import wait_for
from volcano_py.api import resources as R
from volcano_py.api.constants import KUBE_GROUP_NAME_ANNOTATION
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import NotFound
from volcano_py.manager import Manager, ManagerOptions

__all__ = ["UiCluster", "clean_gangs", "client", "control_plane", "ui_cluster", "wait_for"]

JSON = dict[str, Any]
GPUS_PER_NODE = 4


@dataclass
class UiCluster:
    """The manager's view URL and the topology it shows."""

    client: KubeClient
    manager: Manager
    namespace: str
    prefix: str
    gpu: str
    racks: list[str] = field(default_factory=list)
    spine: str = ""
    nodes: dict[str, list[str]] = field(default_factory=dict)
    created: list[tuple[str, str]] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.manager.ops.port}"

    def topology(self) -> JSON:
        with urllib.request.urlopen(f"{self.url}/api/topology", timeout=10) as resp:
            data: JSON = json.loads(resp.read())
        return data

    def gang_objects(
        self, name: str, pods: int, gpus_each: int, *, tier: int = 1, partition: int = 0
    ) -> tuple[str, list[JSON]]:
        """A hard-mode gang of whole-GPU pods limited to ``tier``: ``ns/name`` and its objects.

        ``partition``: SubJobs of that many pods each (policy ``part``, each within a rack,
        pods labelled ``partition-id``). Recorded for ``clean_gangs`` to delete after the
        test, however they get created.
        """
        full = f"{self.prefix}-{name}"
        group = podgroup_body(
            full,
            self.namespace,
            pods,
            network_topology={"mode": "hard", "highestTierAllowed": tier},
        )
        if partition:
            group["spec"]["subGroupPolicy"] = [
                {
                    "name": "part",
                    "subGroupSize": partition,
                    "matchLabelKeys": ["partition-id"],
                    "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
                }
            ]
        objects: list[JSON] = [group]
        for i in range(pods):
            objects.append(
                pod_body(
                    f"{full}-{i}",
                    self.namespace,
                    requests={"cpu": "1", self.gpu: str(gpus_each)},
                    annotations={KUBE_GROUP_NAME_ANNOTATION: full},
                    labels={"partition-id": str(i // partition)} if partition else None,
                )
            )
        self.created += [(o["kind"], o["metadata"]["name"]) for o in objects]
        return f"{self.namespace}/{full}", objects

    def gang(self, name: str, pods: int, gpus_each: int, *, tier: int = 1) -> str:
        """``gang_objects`` created through the client; returns ``ns/name``."""
        key, objects = self.gang_objects(name, pods, gpus_each, tier=tier)
        for obj in objects:
            resource = R.PODGROUPS if obj["kind"] == "PodGroup" else R.PODS
            self.client.create(resource, obj, self.namespace)
        return key

    def delete_gangs(self) -> None:
        """Delete every gang object a test created (pods at once: no kubelet here)."""
        for kind, name in self.created:
            with contextlib.suppress(NotFound):
                if kind == "Pod":
                    force_delete_pod(self.client, name, self.namespace)
                else:
                    self.client.delete(R.PODGROUPS, name, self.namespace)
        self.created.clear()

    def gang_in_view(self, key: str) -> JSON | None:
        return next(
            (g for g in self.topology()["gangs"] if f"{g['namespace']}/{g['name']}" == key), None
        )


@pytest.fixture(scope="package")
def ui_cluster(client: KubeClient) -> Iterator[UiCluster]:
    """See the module docstring."""
    prefix = f"ui{uuid.uuid4().hex[:5]}"
    namespace = f"{prefix}-ns"
    client.create(
        R.NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
    )
    fatal: list[str] = []
    options = ManagerOptions(
        controllers=[],
        schedule_period=0.2,
        leader_elect=False,
        metrics_host="127.0.0.1",
        metrics_port=0,
        namespace=namespace,
    )
    manager = Manager(options, client=client, on_fatal=fatal.append)
    cluster = UiCluster(client, manager, namespace, prefix, f"test.volcano.sh/{prefix}-gpu")
    created_nodes: list[str] = []
    for rack in ("rack-a", "rack-b"):
        members = []
        for i in (1, 2):
            name = f"{prefix}-{rack}-n{i}"
            create_node(
                client,
                name,
                allocatable={
                    "cpu": "16",
                    "memory": "64Gi",
                    "pods": "110",
                    cluster.gpu: str(GPUS_PER_NODE),
                },
            )
            created_nodes.append(name)
            cluster.nodes.setdefault(f"{prefix}-{rack}", []).append(name)
            members.append(exact(name))
        full = f"{prefix}-{rack}"
        client.create(R.HYPERNODES, hypernode_body(full, 1, members, tier_name="rack"))
        cluster.racks.append(full)
    cluster.spine = f"{prefix}-spine"
    spine_members = [exact(r, "HyperNode") for r in cluster.racks]
    client.create(R.HYPERNODES, hypernode_body(cluster.spine, 2, spine_members, tier_name="spine"))
    manager.start()
    try:
        wait_for(manager.is_ready, timeout=60)
        yield cluster
    finally:
        manager.stop()
        assert not fatal, fatal
        for name in [cluster.spine, *cluster.racks]:
            with contextlib.suppress(NotFound):
                client.delete(R.HYPERNODES, name)
        for name in created_nodes:
            with contextlib.suppress(NotFound):
                client.delete(R.NODES, name)
        with contextlib.suppress(NotFound):
            client.delete(R.NAMESPACES, namespace)


@pytest.fixture(autouse=True)
def clean_gangs(ui_cluster: UiCluster) -> Iterator[None]:
    """Each test starts with every rack free: its gangs are deleted, and the view shows it."""
    yield
    ui_cluster.delete_gangs()

    def all_free() -> bool:
        hns = ui_cluster.topology()["hyperNodes"]
        return all(hns[r]["gpu"][0] == hns[r]["gpu"][1] for r in ui_cluster.racks)

    wait_for(all_free, timeout=30)
