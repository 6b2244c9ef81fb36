"""The controller skeleton: shared informers in, one work queue, workers calling ``sync``.

A ``QueueController`` plays the framework's ``Controller`` role (``framework.py``) the
sample-controller way, so each controller writes only what differs:

- ``wire(options)``: get the shared informers, add indexes, build the sync state, register
  handlers that only turn events into work items on ``self.queue``; no I/O. It returns the
  informers whose caches ``run`` waits for, and the handler registrations. By default it
  gets the informers of the class's ``resources``, adds its ``cache_index`` and hands the
  informers to ``connect(options, informers)`` (the subclass), which builds the sync state
  and registers the handlers; a controller may override ``wire`` whole instead.
- ``sync(item)`` (the subclass): reconcile one work item; raise to have it retried with the
  queue's backoff.
- ``worker_count(options)``: how many workers (``worker_threads`` unless overridden).
- ``caches_synced()``: work to queue once the caches are synced, before the workers start
  (nothing unless overridden).
- ``close()``: stop what the controller started itself (pools), after the workers stop.

``run(stop)`` is the one start-up order: start the shared informers (idempotent), wait for
this controller's caches (returning at once when ``stop`` is set first), ``caches_synced``,
then run the workers until ``stop``, then ``close``.

Three helpers for ``wire``: ``shared_informers`` (the factory's informers of some resources),
``add_index`` (an index on a shared informer's cache, which may be there already) and
``recorder_of`` (the options' event recorder, or one that drops events).
"""

from __future__ import annotations

import logging
import threading
from typing import ClassVar, Generic, TypeVar

from volcano_py.api.resources import APIResource
from volcano_py.controllers.framework import ControllerOptions, start_and_wait_for_caches
from volcano_py.kube.events import DiscardRecorder, Recorder
from volcano_py.kube.informer import HandlerRegistration, Informer
from volcano_py.kube.store import IndexFunc
from volcano_py.kube.workqueue import RateLimitingQueue, run_workers

log = logging.getLogger(__name__)

Item = TypeVar("Item")
Wiring = tuple[list[Informer], list[HandlerRegistration]]


def shared_informers(options: ControllerOptions, *resources: APIResource) -> list[Informer]:
    """The shared informers of ``resources``, in that order (made on first ask, not started)."""
    return [options.informers.informer(resource) for resource in resources]


def add_index(informer: Informer, name: str, index: IndexFunc) -> None:
    """Index ``informer``'s cache by ``index`` unless an index ``name`` is there already.

    The informers are shared: another controller, or an earlier wiring on the same factory,
    may have added the index first.
    """
    try:
        informer.add_indexers({name: index})
    except ValueError:
        log.debug("%s index %s already present", informer.resource.kind.lower(), name)


def recorder_of(options: ControllerOptions) -> Recorder:
    """The options' event recorder, or a ``DiscardRecorder`` when they carry none."""
    return options.recorder if options.recorder is not None else DiscardRecorder()


class QueueController(Generic[Item]):
    """The shared controller skeleton; see the module docstring."""

    controller_name: ClassVar[str]
    # the default ``wire``'s: the shared informers ``connect`` gets, in this order, and the
    # index added to one of their caches (resource, index name, index function)
    resources: ClassVar[tuple[APIResource, ...]] = ()
    cache_index: ClassVar[tuple[APIResource, str, IndexFunc] | None] = None

    def __init__(self) -> None:
        self._options: ControllerOptions | None = None
        self._informers: list[Informer] = []
        self._registrations: list[HandlerRegistration] = []
        self.queue: RateLimitingQueue[Item] = RateLimitingQueue(self.controller_name)

    @property
    def name(self) -> str:
        """The controller's wire name."""
        return self.controller_name

    def initialize(self, options: ControllerOptions) -> None:
        """Wire to the shared informers (``wire``); no API calls here."""
        self._options = options
        self._informers, self._registrations = self.wire(options)

    def wire(self, options: ControllerOptions) -> Wiring:
        """The informers of ``resources``, ``cache_index`` added, handed to ``connect``."""
        informers = shared_informers(options, *self.resources)
        if self.cache_index is not None:
            resource, name, index = self.cache_index
            add_index(options.informers.informer(resource), name, index)
        return informers, self.connect(options, informers)

    def connect(
        self, options: ControllerOptions, informers: list[Informer]
    ) -> list[HandlerRegistration]:
        """Build the sync state over ``informers``, register the handlers (the subclass's)."""
        raise NotImplementedError

    def worker_count(self, options: ControllerOptions) -> int:
        """How many workers run ``sync``."""
        return options.worker_threads

    def run(self, stop: threading.Event) -> None:
        """Start the informers, wait for the caches, run the workers until ``stop``."""
        if self._options is None:
            raise RuntimeError(f"{self.name}: run() before initialize()")
        if not start_and_wait_for_caches(self._options, self._informers, stop):
            return
        log.info("%s: caches synced", self.name)
        self.caches_synced()
        try:
            workers = max(1, self.worker_count(self._options))
            run_workers(self.queue, workers, self.sync, stop, self.name)
        finally:
            self.close()

    def caches_synced(self) -> None:
        """Queue the work due at start, before the workers run; nothing by default."""

    def sync(self, item: Item) -> None:
        """Reconcile one work item (the subclass's)."""
        raise NotImplementedError

    def close(self) -> None:
        """Stop what the controller started itself; nothing by default."""
