"""Retiring the HyperNodes of a discovery source removed from the configuration.

A source whose entry is deleted from ``volcano-controller.conf`` (or set ``enabled: false``)
is stopped by the discovery manager; its HyperNodes (those labelled
``volcano.sh/network-topology-source=<source>``) are not deleted at once, since one
ConfigMap typo would otherwise strand every gang placed in them. Instead the controller
(``controller.py``) asks ``Retirements.update`` after each configuration it applies:

- a source that has HyperNodes but is no longer configured gets a **pending retirement**,
  due after its ``deletionGracePeriod`` (the one of its disabled entry if it is still
  listed, else the one it last ran with, else the default 1m);
- a source configured again (re-enabled, the typo fixed) **cancels** its retirement;
- a pending source whose HyperNodes are all gone meanwhile is dropped silently.

When a retirement is due the controller deletes all of the source's HyperNodes, parents
first (``plan.parents_first``), without the deletion limit (a configuration change is an
intent). HyperNodes not labelled with a source (made by hand) are never candidates.

"Configured" covers every source named by an enabled entry, by an entry rejected with a
problem (its running instance is kept) and every running source. An absent ConfigMap and an
unparsable document remove nothing: only a configuration that was read retires sources.

The state is in memory only: a controller restarted during the grace period finds the
source unconfigured again on its first configuration and starts the clock afresh (the
retirement happens later, never earlier).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from volcano_py.api.constants import NETWORK_TOPOLOGY_SOURCE_LABEL
from volcano_py.api.meta import labels_of, name_of
from volcano_py.controllers.hypernode.config import (
    DEFAULT_DELETION_GRACE_SECONDS,
    DiscoveryConfig,
    NetworkTopologyConfig,
)
from volcano_py.kube.clock import Clock

REASON_RETIREMENT_STARTED = "DiscoverySourceRemoved"
REASON_RETIREMENT_CANCELLED = "DiscoverySourceRestored"
REASON_RETIRED = "DiscoverySourceRetired"


@dataclass(frozen=True, slots=True)
class PendingRetirement:
    """One removed source waiting out its grace period (monotonic seconds)."""

    source: str
    since: float
    grace: float
    hypernodes: tuple[str, ...]

    @property
    def due(self) -> float:
        """When the source's HyperNodes are deleted."""
        return self.since + self.grace

    def remaining(self, now: float) -> float:
        """Seconds until ``due`` (0 when due)."""
        return max(0.0, self.due - now)


@dataclass(slots=True)
class RetirementChanges:
    """What one ``update`` changed."""

    started: list[PendingRetirement]
    cancelled: list[PendingRetirement]


def discovered_by_source(hypernodes: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    """The names of the discovered HyperNodes by source label (sorted); hand-made are left out."""
    out: dict[str, list[str]] = {}
    for obj in hypernodes:
        source = labels_of(obj).get(NETWORK_TOPOLOGY_SOURCE_LABEL)
        if source:
            out.setdefault(source, []).append(name_of(obj))
    return {source: sorted(names) for source, names in out.items()}


class Retirements:
    """The pending retirements (thread-safe: the config and source workers share it)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: dict[str, PendingRetirement] = {}
        self._ran_with: dict[str, float] = {}

    def note_running(self, running: Mapping[str, DiscoveryConfig]) -> None:
        """Remember the grace period each running source runs with (before a new config)."""
        with self._lock:
            self._ran_with.update((s, cfg.deletion_grace) for s, cfg in running.items())

    def grace_of(self, config: NetworkTopologyConfig) -> Callable[[str], float]:
        """A source's grace period: its (disabled) entry's, the one it ran with, or 1m."""
        with self._lock:
            ran_with = dict(self._ran_with)

        def grace(source: str) -> float:
            entry = config.get(source)
            if entry is not None:
                return entry.deletion_grace
            return ran_with.get(source, DEFAULT_DELETION_GRACE_SECONDS)

        return grace

    def update(
        self,
        configured: Collection[str],
        discovered: Mapping[str, list[str]],
        grace_of: Callable[[str], float],
        now: float,
    ) -> RetirementChanges:
        """Start, keep, cancel or drop retirements after a configuration was applied."""
        changes = RetirementChanges([], [])
        with self._lock:
            for source in sorted(self._pending):
                pending = self._pending[source]
                if source in configured:
                    changes.cancelled.append(self._pending.pop(source))
                elif not discovered.get(source):
                    del self._pending[source]
                else:
                    self._pending[source] = PendingRetirement(
                        source, pending.since, grace_of(source), tuple(discovered[source])
                    )
            for source, names in sorted(discovered.items()):
                if source in configured or source in self._pending or not names:
                    continue
                started = PendingRetirement(source, now, grace_of(source), tuple(names))
                self._pending[source] = started
                changes.started.append(started)
        return changes

    def get(self, source: str) -> PendingRetirement | None:
        """The pending retirement of ``source``, if any."""
        with self._lock:
            return self._pending.get(source)

    def finish(self, source: str) -> None:
        """``source`` has been retired (or no longer needs to be)."""
        with self._lock:
            self._pending.pop(source, None)

    def pending(self) -> list[PendingRetirement]:
        """Every pending retirement, by source."""
        with self._lock:
            return [self._pending[s] for s in sorted(self._pending)]


def configured_sources(config: NetworkTopologyConfig, running: Iterable[str]) -> set[str]:
    """Sources not to retire: enabled entries, entries rejected with a problem, running."""
    configured = set(config.enabled()) | set(running)
    configured |= {p.source for p in config.problems if p.source is not None}
    return configured


def due_stamp(clock: Clock, pending: PendingRetirement) -> str:
    """When ``pending`` is due, as a wall-clock timestamp."""
    due = clock.wall() + timedelta(seconds=pending.remaining(clock.now()))
    return due.strftime("%Y-%m-%dT%H:%M:%SZ")


def pending_line(pending: PendingRetirement, when: str) -> str:
    """The ``/readyz`` detail line while a retirement is pending."""
    return (
        f"source {pending.source!r} removed from the configuration: its "
        f"{len(pending.hypernodes)} HyperNodes are retired at {when} unless it is "
        "configured again"
    )


def started_message(pending: PendingRetirement, when: str, names: str) -> str:
    """The Normal Event text when a retirement starts."""
    return (
        f"discovery source {pending.source!r} was removed from the configuration (or "
        f"disabled): its {len(pending.hypernodes)} HyperNodes{names} will be retired at "
        f"{when} (deletionGracePeriod {pending.grace:g}s) unless it is configured again"
    )


def cancelled_message(pending: PendingRetirement) -> str:
    """The Normal Event text when a source is configured again in time."""
    return (
        f"discovery source {pending.source!r} is configured again: the retirement of its "
        f"{len(pending.hypernodes)} HyperNodes is cancelled, nothing was deleted"
    )


def retired_message(source: str, deleted: list[str], names: str) -> str:
    """The Normal Event text once the retirement happened."""
    return (
        f"discovery source {source!r} was removed from the configuration: retired "
        f"{len(deleted)} HyperNodes{names}"
    )
