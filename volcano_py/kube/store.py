"""The indexed, thread-safe object store behind every informer.

Contract:

- keys are ``namespace/name`` (or ``name`` for cluster-scoped objects);
- objects are the API server's JSON as dicts, shared, never copied: readers must not mutate
  them (the informer replaces whole objects, it never edits one in place);
- an index is a function ``obj -> list of values``; ``by_index(name, value)`` returns the
  objects whose function produced ``value``; indexes are always consistent with the items;
- reads never block on the informer's network I/O; single-object reads take no lock.
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Callable, Iterable

from volcano_py.api import JSON
from volcano_py.api.meta import object_key

IndexFunc = Callable[[JSON], Iterable[str]]

NAMESPACE_INDEX = "namespace"


def namespace_index(obj: JSON) -> builtins.list[str]:
    """Index function: the object's namespace (cluster-scoped objects index under "")."""
    return [(obj.get("metadata") or {}).get("namespace") or ""]


def key_of(obj: JSON) -> str:
    """The store key of an object: ``namespace/name`` or ``name`` (``api.meta.object_key``).

    Raises:
        KeyError: the object has no ``metadata.name`` (a store never holds one without).
    """
    if not (obj.get("metadata") or {}).get("name"):
        raise KeyError("metadata.name")
    return object_key(obj)


class Store:
    """Key -> object map with secondary indexes. See the module docstring."""

    def __init__(self, indexers: dict[str, IndexFunc] | None = None) -> None:
        self._items: dict[str, JSON] = {}
        self._indexers: dict[str, IndexFunc] = dict(indexers or {})
        self._indices: dict[str, dict[str, set[str]]] = {n: {} for n in self._indexers}
        self._lock = threading.RLock()

    # -- reads ----------------------------------------------------------------------------

    def get(self, key: str) -> JSON | None:
        """The object stored under ``key``, or None."""
        return self._items.get(key)

    def list(self) -> builtins.list[JSON]:
        """A snapshot list of every object (the objects themselves are shared)."""
        with self._lock:
            return list(self._items.values())

    def list_keys(self) -> builtins.list[str]:
        """A snapshot list of every key."""
        with self._lock:
            return list(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def by_index(self, index: str, value: str) -> builtins.list[JSON]:
        """Objects whose ``index`` function produced ``value``."""
        with self._lock:
            keys = self._indices[index].get(value)
            if not keys:
                return []
            items = self._items
            return [items[k] for k in keys]

    def index_keys(self, index: str, value: str) -> builtins.list[str]:
        """Keys of the objects whose ``index`` function produced ``value``."""
        with self._lock:
            return list(self._indices[index].get(value, ()))

    def index_values(self, index: str) -> builtins.list[str]:
        """Every value an index currently holds."""
        with self._lock:
            return list(self._indices[index])

    # -- indexers -------------------------------------------------------------------------

    def add_indexers(self, indexers: dict[str, IndexFunc]) -> None:
        """Add indexes (also after items exist: they are built from the current items)."""
        with self._lock:
            for name, fn in indexers.items():
                if name in self._indexers:
                    raise ValueError(f"indexer {name!r} already exists")
                self._indexers[name] = fn
                index: dict[str, set[str]] = {}
                for key, obj in self._items.items():
                    for value in fn(obj):
                        index.setdefault(value, set()).add(key)
                self._indices[name] = index

    # -- writes (the informer's) ----------------------------------------------------------

    def put(self, key: str, obj: JSON) -> JSON | None:
        """Store ``obj`` under ``key``; return the object it replaced."""
        with self._lock:
            old = self._items.get(key)
            self._items[key] = obj
            if self._indexers:
                self._reindex(key, old, obj)
            return old

    def remove(self, key: str) -> JSON | None:
        """Remove ``key``; return the object that was stored."""
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None and self._indexers:
                self._reindex(key, old, None)
            return old

    def _reindex(self, key: str, old: JSON | None, new: JSON | None) -> None:
        for name, fn in self._indexers.items():
            index = self._indices[name]
            old_values = set(fn(old)) if old is not None else set()
            new_values = set(fn(new)) if new is not None else set()
            if old_values == new_values:
                continue
            for value in old_values - new_values:
                keys = index.get(value)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del index[value]
            for value in new_values - old_values:
                index.setdefault(value, set()).add(key)
