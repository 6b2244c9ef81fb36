"""The informers' head start (kube/prefetch.py) with a scripted client: no sockets."""

from __future__ import annotations

import ctypes
import threading
import time
from typing import Any

import pytest

from tests.unit.kube.test_informer_reflector import ScriptedClient, cm
from tests.unit.waits import WAIT_S
from volcano_py.api import resources as R
from volcano_py.kube.errors import Forbidden
from volcano_py.kube.informer import EventHandler, Listed, SharedInformerFactory
from volcano_py.kube.prefetch import ListPrefetch
from volcano_py.kube.runtime import TASKS

JSON = dict[str, Any]


class PagedClient:
    """Two pages of ConfigMaps; Queues are forbidden; every call is counted."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str | None]] = []
        self.closed = False

    def list(self, resource: Any, namespace: Any = None, **kwargs: Any) -> JSON:
        self.calls.append((resource.plural, kwargs.get("continue_token")))
        if resource is R.QUEUES:
            raise Forbidden("queues is forbidden")
        if kwargs.get("continue_token") is None:
            return {"metadata": {"continue": "page2"}, "items": [cm("a", "3")]}
        return {"metadata": {"resourceVersion": "9"}, "items": [cm("b", "5")]}

    def close(self) -> None:
        self.closed = True


def test_prefetch_lists_every_page_transformed_and_hands_each_list_out_once() -> None:
    client = PagedClient()
    prefetch = ListPrefetch(lambda: client, (R.CONFIGMAPS, R.QUEUES))  # type: ignore[arg-type,return-value]
    prefetch.start()
    assert prefetch.wait(10)
    listed = prefetch.take(R.CONFIGMAPS)
    assert listed is not None
    assert listed.resource_version == "9"
    assert sorted(listed.items) == ["ns/a", "ns/b"]
    assert "managedFields" not in listed.items["ns/a"]["metadata"]  # the default transform
    assert prefetch.take(R.CONFIGMAPS) is None  # once
    assert prefetch.take(R.QUEUES) is None  # a failed list is simply absent
    assert client.closed


# A C thread-exit handler that sleeps, as OpenSSL 3.0's runs under its lock: the thread that
# sets a value for this key lives on in the system that many microseconds after its join.
_LIBC = ctypes.CDLL(None)
_LINGER_KEY = ctypes.c_uint()
_LIBC.pthread_key_create(ctypes.byref(_LINGER_KEY), ctypes.cast(_LIBC.usleep, ctypes.c_void_p))


def _linger_after_exit(seconds: float) -> int:
    """Make the calling thread's exit in the system take ``seconds``; return its id."""
    _LIBC.pthread_setspecific(_LINGER_KEY, ctypes.c_void_p(int(seconds * 1_000_000)))
    return threading.get_native_id()


@pytest.mark.skipif(not TASKS.is_dir(), reason="the system does not list threads (not Linux)")
def test_wait_returns_once_the_system_ended_every_thread_not_only_once_joined() -> None:
    ids: list[int] = []

    class LingeringClient(PagedClient):
        def list(self, resource: Any, namespace: Any = None, **kwargs: Any) -> JSON:
            ids.append(_linger_after_exit(0.3))
            return super().list(resource, namespace, **kwargs)

    client = LingeringClient()

    def connect() -> Any:
        ids.append(_linger_after_exit(0.3))
        return client

    prefetch = ListPrefetch(connect, (R.CONFIGMAPS, R.QUEUES))
    prefetch.start()
    assert prefetch.wait(10)
    assert len(set(ids)) == 3  # the prefetch thread and one per list
    assert [tid for tid in ids if (TASKS / str(tid)).exists()] == []  # a fork is safe now


def test_a_client_that_cannot_be_made_leaves_nothing_and_does_not_raise() -> None:
    def broken() -> Any:
        raise OSError("no kubeconfig")

    prefetch = ListPrefetch(broken, (R.CONFIGMAPS,))
    prefetch.start()
    assert prefetch.wait(10)
    assert prefetch.take(R.CONFIGMAPS) is None


def test_drop_forgets_lists_and_an_unfinished_prefetch_hands_out_nothing() -> None:
    release = threading.Event()

    class SlowClient(PagedClient):
        def list(self, resource: Any, namespace: Any = None, **kwargs: Any) -> JSON:
            release.wait(2 * WAIT_S)
            return super().list(resource, namespace, **kwargs)

    prefetch = ListPrefetch(SlowClient, (R.CONFIGMAPS,))  # type: ignore[arg-type]
    prefetch.start()
    started = time.monotonic()
    assert not prefetch.wait(0.2)  # the fork goes ahead; the worker lists for itself
    assert time.monotonic() - started < WAIT_S  # not held for the list's 60 s
    release.set()
    time.sleep(0.3)
    assert prefetch.take(R.CONFIGMAPS) is None  # dropped when the wait gave up

    done = ListPrefetch(PagedClient, (R.CONFIGMAPS,))  # type: ignore[arg-type]
    done.start()
    assert done.wait(10)
    done.drop()
    assert done.take(R.CONFIGMAPS) is None


class HeadStart:
    def __init__(self, lists: dict[Any, Listed]) -> None:
        self.lists = lists

    def take(self, resource: Any) -> Listed | None:
        return self.lists.pop(resource, None)


def test_an_informer_starts_from_its_head_start_and_watches_from_its_resource_version() -> None:
    done = threading.Event()
    client = ScriptedClient(
        [[cm("server-side", "1")]],
        # made after the head start was listed: arrives as watch events
        [[("ADDED", cm("c", "8")), ("DELETED", cm("a", "9"))]],
        done,
    )
    head = HeadStart({R.CONFIGMAPS: Listed({"ns/a": cm("a", "3"), "ns/b": cm("b", "5")}, "7")})
    factory = SharedInformerFactory(client, head)  # type: ignore[arg-type]
    informer = factory.informer(R.CONFIGMAPS)
    scoped = factory.informer(R.CONFIGMAPS, namespace="ns")  # not cluster-wide: lists itself
    seen: list[tuple[str, str]] = []
    informer.add_event_handler(
        EventHandler(
            on_add=lambda o: seen.append(("add", o["metadata"]["name"])),
            on_delete=lambda o: seen.append(("delete", o["metadata"]["name"])),
        )
    )
    informer.start()
    assert done.wait(WAIT_S)
    deadline = time.monotonic() + WAIT_S
    while len(seen) < 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    informer.stop()
    assert client.list_calls == 0
    assert client.watch_rvs[0] == "7"
    assert sorted(informer.store.list_keys()) == ["ns/b", "ns/c"]
    assert sorted(seen) == [("add", "a"), ("add", "b"), ("add", "c"), ("delete", "a")]
    assert head.take(R.CONFIGMAPS) is None
    assert scoped is not informer


def test_the_master_forgets_its_lists_after_the_fork_and_gives_their_memory_back(
    monkeypatch: Any,
) -> None:
    from volcano_py.commands import manager as command
    from volcano_py.kube import idle_trim

    released: list[object] = []
    monkeypatch.setattr(idle_trim, "release_memory", released.append)
    prefetch = ListPrefetch(lambda: PagedClient(), (R.CONFIGMAPS,))  # type: ignore[arg-type,return-value]
    prefetch.start()
    assert prefetch.wait(10)
    command._forget_lists(prefetch)
    assert prefetch.take(R.CONFIGMAPS) is None
    assert len(released) == 1  # a collection and malloc_trim, once per fork
