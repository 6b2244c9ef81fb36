"""Recording core/v1 Events about objects, the way client-go's ``tools/record`` does.

Controllers and the scheduler call ``recorder.event(obj, WARNING, "Reason", "message")``;
users read the result with ``kubectl describe``. Events are best-effort: they must never slow
down or break the code that records them.

Contract:

- **Callers never block.** ``event`` builds the reference and the timestamp, then puts the
  event on a bounded queue; when the queue is full the event is dropped (DEBUG log). One
  thread, ``event-recorder``, writes them to the API server in order.
- **Repeats are counted, not duplicated.** An event with the same object, type, reason and
  message as one recorded less than 10 minutes before (by the recorder's clock, at the
  ``event`` calls) PATCHes that Event's ``count``,
  ``lastTimestamp`` and ``message`` instead of creating another (and is created again if the
  old one has meanwhile expired from the server).
- **Per-object spam filter.** Each object gets a token bucket (burst 25, one token back every
  5 minutes) shared by all reasons; events beyond it are dropped (DEBUG log).
- **Correlation state stays small.** Both maps are keyed by a 128-bit BLAKE2b digest of the
  key (not a tuple of its strings, which kept every deleted pod's name, uid and message alive),
  hold at most 4,096 entries each, and drop what can no longer matter as events arrive: a
  repeat entry past the 10-minute window, a bucket that has refilled to its burst (the same as
  no bucket). Under create/delete churn they used to fill to the cap and stay there: a few MB
  the soak bench (``bench/bench_churn.py``) saw as growth.
- **Only a reference leaves the object.** ``involvedObject`` holds apiVersion, kind, name,
  namespace, uid and resourceVersion; nothing else of the object is kept, queued or logged
  (so a Secret's data never reaches a log line).
- **Messages are bounded**: cut to ``MAX_EVENT_MESSAGE`` characters (events.k8s.io/v1's
  ``note`` limit, 1 kB) on one line, so no input can make an Event (or its repeat key) big.
- Events about cluster-scoped objects (Node, HyperNode) go to namespace ``default``.
- A write that fails transiently (5xx, 429, no connection) is retried up to 12 times, 10 s
  apart (the first wait randomised); other failures drop the event with a WARNING.

``FakeRecorder`` has the same interface and just collects ``(type, reason, message)``.
"""

from __future__ import annotations

import hashlib
import logging
import queue
import random
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from volcano_py.api import JSON
from volcano_py.api.resources import EVENTS, APIResource
from volcano_py.api.safeload import clip
from volcano_py.kube.clock import Clock, RealClock
from volcano_py.kube.errors import AlreadyExists, ApiError, NotFound, is_retryable
from volcano_py.kube.verbs import Create, Patch

log = logging.getLogger(__name__)

NORMAL = "Normal"
WARNING = "Warning"
EVENT_TYPES = frozenset({NORMAL, WARNING})
DEFAULT_NAMESPACE = "default"
TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"

QUEUE_SIZE = 1000
MAX_EVENT_MESSAGE = 1024
SPAM_BURST = 25
SPAM_QPS = 1.0 / 300.0
DEDUP_WINDOW_S = 600.0
CACHE_SIZE = 4096
MAX_TRIES = 12
RETRY_SLEEP_S = 10.0


class Recorder(Protocol):
    """What code that reports events depends on (``EventRecorder`` or ``FakeRecorder``)."""

    def event(
        self,
        obj: Mapping[str, Any],
        event_type: str,
        reason: str,
        message: str,
        *,
        resource: APIResource | None = None,
    ) -> None:
        """Record an event about ``obj`` (``resource`` names its kind if ``obj`` does not)."""
        ...

    def eventf(
        self,
        obj: Mapping[str, Any],
        event_type: str,
        reason: str,
        message_format: str,
        *args: object,
        resource: APIResource | None = None,
    ) -> None:
        """``event`` with ``message_format % args``."""
        ...


class EventClient(Create, Patch, Protocol):
    """The part of ``KubeClient`` the recorder uses."""


def object_reference(obj: Mapping[str, Any], resource: APIResource | None = None) -> JSON:
    """The ``involvedObject`` for ``obj``: identifying fields only, never its content.

    Raises:
        ValueError: ``obj`` has no name, or no kind and no ``resource`` was given.
    """
    meta = obj.get("metadata") or {}
    kind = obj.get("kind") or (resource.kind if resource else "")
    api_version = obj.get("apiVersion") or (resource.api_version if resource else "")
    name = meta.get("name")
    if not name or not kind or not api_version:
        raise ValueError(f"cannot build an event reference: kind={kind!r} name={name!r}")
    ref: JSON = {"apiVersion": api_version, "kind": kind, "name": name}
    for field_name in ("namespace", "uid", "resourceVersion"):
        if meta.get(field_name):
            ref[field_name] = meta[field_name]
    return ref


def _check_type(event_type: str) -> None:
    if event_type not in EVENT_TYPES:
        raise ValueError(f"event type must be Normal or Warning, got {event_type!r}")


@dataclass(frozen=True, slots=True)
class _Pending:
    ref: JSON
    event_type: str
    reason: str
    message: str
    when: datetime  # wall time, written to the Event
    at: float  # clock time, for the spam filter and the 10-minute window


@dataclass(slots=True)
class _Seen:
    """The Event last written for one (object, type, reason, message)."""

    name: str
    namespace: str
    count: int
    first_timestamp: str
    last_seen: float


def _digest(parts: tuple[str, ...]) -> bytes:
    """A 128-bit digest of ``parts`` (joined by a separator no name or reason contains)."""
    return hashlib.blake2b("\x1f".join(parts).encode(), digest_size=16).digest()


class _FormattedEvents:
    """``eventf`` for any recorder with an ``event`` method."""

    def event(
        self,
        obj: Mapping[str, Any],
        event_type: str,
        reason: str,
        message: str,
        *,
        resource: APIResource | None = None,
    ) -> None:
        """Record one event (each recorder implements it)."""
        raise NotImplementedError

    def eventf(
        self,
        obj: Mapping[str, Any],
        event_type: str,
        reason: str,
        message_format: str,
        *args: object,
        resource: APIResource | None = None,
    ) -> None:
        """``event`` with ``message_format % args`` (``%``-style, like logging)."""
        message = message_format % args if args else message_format
        self.event(obj, event_type, reason, message, resource=resource)


class EventRecorder(_FormattedEvents):
    """Writes Events for one component. See the module docstring for the contract."""

    def __init__(
        self,
        client: EventClient,
        component: str,
        *,
        host: str = "",
        clock: Clock | None = None,
        queue_size: int = QUEUE_SIZE,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.client = client
        self.component = component
        self.host = host
        self._clock: Clock = clock or RealClock()
        self._rand = rand
        self._queue: queue.Queue[_Pending | None] = queue.Queue(maxsize=queue_size)
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()  # correlation state, if process_pending races the thread
        self._buckets: OrderedDict[bytes, tuple[float, float]] = OrderedDict()
        self._seen: OrderedDict[bytes, _Seen] = OrderedDict()
        self._sequence = 0

    # -- callers --------------------------------------------------------------------------

    def event(
        self,
        obj: Mapping[str, Any],
        event_type: str,
        reason: str,
        message: str,
        *,
        resource: APIResource | None = None,
    ) -> None:
        """Queue an event about ``obj``; never blocks (see the module docstring)."""
        _check_type(event_type)
        pending = _Pending(
            object_reference(obj, resource),
            event_type,
            reason,
            clip(message, MAX_EVENT_MESSAGE),
            self._clock.wall(),
            self._clock.now(),
        )
        if self._stopping.is_set():
            log.debug("event %s for %s dropped: recorder stopped", reason, _key(pending.ref))
            return
        try:
            self._queue.put_nowait(pending)
        except queue.Full:
            log.debug("event %s for %s dropped: queue full", reason, _key(pending.ref))

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> threading.Thread:
        """Start the ``event-recorder`` thread (once)."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._loop, name="event-recorder", daemon=True
                )
                self._thread.start()
            return self._thread

    def stop(self, timeout: float = 5.0) -> None:
        """Stop taking events, write what is queued (one try each), and end the thread."""
        self._stopping.set()
        try:
            self._queue.put(None, timeout=timeout)
        except queue.Full:
            log.warning("event recorder: queue still full at stop; events dropped")
        if self._thread is not None:
            self._thread.join(timeout)

    def process_pending(self) -> int:
        """Write every queued event from the calling thread; how many were handled.

        For tests (and for a recorder that was never started); do not mix with ``start``.
        """
        handled = 0
        while True:
            try:
                pending = self._queue.get_nowait()
            except queue.Empty:
                return handled
            if pending is not None:
                self._handle(pending)
                handled += 1

    def _loop(self) -> None:
        while True:
            pending = self._queue.get()
            if pending is None:
                return
            try:
                self._handle(pending)
            except Exception:
                log.exception("event recorder: unexpected error for %s", _key(pending.ref))

    # -- correlation and writing ----------------------------------------------------------

    def _handle(self, p: _Pending) -> None:
        ref = p.ref
        object_key = (
            self.component,
            self.host,
            ref["kind"],
            ref.get("namespace", ""),
            ref["name"],
            ref.get("uid", ""),
            ref["apiVersion"],
        )
        event_key = _digest((*object_key, p.event_type, p.reason, p.message))
        now = p.at
        with self._lock:
            self._forget_expired(now)
            if not self._allow(_digest(object_key), now):
                log.debug("event %s for %s dropped: too many events", p.reason, _key(ref))
                return
            seen = self._seen.get(event_key)
            if seen is not None and now - seen.last_seen > DEDUP_WINDOW_S:
                seen = None
            self._sequence += 1
            sequence = self._sequence
        log.debug("event %s %s for %s: %s", p.event_type, p.reason, _key(ref), p.message)
        stamp = p.when.strftime(TIME_FORMAT)
        if seen is None:
            nanos = int(p.when.timestamp()) * 1_000_000_000 + p.when.microsecond * 1000
            name = f"{ref['name']}.{nanos + sequence % 1000:x}"
            namespace = ref.get("namespace") or DEFAULT_NAMESPACE
            count, first = 1, stamp
        else:
            name, namespace = seen.name, seen.namespace
            count, first = seen.count + 1, seen.first_timestamp
        body: JSON = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": namespace},
            "involvedObject": ref,
            "reason": p.reason,
            "message": p.message,
            "type": p.event_type,
            "source": {"component": self.component, **({"host": self.host} if self.host else {})},
            "firstTimestamp": first,
            "lastTimestamp": stamp,
            "count": count,
            "reportingComponent": self.component,
            "reportingInstance": self.host,
        }
        if self._write(body, update=seen is not None):
            with self._lock:
                self._seen[event_key] = _Seen(name, namespace, count, first, now)
                self._seen.move_to_end(event_key)
                while len(self._seen) > CACHE_SIZE:
                    self._seen.popitem(last=False)

    def correlation_entries(self) -> int:
        """Entries held for repeat counting and the spam filter (bounded; see the docstring)."""
        with self._lock:
            return len(self._seen) + len(self._buckets)

    def _forget_expired(self, now: float) -> None:
        """Drop the oldest entries that no longer change anything (lock held).

        Both maps are in order of last use and ``now`` never goes back, so the stale ones are
        at the front.
        """
        seen = self._seen
        while seen:
            first = next(iter(seen.values()))
            if now - first.last_seen <= DEDUP_WINDOW_S:
                break
            seen.popitem(last=False)
        buckets = self._buckets
        while buckets:
            tokens, last = next(iter(buckets.values()))
            if tokens + (now - last) * SPAM_QPS < SPAM_BURST:
                break
            buckets.popitem(last=False)

    def _allow(self, object_key: bytes, now: float) -> bool:
        """Take a token from ``object_key``'s bucket if it has one (lock held)."""
        tokens, last = self._buckets.get(object_key, (float(SPAM_BURST), now))
        tokens = min(float(SPAM_BURST), tokens + (now - last) * SPAM_QPS)
        allowed = tokens >= 1.0
        self._buckets[object_key] = (tokens - 1.0 if allowed else tokens, now)
        self._buckets.move_to_end(object_key)
        while len(self._buckets) > CACHE_SIZE:
            self._buckets.popitem(last=False)
        return allowed

    def _write(self, body: JSON, *, update: bool) -> bool:
        """Create (or patch) the Event; ``True`` once the server has it."""
        meta = body["metadata"]
        what = f"{body['reason']} for {_key(body['involvedObject'])}"
        for attempt in range(1, MAX_TRIES + 1):
            try:
                if update:
                    patch = {k: body[k] for k in ("count", "lastTimestamp", "message")}
                    try:
                        self.client.patch(EVENTS, meta["name"], patch, meta["namespace"])
                        return True
                    except NotFound:
                        pass  # the Event expired on the server; create it again
                self.client.create(EVENTS, body, meta["namespace"])
                return True
            except AlreadyExists:
                log.debug("event %s: already exists, not retried", what)
                return False
            except ApiError as e:
                if not is_retryable(e):
                    log.warning("event %s rejected: %s", what, e)
                    return False
                log.info("event %s: write failed (%s), attempt %d", what, e, attempt)
            if attempt < MAX_TRIES:
                delay = RETRY_SLEEP_S * (self._rand() if attempt == 1 else 1.0)
                if self._clock.wait_event(self._stopping, delay):
                    break
        log.warning("event %s dropped after %d attempts", what, attempt)
        return False


def _key(ref: Mapping[str, Any]) -> str:
    namespace = ref.get("namespace")
    name = f"{namespace}/{ref.get('name')}" if namespace else str(ref.get("name"))
    return f"{ref.get('kind')} {name}"


class DiscardRecorder(_FormattedEvents):
    """A ``Recorder`` that drops every event (when a controller is given none)."""

    def event(
        self,
        obj: Mapping[str, Any],
        event_type: str,
        reason: str,
        message: str,
        *,
        resource: APIResource | None = None,
    ) -> None:
        """Drop the event."""


class FakeRecorder(_FormattedEvents):
    """A ``Recorder`` for tests: ``events`` collects ``(type, reason, message)`` in order."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []
        self.references: list[JSON] = []
        self._lock = threading.Lock()

    def event(
        self,
        obj: Mapping[str, Any],
        event_type: str,
        reason: str,
        message: str,
        *,
        resource: APIResource | None = None,
    ) -> None:
        """Collect the event (checking the type and the reference like the real one)."""
        _check_type(event_type)
        ref = object_reference(obj, resource)
        with self._lock:
            self.events.append((event_type, reason, message))
            self.references.append(ref)
