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
- A node-level predicate reason (the text behind ``0/8 nodes are available: ...``) may add
  events to whatever the job's reason waits for: ``ssn.wake_hints.add_for_node_reason``
  (inter-pod affinity and topology spread add ``POD_PLACED``); the job updater adds them for
  the node reasons the job's ``JobFit`` carries.
- A reason nobody declared wakes on **every** event (``ALL_EVENTS``, all but the opt-in
  ``POD_PLACED``): a hint that is missing
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
    # a pod was placed on a node (bound, or assumed by our binder), or a placed pod's labels
    # changed: what inter-pod affinity and topology spread count (opt-in, see below)
    POD_PLACED = "PodPlaced"


# Events too frequent to wake a job whose reason declared nothing: only a check that names
# them waits for them (every bind is a POD_PLACED; waking every parked gang on each would
# undo parking while the cluster fills).
OPT_IN_EVENTS: frozenset[ClusterEvent] = frozenset({ClusterEvent.POD_PLACED})
ALL_EVENTS: frozenset[ClusterEvent] = frozenset(ClusterEvent) - OPT_IN_EVENTS
# a job parked for one of these reasons waits for itself, its queue or the configuration
NO_EVENTS: frozenset[ClusterEvent] = frozenset()


class WakeHints:
    """``JobFit`` reason -> the cluster events that can un-park a job parked for it."""

    __slots__ = ("_events", "_node_events")

    def __init__(self) -> None:
        self._events: dict[str, frozenset[ClusterEvent]] = {}
        self._node_events: dict[str, frozenset[ClusterEvent]] = {}

    def add_for_node_reason(self, reason: str, events: Iterable[ClusterEvent]) -> None:
        """A job some node refused for ``reason`` also comes back on any of ``events``."""
        wanted = frozenset(events)
        for event in wanted:
            if not isinstance(event, ClusterEvent):
                raise TypeError(f"wake hint for {reason!r}: {event!r} is not a ClusterEvent")
        self._node_events[reason] = self._node_events.get(reason, NO_EVENTS) | wanted

    def events_for_nodes(self, reasons: Iterable[str]) -> frozenset[ClusterEvent]:
        """The events added for any of these node-level reasons (none when none were)."""
        events = NO_EVENTS
        for reason in reasons:
            events |= self._node_events.get(reason, NO_EVENTS)
        return events

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
