"""``TopologyView``: serves ``/ui`` and ``/api/topology`` from the shared caches, cheaply.

The manager builds one per process (every replica, leader or not) on the scheduler cache the
informers already feed, and hands ``routes()`` to the ops server. A request never calls the
API server and rarely computes anything:

- a **change key** (the informers' last resourceVersions, read without a lock, and the
  replica's state: leader or not, caches synced) tells whether anything moved since the JSON
  was built; the built JSON (plain and gzipped) is served as
  is until it has, with an ``ETag`` so a polling page gets ``304 Not Modified``;
- after a change, the JSON is rebuilt **at most once per ``min_interval``** (default 2 s, the page's
  polling period, and
  never more often than ``BUDGET`` allows: a build that took 0.3 s waits 3 s, so the view
  uses at most ~10% of a core however busy the cluster), whatever the number of viewers,
  under a lock so concurrent requests share one build; and
  for ``settle`` seconds after a change it is rebuilt again, because the cache's handlers
  may apply an event a moment after the informer saw it.

Only GET exists (the ops server answers anything else 501); there is nothing to write.
"""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from importlib import resources

import orjson

from volcano_py.api import JSON
from volcano_py.ops import Reply, Route
from volcano_py.scheduler.cache import SchedulerCache
from volcano_py.ui.topology import topology_json

MIN_INTERVAL_S = 2.0  # the page polls every 2 s: building more often serves nobody
SETTLE_S = 2.0
BUDGET = 0.1
"""The share of one core the view may spend rebuilding while the cluster keeps changing."""
JSON_TYPE = "application/json"


def page() -> bytes:
    """The single-page view shipped in the package (``volcano_py/ui/index.html``)."""
    return resources.files("volcano_py.ui").joinpath("index.html").read_bytes()


class TopologyView:
    """The cached topology JSON and the routes that serve it. See the module docstring."""

    def __init__(
        self,
        cache: SchedulerCache,
        change_key: Callable[[], object],
        hypernodes: Callable[[], Iterable[JSON]] | None = None,
        *,
        replica: Callable[[], JSON] | None = None,
        clock: Callable[[], float] = time.monotonic,
        min_interval: float = MIN_INTERVAL_S,
        settle: float = SETTLE_S,
    ) -> None:
        self._cache = cache
        self._change_key = change_key
        # every HyperNode object, quarantined ones too (the informer's thread-safe store)
        self._hypernodes = hypernodes or cache.hypernodes.objects
        # who serves the page (identity, leader, caches synced): part of the JSON and its key
        self._replica = replica or dict
        self._clock = clock
        self._min_interval = min_interval
        self._settle = settle
        self._lock = threading.Lock()
        self._key_seen: object = None
        self._key_since = float("-inf")
        self._built_at = float("-inf")
        self._generation = 0
        self._core = b""
        self._build_seconds = 0.0
        self._body = b""
        self._gzipped = b""
        self._page = page()
        self.builds = 0

    def current(self) -> tuple[int, bytes, bytes]:
        """The generation and the JSON (plain, gzipped), rebuilt when due."""
        with self._lock:
            now = self._clock()
            replica = self._replica()
            key = (self._change_key(), sorted(replica.items()))
            if key != self._key_seen:
                self._key_seen, self._key_since = key, now
            settled = self._built_at - self._key_since >= self._settle
            interval = max(self._min_interval, self._build_seconds / BUDGET)
            recent = now - self._built_at < interval
            if self._body and (settled or recent):
                return self._generation, self._body, self._gzipped
            self._build(now, replica)
            return self._generation, self._body, self._gzipped

    def _build(self, now: float, replica: JSON) -> None:
        started = time.perf_counter()
        snapshot = self._cache.snapshot()
        data = topology_json(snapshot, self._hypernodes())
        data["replica"] = replica
        core = orjson.dumps(data)
        self.builds += 1
        self._built_at = now
        self._build_seconds = time.perf_counter() - started
        if core == self._core:
            return
        self._generation += 1
        self._core = core
        stamp = {
            "generation": self._generation,
            "changedAt": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "buildSeconds": round(self._build_seconds, 4),
        }
        # the stamp goes after the content without serialising the content twice
        self._body = core[:-1] + b"," + orjson.dumps(stamp)[1:]
        self._gzipped = gzip.compress(self._body, compresslevel=1)

    # -- HTTP --------------------------------------------------------------------------

    def api_topology(self, headers: Mapping[str, str]) -> Reply:
        """``GET /api/topology``: the JSON, 304 when the client has this generation."""
        generation, body, gzipped = self.current()
        etag = f'"topology-{generation}"'
        extra = {"ETag": etag, "Cache-Control": "no-cache", "Vary": "Accept-Encoding"}
        if headers.get("if-none-match") == etag:
            return Reply(304, b"", JSON_TYPE, extra)
        if "gzip" in headers.get("accept-encoding", ""):
            return Reply(200, gzipped, JSON_TYPE, {**extra, "Content-Encoding": "gzip"})
        return Reply(200, body, JSON_TYPE, extra)

    def ui_page(self, headers: Mapping[str, str]) -> Reply:
        """``GET /ui``: the page (static; it polls ``/api/topology``)."""
        del headers
        return Reply(200, self._page, "text/html; charset=utf-8", {"Cache-Control": "no-cache"})

    def routes(self) -> dict[str, Route]:
        """What the ops server serves for the view."""
        return {"/ui": self.ui_page, "/ui/": self.ui_page, "/api/topology": self.api_topology}
