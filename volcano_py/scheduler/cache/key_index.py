"""``KeyIndex``: which cached objects have each value of one field, kept as they change.

The cache answers "which jobs record this HyperNode" (``jobs.py``), "which native PodGroups
name this Workload" (``natives.py``), "which pods name this PodGroup" and "which child
PodGroups name this parent" (``composites.py``) from one of these, not from a scan of every
object: a scan per event made N arrivals cost N x N under the cache's lock (10,000 children
of CompositePodGroups took 41 s of CPU to arrive).
"""

from __future__ import annotations


class KeyIndex:
    """Value -> the keys of the objects that have it, in the order they came ("" : none).

    Not thread-safe: the cache's lock guards it.
    """

    __slots__ = ("_keys",)

    def __init__(self) -> None:
        """Empty."""
        self._keys: dict[str, dict[str, None]] = {}

    def move(self, key: str, before: str, after: str) -> None:
        """Object ``key``'s value went from ``before`` to ``after`` ("": it had or has none)."""
        if before == after:
            return
        if before:
            keys = self._keys.get(before)
            if keys is not None:
                keys.pop(key, None)
                if not keys:
                    del self._keys[before]
        if after:
            self._keys.setdefault(after, {})[key] = None

    def keys(self, value: str) -> list[str]:
        """The keys of the objects with ``value``, in arrival order (a copy: move freely)."""
        return list(self._keys.get(value, ()))
