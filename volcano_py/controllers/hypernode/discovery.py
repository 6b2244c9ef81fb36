"""The discovery framework: what a discoverer is, how sources register, what they are given.

A **discoverer** turns one source of topology facts (node labels, a UFM fabric manager, ...)
into the complete list of HyperNodes that source stands for. It plays the ``Discoverer``
role:

- ``name`` is its source name; the HyperNodes it produces are labelled
  ``volcano.sh/network-topology-source=<name>`` by the reconcile.
- ``start(sink)`` checks what it needs (a missing endpoint or Secret is a
  ``DiscovererStartError`` with a clear message), then works on its own thread, handing each
  complete result to ``sink.submit(hypernodes)`` (or ``sink.fail(reason)`` when the source
  could not be read: a failure deletes nothing). ``submit(hypernodes, explained)`` may name
  HyperNodes of the source that the result leaves out *on purpose* (``label``: their nodes
  are still there, relabelled): they follow the result after their grace period whatever
  ``maxDeletePercent`` says, which guards only against what is not explained (a source
  that fails or answers nothing). ``submit`` blocks while the previous result
  of this source is still being reconciled (back-pressure: one result in flight per
  source) and returns False once the discoverer is being stopped.
- ``stop()`` ends its thread and returns when it has; ``result_synced()`` tells it the last
  result has been reconciled.

Sources register by name in a ``DiscovererRegistry`` object, filled explicitly
(``register_builtin_discoverers``); a factory ``(DiscoveryConfig, DiscoveryContext) ->
Discoverer`` raises ``ConfigError`` for a bad ``config:``. The ``DiscoveryContext`` is how a
discoverer sees the cluster: the shared Node and HyperNode caches, a Secret getter, event
hubs for Node/HyperNode changes it can subscribe to and leave, a clock and a random source
(both injected, so tests do not sleep or guess). The discovery manager
(``manager.py``) owns the lifecycle; the controller reconciles the results.

``PeriodicDiscoverer`` is the base of poll-style sources (UFM, the example source): it
discovers at once, then every ``interval``.
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from volcano_py.api import JSON
from volcano_py.controllers.hypernode.config import ConfigError, DiscoveryConfig
from volcano_py.kube.clock import Clock, RealClock
from volcano_py.kube.informer import EventHandler

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class DiscoveryResult:
    """One round of a source: every HyperNode it stands for, or why it has none.

    ``fingerprint`` is the ``config_fingerprint`` of the configuration that produced it
    (empty when unknown): the reconcile tells a configuration change by it. ``explained``:
    the source's HyperNodes the result leaves out on purpose (see the module docstring).
    """

    source: str
    hypernodes: tuple[JSON, ...] = ()
    error: str | None = None
    fingerprint: str = ""
    explained: frozenset[str] = frozenset()
    force: bool = False  # the entry's ``force``: apply a configuration change that plan.py holds

    @property
    def ok(self) -> bool:
        """Whether the source was read (an empty list of HyperNodes is a valid answer)."""
        return self.error is None


class ResultSink(Protocol):
    """Where a running discoverer delivers its results (one per source in flight)."""

    def submit(self, hypernodes: Sequence[JSON], explained: Collection[str] = ()) -> bool:
        """Deliver a complete result; blocks while the previous one is in flight.

        ``explained``: HyperNodes of the source it leaves out on purpose (module docstring).

        Returns False (and drops the result) when the discoverer is being stopped.
        """
        ...

    def fail(self, reason: str) -> bool:
        """Report that the source could not be read this round; same blocking as ``submit``."""
        ...

    @property
    def stopped(self) -> bool:
        """True once the manager is stopping this discoverer."""
        ...


class Discoverer(Protocol):
    """The role every discovery source plays. See the module docstring."""

    @property
    def name(self) -> str:
        """The source name (``label``, ``ufm``)."""
        ...

    def start(self, sink: ResultSink) -> None:
        """Check prerequisites (raise ``DiscovererStartError``) and start working."""
        ...

    def stop(self) -> None:
        """Stop working; returns once the discoverer's threads have ended."""
        ...

    def result_synced(self) -> None:
        """The last submitted result has been reconciled."""
        ...


class ReadStore(Protocol):
    """The read side of an informer ``Store`` (objects are shared: never mutate them)."""

    def get(self, key: str) -> JSON | None:
        """The object under ``key``, or None."""
        ...

    def list(self) -> list[JSON]:
        """Every object."""
        ...


class DiscovererStartError(Exception):
    """A discoverer cannot start.

    ``retryable`` when waiting may fix it (a Secret not yet created, an API error) rather
    than only a config change (no endpoint configured).
    """

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable


class DiscoveryError(Exception):
    """One discovery round failed; the message is safe to log and to show in a condition."""


class UnknownSourceError(ConfigError):
    """A source name that is not registered; the message lists the known ones."""

    def __init__(self, source: str, known: Sequence[str]) -> None:
        super().__init__(
            f"unknown discovery source {source!r}; known sources: {', '.join(known) or '(none)'}"
        )
        self.source = source


class EventHub:
    """Fan-out of one informer's notifications to subscribers that come and go.

    The controller registers ``handler()`` once on the informer; discoverers subscribe on
    start and unsubscribe on stop (informer handlers cannot be removed).
    """

    def __init__(self) -> None:
        self._subscribers: dict[int, EventHandler] = {}
        self._next = 0
        self._lock = threading.Lock()

    def subscribe(self, handler: EventHandler) -> Callable[[], None]:
        """Receive notifications from now on; call the returned function to stop."""
        with self._lock:
            token = self._next
            self._next += 1
            self._subscribers[token] = handler

        def unsubscribe() -> None:
            with self._lock:
                self._subscribers.pop(token, None)

        return unsubscribe

    def handler(self) -> EventHandler:
        """The ``EventHandler`` to register on the informer."""
        return EventHandler(on_add=self.on_add, on_update=self.on_update, on_delete=self.on_delete)

    def _current(self) -> list[EventHandler]:
        with self._lock:
            return list(self._subscribers.values())

    def on_add(self, obj: JSON) -> None:
        """Deliver an add to every subscriber."""
        for handler in self._current():
            if handler.on_add is not None:
                handler.on_add(obj)

    def on_update(self, old: JSON, new: JSON) -> None:
        """Deliver an update to every subscriber."""
        for handler in self._current():
            if handler.on_update is not None:
                handler.on_update(old, new)

    def on_delete(self, obj: JSON) -> None:
        """Deliver a delete to every subscriber."""
        for handler in self._current():
            if handler.on_delete is not None:
                handler.on_delete(obj)


def _no_secret(namespace: str, name: str) -> JSON:
    raise DiscovererStartError(f"cannot read Secret {namespace}/{name}: no Secret access here")


def _log_problem(message: str) -> None:
    log.warning("%s", message)


@dataclass(frozen=True, slots=True)
class DiscoveryContext:
    """What a discoverer may use. See the module docstring.

    ``get_secret(namespace, name)`` returns the Secret as JSON or raises (``NotFound`` from
    the API, or ``DiscovererStartError``). ``report(message)`` surfaces a non-fatal config
    problem (a skipped topology type) as a log line and an Event on the ConfigMap.
    """

    nodes: ReadStore
    hypernodes: ReadStore
    get_secret: Callable[[str, str], JSON] = _no_secret
    node_events: EventHub = field(default_factory=EventHub)
    hypernode_events: EventHub = field(default_factory=EventHub)
    clock: Clock = field(default_factory=RealClock)
    rng: random.Random = field(default_factory=random.Random)
    report: Callable[[str], None] = _log_problem


DiscovererFactory = Callable[[DiscoveryConfig, DiscoveryContext], Discoverer]


class DiscovererRegistry:
    """Discoverer factories by source name: duplicates rejected, iteration sorted."""

    def __init__(self) -> None:
        self._factories: dict[str, DiscovererFactory] = {}

    def register(self, source: str, factory: DiscovererFactory) -> None:
        """Register ``factory`` for ``source``; registering a name twice is an error."""
        if source in self._factories:
            raise ValueError(f"discovery source {source!r} is already registered")
        self._factories[source] = factory

    def get(self, source: str) -> DiscovererFactory:
        """The factory for ``source``; an unknown name lists the known ones."""
        try:
            return self._factories[source]
        except KeyError:
            raise UnknownSourceError(source, self.names()) from None

    def create(self, config: DiscoveryConfig, context: DiscoveryContext) -> Discoverer:
        """Build the discoverer for ``config`` (``ConfigError`` for a bad entry)."""
        return self.get(config.source)(config, context)

    def names(self) -> list[str]:
        """Registered source names, sorted."""
        return sorted(self._factories)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __contains__(self, source: object) -> bool:
        return source in self._factories


class PeriodicDiscoverer:
    """Base for poll-style sources: ``discover()`` at start and every ``interval``.

    Subclasses implement ``discover() -> list of HyperNodes`` (raising ``DiscoveryError``
    with a message fit for users when the source cannot be read) and may override
    ``check()`` to refuse to start.
    """

    def __init__(self, name: str, interval: float, clock: Clock) -> None:
        self._name = name
        self.interval = interval
        self._clock = clock
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def name(self) -> str:
        """The source name."""
        return self._name

    def check(self) -> None:
        """Raise ``DiscovererStartError`` when the source cannot start."""

    def discover(self) -> list[JSON]:
        """One discovery round."""
        raise NotImplementedError

    def run_once(self, sink: ResultSink) -> bool:
        """Discover once and deliver the result or the failure; False when stopped."""
        try:
            hypernodes = self.discover()
        except DiscoveryError as e:
            log.warning("discovery source %s: %s", self._name, e)
            return sink.fail(str(e))
        except Exception as e:
            log.exception("discovery source %s: unexpected failure", self._name)
            return sink.fail(f"unexpected {type(e).__name__} while discovering")
        log.info("discovery source %s: discovered %d HyperNodes", self._name, len(hypernodes))
        return sink.submit(hypernodes)

    def start(self, sink: ResultSink) -> None:
        """``check()``, then run rounds on thread ``discovery:<name>`` until ``stop()``."""
        self.check()

        def loop() -> None:
            while not self._stop.is_set():
                if not self.run_once(sink):
                    return
                self._clock.wait_event(self._stop, self.interval)

        self._thread = threading.Thread(target=loop, name=f"discovery:{self._name}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the loop and wait for the thread (a round in progress finishes first)."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=60.0)

    def result_synced(self) -> None:
        """Nothing to do: the next round comes on the timer."""


def config_mapping(config: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """``config[key]`` as a mapping (``ConfigError`` naming ``config.<key>`` otherwise)."""
    value = config.get(key)
    if not isinstance(value, Mapping):
        raise ConfigError(f"config.{key}: expected a mapping, got {type(value).__name__}")
    return value
