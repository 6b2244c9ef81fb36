"""``GenerationMemo``: a bounded memo that keeps what is still in use and forgets the rest.

Entries live in two generations of at most ``limit`` entries each. New entries go into the
current generation; when it is full it becomes the previous one (the older previous one is
dropped whole) and a fresh one starts. A hit in the previous generation moves the entry
forward. So entries that keep being asked for survive every turnover, and entries of things
long gone (deleted pods' annotations, deleted HyperNodes' members) are gone after two, without
per-entry bookkeeping on the hot path. Memory is at most ``2 * limit`` entries.

Used by the webhook's rule memos. Not locked: callers either run on one thread or accept
that a racing ``put`` may be lost (a memo miss, never a wrong answer).

``clear_all`` forgets the entries of every memo in the process: every ``GenerationMemo`` and
whatever else called ``register`` (the pod transform's ``SubtreeSharer``). ``IdleTrimmer``
calls it when the process goes quiet after work: a memo is only a shortcut, so an idle
process gives back what churn filled it with, and the next burst refills what it still uses.
"""

from __future__ import annotations

import weakref
from typing import Any, Generic, Protocol, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class GenerationMemo(Generic[K, V]):
    """See the module docstring."""

    __slots__ = ("__weakref__", "_current", "_previous", "limit")

    def __init__(self, limit: int) -> None:
        """At most ``limit`` entries per generation (``limit`` ≥ 1)."""
        if limit < 1:
            raise ValueError(f"limit must be at least 1, not {limit}")
        self.limit = limit
        self._current: dict[K, V] = {}
        self._previous: dict[K, V] = {}
        register(self)

    def get(self, key: K) -> V | None:
        """The remembered value (moved into the current generation), or None."""
        found = self._current.get(key)
        if found is not None:
            return found
        found = self._previous.pop(key, None)
        if found is not None:
            self.put(key, found)
        return found

    def put(self, key: K, value: V) -> None:
        """Remember ``value`` under ``key`` in the current generation."""
        if len(self._current) >= self.limit:
            self._previous, self._current = self._current, {}
        self._current[key] = value

    def __contains__(self, key: object) -> bool:
        """Whether ``key`` is remembered (no move)."""
        return key in self._current or key in self._previous

    def __len__(self) -> int:
        """Entries in both generations."""
        return len(self._current) + len(self._previous)

    def clear(self) -> None:
        """Forget everything."""
        self._current = {}
        self._previous = {}


class Clearable(Protocol):
    """A memo ``clear_all`` can empty."""

    def __len__(self) -> int:
        """Entries held."""
        ...

    def clear(self) -> None:
        """Forget everything."""
        ...


_LIVE: weakref.WeakSet[Any] = weakref.WeakSet()


def register(memo: Clearable) -> None:
    """Let ``clear_all`` empty ``memo`` for as long as it lives (it must be weakly referable)."""
    _LIVE.add(memo)


def clear_all() -> int:
    """Forget the entries of every live memo; how many were dropped."""
    dropped = 0
    for memo in list(_LIVE):
        dropped += len(memo)
        memo.clear()
    return dropped
