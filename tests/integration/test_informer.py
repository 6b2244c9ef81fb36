"""The shared informer against the real API server."""

from __future__ import annotations

import functools
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from devcluster.harness import ControlPlane, free_port
from tests.builders import exact, hypernode_body, pod_body
from tests.fixtures import install_crds
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.kube.informer import EventHandler, Informer, SharedInformerFactory
from volcano_py.kube.transforms import slim_pod

JSON = dict[str, Any]


class Recorder:
    """Collects notifications as (kind, name, data-or-None) tuples."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, Any]] = []
        self._lock = threading.Lock()

    def handler(self) -> EventHandler:
        return EventHandler(
            on_add=lambda o: self._record("add", o),
            on_update=lambda old, new: self._record("update", new),
            on_delete=lambda o: self._record("delete", o),
        )

    def _record(self, kind: str, obj: JSON) -> None:
        with self._lock:
            self.events.append((kind, obj["metadata"]["name"], obj.get("data")))

    def names(self, kind: str) -> list[str]:
        with self._lock:
            return [name for k, name, _ in self.events if k == kind]


def wait_until(predicate: Callable[[], bool], timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.02)


def configmap(name: str, namespace: str, value: str = "1") -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": {"v": value},
    }


@pytest.fixture
def factory(client: KubeClient) -> Iterator[SharedInformerFactory]:
    f = SharedInformerFactory(client)
    yield f
    f.shutdown()


def test_informer_sees_create_update_delete_in_order(
    client: KubeClient, namespace: str, factory: SharedInformerFactory
) -> None:
    informer = factory.informer(R.CONFIGMAPS, namespace=namespace)
    recorder = Recorder()
    informer.add_event_handler(recorder.handler())
    factory.start()
    assert factory.wait_for_cache_sync(10)

    client.create(R.CONFIGMAPS, configmap("a", namespace, "1"))
    client.patch(R.CONFIGMAPS, "a", {"data": {"v": "2"}}, namespace)
    client.create(R.CONFIGMAPS, configmap("b", namespace))
    client.delete(R.CONFIGMAPS, "a", namespace)

    expected = [
        ("add", "a", {"v": "1"}),
        ("update", "a", {"v": "2"}),
        ("add", "b", {"v": "1"}),
        ("delete", "a", {"v": "2"}),
    ]
    wait_until(lambda: len([e for e in recorder.events if e[1] in "ab"]) >= 4)
    assert [e for e in recorder.events if e[1] in ("a", "b")] == expected
    assert informer.store.get(f"{namespace}/a") is None
    assert informer.store.get(f"{namespace}/b")["data"] == {"v": "1"}
    assert [o["metadata"]["name"] for o in informer.store.by_index("namespace", namespace)] == ["b"]


def test_informer_late_handler_gets_existing_objects_and_has_synced(
    client: KubeClient, namespace: str, factory: SharedInformerFactory
) -> None:
    for name in ("x", "y", "z"):
        client.create(R.CONFIGMAPS, configmap(name, namespace))
    informer = factory.informer(R.CONFIGMAPS, namespace=namespace)
    factory.start()
    assert informer.wait_for_sync(10)

    recorder = Recorder()
    registration = informer.add_event_handler(recorder.handler())
    assert registration.wait_synced(5)
    assert sorted(recorder.names("add")) == ["x", "y", "z"]


def test_informer_handler_that_raises_does_not_stop_delivery(
    client: KubeClient, namespace: str, factory: SharedInformerFactory
) -> None:
    seen: list[str] = []

    def flaky(obj: JSON) -> None:
        seen.append(obj["metadata"]["name"])
        if obj["metadata"]["name"] == "boom":
            raise RuntimeError("handler bug")

    informer = factory.informer(R.CONFIGMAPS, namespace=namespace)
    informer.add_event_handler(EventHandler(on_add=flaky))
    factory.start()
    assert informer.wait_for_sync(10)
    client.create(R.CONFIGMAPS, configmap("boom", namespace))
    client.create(R.CONFIGMAPS, configmap("after", namespace))
    wait_until(lambda: "after" in seen)
    assert seen == ["boom", "after"]


def test_informer_field_selector_sees_only_matching_objects(
    client: KubeClient, namespace: str, factory: SharedInformerFactory
) -> None:
    informer = factory.informer(
        R.CONFIGMAPS, namespace=namespace, field_selector="metadata.name=wanted"
    )
    recorder = Recorder()
    informer.add_event_handler(recorder.handler())
    factory.start()
    assert informer.wait_for_sync(10)
    client.create(R.CONFIGMAPS, configmap("other", namespace))
    client.create(R.CONFIGMAPS, configmap("wanted", namespace))
    wait_until(lambda: "wanted" in recorder.names("add"))
    assert recorder.names("add") == ["wanted"]
    assert informer.store.list_keys() == [f"{namespace}/wanted"]


def test_shared_informer_factory_returns_one_informer_per_resource_and_selector(
    client: KubeClient,
) -> None:
    factory = SharedInformerFactory(client)
    assert factory.informer(R.PODS) is factory.informer(R.PODS)
    assert factory.informer(R.PODS) is not factory.informer(R.PODS, namespace="x")
    assert factory.informer(R.NODES) is not factory.informer(R.PODS)


def test_informer_crd_objects_flow_like_core_ones(
    client: KubeClient, factory: SharedInformerFactory
) -> None:
    informer = factory.informer(R.HYPERNODES)
    recorder = Recorder()
    informer.add_event_handler(recorder.handler())
    factory.start()
    assert informer.wait_for_sync(10)
    name = f"hn-flow-{time.monotonic_ns()}"
    client.create(R.HYPERNODES, hypernode_body(name, 1, [exact("node-a")]))
    client.patch(R.HYPERNODES, name, {"spec": {"tierName": "rack"}})
    client.delete(R.HYPERNODES, name)
    wait_until(lambda: name in recorder.names("delete"))
    kinds = [k for k, n, _ in recorder.events if n == name]
    assert kinds == ["add", "update", "delete"]
    assert informer.store.get(name) is None


# -- the API server goes away: its own control plane, so other tests are not disturbed ----


@pytest.fixture(scope="module")
def private_plane() -> Iterator[ControlPlane]:
    cp = ControlPlane(controller_manager=False).start()
    try:
        install_crds(KubeClient(cp.admin_config()))
        yield cp
    finally:
        cp.stop()


def test_informer_relists_after_410_without_losing_a_delete(private_plane: ControlPlane) -> None:
    """While the informer is cut off, objects change and etcd is compacted: the informer's
    old resourceVersion is gone (410), it re-lists and reports the difference."""
    cp = private_plane
    admin = KubeClient(cp.admin_config())
    ns = "relist"
    admin.create(R.NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    for name in ("keep", "doomed", "changed"):
        admin.create(R.CONFIGMAPS, configmap(name, ns))

    informer = Informer(KubeClient(cp.admin_config()), R.CONFIGMAPS, namespace=ns)
    recorder = Recorder()
    informer.add_event_handler(recorder.handler())
    informer.start()
    try:
        assert informer.wait_for_sync(10)
        original_port = cp.apiserver_port
        cp.stop_apiserver()
        # Change the world through a second API server the informer does not know about.
        cp.start_apiserver(port=free_port())
        other = KubeClient(cp.admin_config())
        other.delete(R.CONFIGMAPS, "doomed", ns)
        other.patch(R.CONFIGMAPS, "changed", {"data": {"v": "2"}}, ns)
        other.create(R.CONFIGMAPS, configmap("born", ns))
        cp.compact_etcd()
        cp.stop_apiserver()
        cp.start_apiserver(port=original_port)

        wait_until(lambda: "doomed" in recorder.names("delete"), timeout=60)
        wait_until(lambda: "born" in recorder.names("add"))
        assert informer.relists >= 1
        assert sorted(k.split("/")[1] for k in informer.store.list_keys()) == [
            "born",
            "changed",
            "keep",
        ]
        assert informer.store.get(f"{ns}/changed")["data"] == {"v": "2"}
        assert ("update", "changed", {"v": "2"}) in recorder.events
        assert "keep" not in recorder.names("update")
    finally:
        informer.stop()


def test_informer_converges_after_apiserver_restart_mid_watch(
    private_plane: ControlPlane,
) -> None:
    cp = private_plane
    admin = KubeClient(cp.admin_config())
    informer = Informer(KubeClient(cp.admin_config()), R.HYPERNODES)
    recorder = Recorder()
    informer.add_event_handler(recorder.handler())
    informer.start()
    try:
        assert informer.wait_for_sync(10)
        admin.create(R.HYPERNODES, hypernode_body("before-crash", 1, [exact("n1")]))
        wait_until(lambda: "before-crash" in recorder.names("add"))
        cp.restart_apiserver(signal.SIGKILL)
        admin.create(R.HYPERNODES, hypernode_body("after-restart", 1, [exact("n2")]))
        admin.delete(R.HYPERNODES, "before-crash")
        wait_until(lambda: "after-restart" in recorder.names("add"), timeout=60)
        wait_until(lambda: "before-crash" in recorder.names("delete"))
        assert informer.store.list_keys() == ["after-restart"]
    finally:
        informer.stop()


def test_pods_listed_and_watched_equal_the_servers_objects_minus_what_the_transform_drops(
    client: KubeClient, namespace: str, factory: SharedInformerFactory
) -> None:
    # Pods decode with managedFields cut out of the bytes (kube/slimjson.py): the cached
    # objects must be exactly what the transform makes of the whole object
    def touch(name: str) -> None:  # a second manager: two managedFields entries
        body = {"metadata": {"annotations": {"touched": 'v"]'}}}
        client.patch(R.PODS, name, body, namespace, field_manager="other")

    def pod(name: str) -> JSON:
        note = {"note": ',"managedFields":[]]['}
        return pod_body(name, namespace, requests={"cpu": "1"}, annotations=note)

    client.create(R.PODS, pod("listed"))
    touch("listed")
    informer = factory.informer(R.PODS, namespace=namespace)
    factory.start()
    assert factory.wait_for_cache_sync(10)
    client.create(R.PODS, pod("watched"))
    touch("watched")
    for name in ("listed", "watched"):
        key = f"{namespace}/{name}"
        wait_until(functools.partial(is_touched, informer, key))
        whole = client.get(R.PODS, name, namespace)
        assert len(whole["metadata"]["managedFields"]) == 2
        cached = dict(informer.store.get(key) or {})
        assert "managedFields" not in cached["metadata"]
        for typed in (cached, whole):  # a list's items carry no kind (a watch's and a GET's do)
            typed.pop("kind", None)
            typed.pop("apiVersion", None)
        assert cached == slim_pod(whole)


def is_touched(informer: Informer, key: str) -> bool:
    """Whether the cached object ``key`` has the annotation ``touched``."""
    obj = informer.store.get(key) or {}
    return "touched" in (obj.get("metadata", {}).get("annotations") or {})
