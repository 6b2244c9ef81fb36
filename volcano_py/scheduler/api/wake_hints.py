"""Wake-up hints: which cluster events can let a parked job be placed.

A job the scheduler could not place is *parked* (``cache/parking.py``) and left out of cycles
until something could change the answer. What can change it depends on why it failed, and
that is known where the check is written, not in the cache. So the check declares it, the way
kube-scheduler's plugins declare ``EventsToRegister`` beside their ``Filter``:

- The cache only **reports** cluster events (``ClusterEvent``: a pod left its node, a
  Node changed, ...).
- A plugin or an action that sets a job's ``JobFit`` reason declares, in the session it runs
  in, the events that can un-park a job parked for that reason:
  ``ssn.wake_hints.declare(reason, events)`` (plugins in ``on_session_open``, beside the
  check). Declarations of one reason add up.
- A reason nobody declared wakes on **every** event (``ALL_EVENTS``): a hint that is missing
  costs a wasted look, never a job left waiting. A job also comes back when it changes itself,
  when a Queue changes, when the configuration is reloaded, or after ``PARK_MAX_S``.

The job updater parks each unplaced job with the events of its reason
(``WakeHints.events_for``).
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum


class ClusterEvent(StrEnum):
    """A change in the cluster the cache reports, which may let a parked job fit."""

    # a placed pod left its node or gave its resources back (deleted, unbound, finishing)
    POD_FREED = "PodFreed"
    # a bind the cache assumed failed and was rolled back
    BIND_ROLLED_BACK = "BindRolledBack"
    NODE_ADDED = "NodeAdded"
    # allocatable, labels, taints, unschedulable or readiness (not its heartbeats)
    NODE_CHANGED = "NodeChanged"
    # a HyperNode added, deleted, or its members moved (not its nodeCount)
    HYPERNODE_CHANGED = "HyperNodeChanged"
    # another PodGroup's spec changed (its reservation or its queue share may have shrunk)
    PODGROUP_SPEC_CHANGED = "PodGroupSpecChanged"
    # another PodGroup was deleted (what it reserved in its queue is free)
    PODGROUP_DELETED = "PodGroupDeleted"
    # a PersistentVolumeClaim, PersistentVolume or StorageClass was added, changed or deleted
    VOLUME_CHANGED = "VolumeChanged"


ALL_EVENTS: frozenset[ClusterEvent] = frozenset(ClusterEvent)
# a job parked for one of these reasons waits for itself, its queue or the configuration
NO_EVENTS: frozenset[ClusterEvent] = frozenset()


class WakeHints:
    """``JobFit`` reason -> the cluster events that can un-park a job parked for it."""

    __slots__ = ("_events",)

    def __init__(self) -> None:
        self._events: dict[str, frozenset[ClusterEvent]] = {}

    def declare(self, reason: str, events: Iterable[ClusterEvent]) -> None:
        """Jobs parked for ``reason`` come back on any of ``events`` (added to earlier ones).

        Raises:
            TypeError: when an event is not a ``ClusterEvent``.
        """
        wanted = frozenset(events)
        for event in wanted:
            if not isinstance(event, ClusterEvent):
                raise TypeError(f"wake hint for {reason!r}: {event!r} is not a ClusterEvent")
        self._events[reason] = self._events.get(reason, NO_EVENTS) | wanted

    def events_for(self, reason: str) -> frozenset[ClusterEvent]:
        """The events declared for ``reason`` (every event when none were)."""
        return self._events.get(reason, ALL_EVENTS)

    def declared(self) -> dict[str, frozenset[ClusterEvent]]:
        """Every declared reason with its events (for docs, tests and ``explain``)."""
        return dict(sorted(self._events.items()))
