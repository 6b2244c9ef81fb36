"""Build-once holders for what a starting process need not build before its first bind.

The manager's worker serves admissions, but the objects behind them are costly to make: the
Flask app imports flask, werkzeug and jinja2 (~0.08 s), the HyperNode validator compiles its
CEL policy (~0.2 s). A ``Deferred`` builds its object on first use, or when ``warm()`` is
called, which the manager does once its first scheduling cycle ran (``Manager._settle``).
Building is thread-safe and happens once (again only if it raised).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class Deferred(Generic[T]):
    """An object built by ``build`` on first use or ``warm()``, once."""

    def __init__(self, build: Callable[[], T]) -> None:
        self._build = build
        self._lock = threading.Lock()
        self._value: T | None = None

    @property
    def built(self) -> bool:
        """Whether the object exists yet."""
        return self._value is not None

    def warm(self) -> T:
        """Build the object now unless it exists; return it."""
        value = self._value
        if value is None:
            with self._lock:
                if self._value is None:
                    self._value = self._build()
                value = self._value
        return value


class DeferredApp(Deferred[Callable[..., Any]]):
    """A WSGI app built on its first request (or ``warm()``)."""

    def __call__(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        """Serve one request (building the app first if needed)."""
        result: Iterable[bytes] = self.warm()(environ, start_response)
        return result
