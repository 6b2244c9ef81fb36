"""The informers' head start (kube/prefetch.py) against the real API server: a list fetched
before the informer exists is used instead of its own, and what changed in between arrives."""

from __future__ import annotations

from typing import Any

from devcluster.harness import ControlPlane
from tests.integration.test_informer import Recorder, configmap, wait_until
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.kube.config import load_config
from volcano_py.kube.informer import SharedInformerFactory
from volcano_py.kube.prefetch import ListPrefetch


class CountingClient(KubeClient):
    """The real client, counting the LISTs it sends per resource."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lists: list[str] = []

    def list(self, resource: Any, *args: Any, **kwargs: Any) -> Any:
        self.lists.append(resource.plural)
        return super().list(resource, *args, **kwargs)


def test_an_informer_starts_from_the_head_start_and_misses_nothing_made_after_it(
    control_plane: ControlPlane, client: KubeClient, namespace: str
) -> None:
    for name in ("a", "b"):
        client.create(R.CONFIGMAPS, configmap(name, namespace))
    head_start = ListPrefetch(
        lambda: KubeClient(load_config(str(control_plane.kubeconfig))), (R.CONFIGMAPS, R.QUEUES)
    )
    head_start.start()
    assert head_start.wait(30)
    # between the lists and the informers (the master's imports and the fork)
    client.patch(R.CONFIGMAPS, "a", {"data": {"v": "2"}}, namespace)
    client.delete(R.CONFIGMAPS, "b", namespace)
    client.create(R.CONFIGMAPS, configmap("c", namespace))

    counting = CountingClient(load_config(str(control_plane.kubeconfig)))
    factory = SharedInformerFactory(counting, head_start)
    try:
        informer = factory.informer(R.CONFIGMAPS)
        scoped = factory.informer(R.CONFIGMAPS, namespace=namespace)  # lists for itself
        recorder = Recorder()
        informer.add_event_handler(recorder.handler())
        factory.start()
        assert factory.wait_for_cache_sync(10)

        def mine() -> list[str]:
            return sorted(
                o["metadata"]["name"] for o in informer.store.by_index("namespace", namespace)
            )

        wait_until(lambda: mine() == ["a", "c"])
        assert informer.store.get(f"{namespace}/a")["data"] == {"v": "2"}
        wait_until(lambda: "b" in recorder.names("delete"))
        assert counting.lists == ["configmaps"]  # the namespaced informer's own list only
        assert sorted(o["metadata"]["name"] for o in scoped.store.list()) == ["a", "c"]
        assert head_start.take(R.CONFIGMAPS) is None  # handed out once
        head_start.drop()
        assert head_start.take(R.QUEUES) is None  # and the master keeps nothing
    finally:
        factory.shutdown()
