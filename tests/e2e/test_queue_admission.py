"""Queue admission end to end: the API server calls the whole process over TLS.

The session's manager serves ``/queues/validate`` and ``/queues/mutate``; ``install_webhook``
registers manifests/' configurations pointing at it. Each rule family is tried once through
the API server (the rules themselves are table-tested in tests/unit/webhooks), and the
guarantee stall of issue 43 is replayed: a Queue guaranteeing 1e15 CPUs is refused, and a
probe gang in ``default`` binds.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.builders import create_node, pod_body, podgroup_body
from tests.e2e.conftest import ManagerProcess
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient, resource_path
from volcano_py.kube.errors import ApiError, NotFound

pytestmark = pytest.mark.timeout(180)

JSON = dict[str, Any]


def queue_body(name: str, **spec: Any) -> JSON:
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
            "metadata": {"name": name}, "spec": spec}  # fmt: skip


@pytest.fixture
def gpu_node(client: KubeClient) -> Iterator[tuple[str, str]]:
    """A fresh node offering a resource only this test asks for: (node, resource)."""
    suffix = uuid.uuid4().hex[:6]
    node, resource = f"qadm-{suffix}", f"test.volcano.sh/qadm-{suffix}"
    create_node(
        client, node, allocatable={"cpu": "8", "memory": "16Gi", "pods": "20", resource: "1"}
    )
    yield node, resource
    with contextlib.suppress(NotFound):
        client.delete(R.NODES, node)


@pytest.fixture
def queue_admission(manager: ManagerProcess, client: KubeClient, gpu_node: Any) -> str:
    """A unique queue name, once the API server sends Queues to the manager (dry-run probe)."""
    deadline = time.monotonic() + 60
    body = queue_body("probe", capability={"cpu": "-1"})
    while True:
        try:
            client.request("POST", resource_path(R.QUEUES), query={"dryRun": "All"}, body=body)
        except ApiError as e:
            if "validatequeue.volcano.sh" in e.message:
                break
        assert time.monotonic() < deadline, (
            "the Queue webhook never answered:\n" + manager.log()[-4000:]
        )
        time.sleep(0.5)
    return f"qadm-{uuid.uuid4().hex[:6]}"


def test_negative_and_inconsistent_quantities_are_denied_naming_the_field(
    queue_admission: str, client: KubeClient
) -> None:
    with pytest.raises(ApiError) as info:
        client.create(R.QUEUES, queue_body(queue_admission, deserved={"cpu": "-2"}))
    assert "spec.deserved[cpu]: Invalid value: -2: must not be negative" in info.value.message
    with pytest.raises(ApiError) as info:
        client.create(R.QUEUES, queue_body(queue_admission, guarantee={"resource": {"cpu": "2"}}))
    assert "spec.deserved[cpu]" in info.value.message
    with pytest.raises(NotFound):
        client.get(R.QUEUES, queue_admission)


def test_a_queue_gets_volcanos_defaults(queue_admission: str, client: KubeClient) -> None:
    client.create(R.QUEUES, queue_body(queue_admission))
    try:
        spec = client.get(R.QUEUES, queue_admission)["spec"]
        assert spec["weight"] == 1
        assert spec["reclaimable"] is True
    finally:
        client.delete(R.QUEUES, queue_admission)


def test_root_default_and_a_queue_with_podgroups_cannot_be_deleted(
    queue_admission: str, client: KubeClient, namespace: str
) -> None:
    for name in ("root", "default"):
        with pytest.raises(ApiError) as info:
            client.delete(R.QUEUES, name)
        assert f"queue '{name}' can not be deleted" in info.value.message
    client.create(R.QUEUES, queue_body(queue_admission))
    held = podgroup_body("held", namespace, 1, queue=queue_admission)
    client.create(R.PODGROUPS, held, namespace)
    # the manager's PodGroup cache sees the PodGroup, then its deletion: dry-run deletes
    assert "1 PodGroups still name it" in _delete_answer(client, queue_admission, refused=True)
    client.delete(R.PODGROUPS, "held", namespace)
    assert _delete_answer(client, queue_admission, refused=False) == ""
    client.delete(R.QUEUES, queue_admission)


def _delete_answer(client: KubeClient, name: str, *, refused: bool) -> str:
    """The message of a dry-run delete of Queue ``name``, once it is (not) refused."""
    deadline = time.monotonic() + 30
    while True:
        message = ""
        try:
            client.request("DELETE", resource_path(R.QUEUES, None, name), query={"dryRun": "All"})
        except ApiError as e:
            message = e.message
        if bool(message) == refused:
            return message
        assert time.monotonic() < deadline, message
        time.sleep(0.3)


def test_a_guarantee_the_cluster_can_never_honour_is_refused_and_default_still_binds(
    queue_admission: str, client: KubeClient, namespace: str, gpu_node: tuple[str, str]
) -> None:
    huge = {"cpu": "1e15"}
    with pytest.raises(ApiError) as info:
        client.create(
            R.QUEUES, queue_body(queue_admission, deserved=huge, guarantee={"resource": huge})
        )
    assert "spec.guarantee.resource[cpu]: Invalid value: 1e15" in info.value.message
    node, resource = gpu_node
    client.create(R.PODGROUPS, podgroup_body("probe", namespace, 1, queue="default"), namespace)
    pod = pod_body("probe-0", namespace, requests={resource: "1"},
                   annotations={"scheduling.k8s.io/group-name": "probe"})  # fmt: skip
    client.create(R.PODS, pod, namespace)
    deadline = time.monotonic() + 60
    while not client.get(R.PODS, "probe-0", namespace)["spec"].get("nodeName"):
        assert time.monotonic() < deadline, "the probe gang in default never bound"
        time.sleep(0.2)
    assert client.get(R.PODS, "probe-0", namespace)["spec"]["nodeName"] == node


def test_a_podgroup_takes_its_namespaces_queue_and_a_bad_budget_pod_is_refused(
    queue_admission: str, client: KubeClient, namespace: str
) -> None:
    patch = {"metadata": {"annotations": {"scheduling.volcano.sh/queue-name": "team-q"}}}
    client.patch(R.NAMESPACES, namespace, patch)
    deadline = time.monotonic() + 30
    while True:  # the manager's Namespace cache must see the annotation
        name = f"pg-{uuid.uuid4().hex[:4]}"
        created = client.create(R.PODGROUPS, podgroup_body(name, namespace, 1), namespace)
        if created["spec"]["queue"] == "team-q":
            break
        assert time.monotonic() < deadline, created["spec"]
        time.sleep(0.3)
    bad = pod_body("budget", namespace, annotations={"volcano.sh/jdb-min-available": "0"})
    with pytest.raises(ApiError) as info:
        client.create(R.PODS, bad, namespace)
    assert "validatepod.volcano.sh" in info.value.message
    assert "metadata.annotations[volcano.sh/jdb-min-available]" in info.value.message
