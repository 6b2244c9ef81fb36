"""Shared informers: one list+watch per resource feeding an indexed store and handlers.

Contract (what controllers, the scheduler cache and the webhook may rely on):

- **List, then watch.** An informer lists its resource (paginated), replaces its store and
  then watches from the list's resourceVersion with bookmarks, so no change between the
  two is lost. When the watch ends (server timeout, dropped connection) it resumes from the
  last resourceVersion it saw; connection failures back off exponentially (0.5 s to 30 s).
- **410 Gone re-lists.** When the server no longer has history for our resourceVersion
  (etcd compacted, API server restarted), the informer lists again and turns the
  difference between its store and the new list into add/update/delete notifications:
  an object deleted while we were away is delivered as a delete, never silently dropped.
- **Handlers never block the watch.** Every registered handler has its own unbounded
  queue and thread (``handlers.py``); notifications for one handler arrive in the order the
  store changed. A handler registered late first receives an add for every object already
  stored. A handler that raises is logged with the object key; the next notification still
  comes.
- **has_synced** is true once the first list is in the store; a handler's own
  ``has_synced`` once it has processed the adds of that first list.
- Objects are stored as the server sent them, minus what the resource's transform drops
  (``volcano_py.kube.transforms``: managedFields everywhere, unread bulk of Pods and Nodes),
  and are never mutated afterwards: treat them as read-only. Pods' and Nodes' managedFields
  are cut out of the bytes before decoding (``volcano_py.kube.slimjson``).
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from volcano_py.api import JSON
from volcano_py.api.resources import APIResource
from volcano_py.kube.client import KubeClient, WatchStream, list_pages
from volcano_py.kube.errors import ApiError, ConnectionFailed, Gone, error_for
from volcano_py.kube.handlers import ADD, DELETE, SYNCED, UPDATE, Listener
from volcano_py.kube.handlers import EventHandler as EventHandler  # this module's API
from volcano_py.kube.handlers import HandlerRegistration as HandlerRegistration
from volcano_py.kube.retry import Backoff
from volcano_py.kube.slimjson import decoder_for
from volcano_py.kube.store import NAMESPACE_INDEX, IndexFunc, Store, key_of, namespace_index
from volcano_py.kube.transforms import Transform, default_transform

log = logging.getLogger(__name__)


RECONNECT_BACKOFF = Backoff(duration=0.5, factor=2.0, jitter=0.2, steps=1_000_000, cap=30.0)


@dataclass(frozen=True, slots=True)
class Listed:
    """A whole collection as an informer stores it.

    Transformed objects by key, and the resourceVersion to watch from.
    """

    items: dict[str, JSON]
    resource_version: str


def list_objects(
    client: KubeClient,
    resource: APIResource,
    transform: Transform,
    *,
    namespace: str | None = None,
    label_selector: str | None = None,
    field_selector: str | None = None,
) -> Listed:
    """LIST a collection page by page, each object through ``transform`` as its page lands."""
    items: dict[str, JSON] = {}
    meta: JSON = {}
    pages = list_pages(
        client,
        resource,
        namespace,
        label_selector=label_selector,
        field_selector=field_selector,
        decode=decoder_for(resource),
    )
    for page in pages:
        for obj in page.get("items") or []:
            obj = transform(obj)
            items[key_of(obj)] = obj
        meta = page.get("metadata") or {}
    return Listed(items, str(meta.get("resourceVersion") or ""))


class Informer:
    """List+watch one resource into a ``Store``. See the module docstring for the contract."""

    def __init__(
        self,
        client: KubeClient,
        resource: APIResource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        transform: Transform | None = None,
        watch_timeout: tuple[int, int] = (300, 600),
        first_list: Listed | None = None,
    ) -> None:
        self.client = client
        self.resource = resource
        self.namespace = namespace
        self.label_selector = label_selector
        self.field_selector = field_selector
        indexers: dict[str, IndexFunc] = {}
        if resource.namespaced:
            indexers[NAMESPACE_INDEX] = namespace_index
        self.store = Store(indexers)
        self._transform: Transform = transform or default_transform(resource)
        self._watch_timeout = watch_timeout
        self._listeners: list[Listener] = []
        self._dispatch_lock = threading.Lock()
        self._synced = threading.Event()
        self._stop = threading.Event()
        self._stream: WatchStream | None = None
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        # a list fetched before this informer existed (``kube.prefetch``): used once, instead
        # of the first LIST; the watch resumes from its resourceVersion like after any list
        self._first_list = first_list
        self.last_resource_version = ""
        self.relists = 0
        self.changes = 0  # objects added, updated or deleted so far (bookmarks are not)
        self.name = f"informer:{resource.plural}"
        if field_selector or label_selector:
            self.name += f"[{field_selector or ''}{label_selector or ''}]"

    # -- consumers ------------------------------------------------------------------------

    def add_event_handler(self, handler: EventHandler) -> HandlerRegistration:
        """Register ``handler``; it first gets an add for every stored object."""
        with self._dispatch_lock:
            listener = Listener(handler, f"{self.name}:handler-{len(self._listeners)}")
            for obj in self.store.list():
                listener.push(ADD, None, obj)
            if self._synced.is_set():
                listener.push(SYNCED, None, None)
            self._listeners.append(listener)
        listener.start()
        return HandlerRegistration(listener)

    def add_indexers(self, indexers: dict[str, IndexFunc]) -> None:
        """Add secondary indexes to the store."""
        self.store.add_indexers(indexers)

    def has_synced(self) -> bool:
        """True once the first list is in the store."""
        return self._synced.is_set()

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        """Block until ``has_synced``; False on timeout."""
        return self._synced.wait(timeout)

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> threading.Thread:
        """Run the informer on its own thread (``informer:<plural>``); once, whoever calls."""
        with self._start_lock:  # controllers start the shared factory from their threads
            if self._thread is None:
                self._thread = threading.Thread(target=self.run, name=self.name, daemon=True)
                self._thread.start()
            return self._thread

    def stop(self) -> None:
        """Stop watching and stop the handler threads."""
        self._stop.set()
        stream = self._stream
        if stream is not None:
            stream.close()
        for listener in self._listeners:
            listener.stop()

    def join(self, timeout: float | None = None) -> None:
        """Wait for the informer thread to end after ``stop``."""
        if self._thread is not None:
            self._thread.join(timeout)

    def run(self) -> None:
        """The reflector loop: list, watch, resume or re-list, until ``stop``."""
        need_list = True
        delays: Iterator[float] | None = None
        while not self._stop.is_set():
            try:
                if need_list:
                    self._list_and_replace()
                    need_list = False
                self._watch_once()
                delays = None
            except Gone:
                log.info(
                    "%s: resourceVersion %s is gone, re-listing",
                    self.name,
                    self.last_resource_version,
                )
                need_list = True
                self.relists += 1
            except Exception as e:
                if self._stop.is_set():
                    break
                first = delays is None
                if delays is None:
                    delays = RECONNECT_BACKOFF.delays()
                delay = next(delays)
                if not isinstance(e, ApiError):
                    log.exception("%s: unexpected failure; retrying in %.1fs", self.name, delay)
                else:
                    level = logging.DEBUG if first else logging.WARNING
                    log.log(level, "%s: %s; retrying in %.1fs", self.name, e, delay)
                self._stop.wait(delay)

    # -- reflector ------------------------------------------------------------------------

    def _list_and_replace(self) -> None:
        listed, self._first_list = self._first_list, None
        if listed is None:
            listed = list_objects(
                self.client,
                self.resource,
                self._transform,
                namespace=self.namespace,
                label_selector=self.label_selector,
                field_selector=self.field_selector,
            )
        self.last_resource_version = listed.resource_version
        self._replace(listed.items)
        if not self._synced.is_set():
            with self._dispatch_lock:
                self._synced.set()
                for listener in self._listeners:
                    listener.push(SYNCED, None, None)
            log.debug(
                "%s: synced %d objects at %s",
                self.name,
                len(listed.items),
                self.last_resource_version,
            )

    def _replace(self, items: dict[str, JSON]) -> None:
        store = self.store
        with self._dispatch_lock:
            for key in store.list_keys():
                if key not in items:
                    old = store.remove(key)
                    self._notify(DELETE, old, None)
            for key, obj in items.items():
                old = store.put(key, obj)
                if old is None:
                    self._notify(ADD, None, obj)
                elif _rv(old) != _rv(obj):
                    self._notify(UPDATE, old, obj)

    def _watch_once(self) -> None:
        low, high = self._watch_timeout
        stream = self.client.watch(
            self.resource,
            self.namespace,
            resource_version=self.last_resource_version,
            label_selector=self.label_selector,
            field_selector=self.field_selector,
            timeout_seconds=random.randint(low, high),
            decode=decoder_for(self.resource),
        )
        self._stream = stream
        if self._stop.is_set():
            stream.close()
            return
        store = self.store
        transform = self._transform
        try:
            for kind, obj in stream:
                if kind == "BOOKMARK":
                    self.last_resource_version = obj["metadata"]["resourceVersion"]
                    continue
                if kind == "ERROR":
                    raise error_for(int(obj.get("code") or 500), obj)
                obj = transform(obj)
                key = key_of(obj)
                with self._dispatch_lock:
                    if kind == "DELETED":
                        old = store.remove(key)
                        self._notify(DELETE, old if old is not None else obj, None)
                    else:
                        old = store.put(key, obj)
                        if old is None:
                            self._notify(ADD, None, obj)
                        else:
                            self._notify(UPDATE, old, obj)
                self.last_resource_version = obj["metadata"]["resourceVersion"]
        except ConnectionFailed:
            if self._stop.is_set():
                return
            raise
        finally:
            self._stream = None

    def _notify(self, kind: int, old: JSON | None, new: JSON | None) -> None:
        self.changes += 1
        for listener in self._listeners:
            listener.push(kind, old, new)


def _rv(obj: JSON) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


InformerKey = tuple[APIResource, str | None, str | None, str | None]


class HeadStart(Protocol):
    """Whole lists fetched ahead (``kube.prefetch.ListPrefetch``), each handed out once."""

    def take(self, resource: APIResource) -> Listed | None:
        """The cluster-wide list of ``resource`` through its default transform, or None."""


class SharedInformerFactory:
    """One informer per (resource, namespace, selectors), shared by every consumer.

    ``informer()`` may be called before or after ``start()``; informers created after a start
    are started by the next ``start()`` call, as in client-go. With a ``head_start``, a
    cluster-wide informer without selectors or a custom transform begins from the list it
    holds for its resource instead of listing.
    """

    def __init__(self, client: KubeClient, head_start: HeadStart | None = None) -> None:
        self.client = client
        self._head_start = head_start
        self._informers: dict[InformerKey, Informer] = {}
        self._lock = threading.Lock()

    def informer(
        self,
        resource: APIResource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        transform: Transform | None = None,
    ) -> Informer:
        """Get (or create) the shared informer for ``resource`` and these selectors.

        ``transform`` (used only when the informer is created) defaults to the resource's
        entry in ``volcano_py.kube.transforms``.
        """
        key: InformerKey = (resource, namespace, label_selector, field_selector)
        with self._lock:
            informer = self._informers.get(key)
            if informer is None:
                plain = namespace is None and not label_selector and not field_selector
                head_start = self._head_start if plain and transform is None else None
                informer = Informer(
                    self.client,
                    resource,
                    namespace=namespace,
                    label_selector=label_selector,
                    field_selector=field_selector,
                    transform=transform,
                    first_list=head_start.take(resource) if head_start is not None else None,
                )
                self._informers[key] = informer
            return informer

    def informers(self) -> list[Informer]:
        """Every informer created so far."""
        with self._lock:
            return list(self._informers.values())

    def change_key(self) -> tuple[int, ...]:
        """Every informer's count of object changes: moves on any add, update or delete.

        Not the resourceVersions: watch bookmarks move those every minute or so while
        nothing changes (the idle trimmer would never see a quiet period).
        """
        return tuple(i.changes for i in self.informers())

    def start(self) -> None:
        """Start every informer not yet running."""
        for informer in self.informers():
            informer.start()

    def wait_for_cache_sync(self, timeout: float | None = None) -> bool:
        """Block until every informer has synced; False if ``timeout`` passed first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        for informer in self.informers():
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not informer.wait_for_sync(remaining):
                return False
        return True

    def has_synced(self) -> bool:
        """True when every informer has synced."""
        return all(i.has_synced() for i in self.informers())

    def shutdown(self, timeout: float = 5.0) -> None:
        """Stop every informer and wait for their threads."""
        informers = self.informers()
        for informer in informers:
            informer.stop()
        for informer in informers:
            informer.join(timeout)
