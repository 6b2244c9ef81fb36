"""``AssumedNominations``: a nominated HyperNode the scheduler wrote, shown before its echo.

The ``volcano.sh/nominated-hypernode`` annotation is the scheduler's memory that a gang's
victims were evicted for it (``eviction_writes``): while they terminate, preempt and reclaim
leave the gang alone (``waiting_for_releases``). It is written off the cycle
(``status_writes.py``), and the victims' pod updates wake the cycles at once, so a cycle
could open before the annotation came back through the watch: it saw a gang with no
nomination and evicted a second domain for it (``test_preempt``'s failover test, about 1 run
in 4).

So the value the scheduler writes is *assumed*, as a bind is: the cache shows it on the
PodGroup from the end of the cycle that decided it, and each PodGroup the watch delivers
carries it too until one arrives with that value (the echo), which ends the assumption. The
scheduler is the only writer of this annotation, so an object without it is older than the
write. The next value written (a new nomination, or null once it has served) replaces the
assumption; a deleted PodGroup drops it.
"""

from __future__ import annotations

from volcano_py.api import JSON
from volcano_py.scheduler.api.nominated import nomination, with_nomination


class AssumedNominations:
    """PodGroup key -> the nomination written and not yet seen.

    Not thread-safe: the cache's lock guards it.
    """

    def __init__(self) -> None:
        """No assumption."""
        self._values: dict[str, str | None] = {}

    def assume(self, key: str, value: str | None) -> None:
        """The scheduler wrote ``value`` (None: removed) on PodGroup ``key``."""
        self._values[key] = value

    def shown(self, key: str, pg: JSON) -> JSON:
        """``pg`` as the scheduler should see it: with the assumed value until its echo."""
        if key not in self._values:
            return pg
        value = self._values[key]
        if nomination(pg) == value:
            del self._values[key]  # the write came back
            return pg
        return with_nomination(pg, value)

    def forget(self, key: str) -> None:
        """The PodGroup is gone."""
        self._values.pop(key, None)
