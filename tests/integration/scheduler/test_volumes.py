"""Persistent volumes on the real control plane: a pod follows its bound volume's node
affinity, and waits, naming its claim, while the claim is unbound (WaitForFirstConsumer).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import pytest

from tests.builders import pod_body, podgroup_body
from tests.integration.scheduler.conftest import Topology, wait_for
from volcano_py.api import JSON
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import NotFound
from volcano_py.scheduler.scheduler import Scheduler


@pytest.fixture
def volumes(client: KubeClient, topology: Topology) -> Iterator[list[tuple[R.APIResource, str]]]:
    """Cluster-wide objects a test creates (PersistentVolumes, StorageClasses), deleted after."""
    made: list[tuple[R.APIResource, str]] = []
    yield made
    for resource, name in made:
        with contextlib.suppress(NotFound):
            client.delete(resource, name)


def _make(client: KubeClient, made: list[tuple[R.APIResource, str]], body: JSON) -> None:
    """Create a cluster-wide object and have the fixture delete it afterwards."""
    resource = {"StorageClass": R.STORAGECLASSES, "PersistentVolume": R.PERSISTENTVOLUMES}[
        body["kind"]
    ]
    client.create(resource, body)
    made.append((resource, body["metadata"]["name"]))


def _claiming_pod(client: KubeClient, ns: str, topo: Topology, name: str, claim: str) -> None:
    client.create(R.PODGROUPS, podgroup_body(name, ns, 1))
    body = pod_body(
        name,
        ns,
        requests={topo.gpu: "1"},
        annotations={"scheduling.k8s.io/group-name": name},
    )
    body["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]
    client.create(R.PODS, body)


def _claim(name: str, ns: str, class_name: str, volume: str = "") -> JSON:
    spec: JSON = {
        "accessModes": ["ReadWriteOnce"],
        "storageClassName": class_name,
        "resources": {"requests": {"storage": "1Gi"}},
    }
    meta: JSON = {"name": name, "namespace": ns}
    if volume:  # bound as the PV controller binds (the test control plane runs none)
        spec["volumeName"] = volume
        meta["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": meta,
        "spec": spec,
    }


def test_a_pod_follows_its_bound_volume_and_waits_for_an_unbound_one(
    client: KubeClient,
    namespace: str,
    topology: Topology,
    volumes: list[tuple[R.APIResource, str]],
    run_scheduler: Callable[[], Callable[[], Scheduler]],
) -> None:
    nodes = [topology.node(f"n{i}", 2) for i in range(3)]
    pv_name = f"{topology.prefix}-pv"
    local = f"{topology.prefix}-local"
    storage_class = {"kind": "StorageClass", "apiVersion": "storage.k8s.io/v1"}
    storage_class |= {"metadata": {"name": local}, "provisioner": "kubernetes.io/no-provisioner"}
    _make(client, volumes, storage_class | {"volumeBindingMode": "WaitForFirstConsumer"})
    client.patch(R.NODES, nodes[2], {"metadata": {"labels": {"example.com/disk": "here"}}})
    required = {"key": "example.com/disk", "operator": "In", "values": ["here"]}
    _make(
        client,
        volumes,
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": pv_name},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": "",
                "hostPath": {"path": "/tmp/data"},
                "nodeAffinity": {
                    "required": {"nodeSelectorTerms": [{"matchExpressions": [required]}]}
                },
            },
        },
    )
    client.create(R.PERSISTENTVOLUMECLAIMS, _claim("bound", namespace, "", pv_name))
    client.create(R.PERSISTENTVOLUMECLAIMS, _claim("later", namespace, local))
    run_scheduler()

    _claiming_pod(client, namespace, topology, "follows", "bound")
    _claiming_pod(client, namespace, topology, "waits", "later")
    node = wait_for(lambda: client.get(R.PODS, "follows", namespace)["spec"].get("nodeName"))
    assert node == nodes[2]

    def condition() -> str:
        pg = client.get(R.PODGROUPS, "waits", namespace)
        return " ".join(c["message"] for c in pg.get("status", {}).get("conditions", []))

    message = wait_for(lambda: m if "WaitForFirstConsumer" in (m := condition()) else "")
    assert 'persistentvolumeclaim "later" is not bound' in message
    assert not client.get(R.PODS, "waits", namespace)["spec"].get("nodeName")
