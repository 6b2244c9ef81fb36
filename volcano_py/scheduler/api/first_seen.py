"""``FirstSeen``: since when each key has been in some state, on an injected clock.

The scheduler keeps two such timers across cycles: admitted gangs still short of pods
(``awaited_gangs``) and running gangs that lost a member (``cache/lost_members``). Each
decides what its state is; this keeps the times.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from volcano_py.kube.clock import Clock, RealClock


class FirstSeen:
    """Key -> the clock's time when the key was first noted (until forgotten)."""

    def __init__(self, clock: Clock | None = None) -> None:
        self.clock = clock or RealClock()
        self._since: dict[str, float] = {}

    def __len__(self) -> int:
        return len(self._since)

    def __contains__(self, key: object) -> bool:
        return key in self._since

    def items(self) -> Iterator[tuple[str, float]]:
        """(key, since) pairs."""
        return iter(self._since.items())

    def note(self, key: str) -> float:
        """Note ``key`` (its time starts the first time) and return since when."""
        return self._since.setdefault(key, self.clock.now())

    def forget(self, key: str) -> None:
        """``key`` left the state."""
        self._since.pop(key, None)

    def prune(self, exists: Callable[[str], bool]) -> None:
        """Forget the keys that no longer exist."""
        for key in [k for k in self._since if not exists(k)]:
            del self._since[key]
