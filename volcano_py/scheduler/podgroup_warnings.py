"""Warning Events on PodGroups about what they ask for, once per PodGroup and message.

A cycle reports, per job, a fact the user should hear about but that does not stop the job
(``CycleResult.warnings``: job uid -> (reason, message)): a ``volcano.sh/network-topology-*``
annotation that cannot be read (the job runs without topology), or topology asked of a
configuration without ``network-topology-aware``. ``PodGroupWarnings.record`` turns each into
one Warning Event on the PodGroup, again only when the message changes (a ``PodGroupEvents``
of its own, ``podgroup_events.py``: keyed by the PodGroup's ``metadata.uid``, so a job that
leaves the cycle's snapshot and comes back (settled, then changed) is not told twice, and a
PodGroup deleted and created again is).

Runs in the scheduler thread after a cycle; the recorder never raises into the loop.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from volcano_py.kube.events import WARNING, Recorder
from volcano_py.scheduler.podgroup_events import PodGroupEvents


class PodGroupWarnings:
    """Records each PodGroup's warnings once per distinct message."""

    def __init__(self, recorder: Recorder | None) -> None:
        """Record through ``recorder`` (None: nothing is recorded)."""
        self._events = PodGroupEvents(recorder)  # its own memory: these are other Events

    def record(
        self,
        warnings: Mapping[str, tuple[str, str]],
        podgroup: Callable[[str], Mapping[str, Any] | None],
    ) -> int:
        """``warnings``: job uid -> (reason, message); ``podgroup(uid)``: the cached PodGroup.

        Returns how many Events were recorded.
        """
        events = {uid: (WARNING, reason, message) for uid, (reason, message) in warnings.items()}
        return self._events.record(events, podgroup)
