"""The discovery manager: runs the configured discoverers and holds their results.

``apply(config)`` makes the running discoverers match a configuration:

- an enabled entry whose source is not running is started; one whose entry changed is
  stopped and started again; a running source whose entry is unchanged is left alone, so a
  ConfigMap edit restarts exactly the changed sources;
- a running source that is no longer enabled (or no longer listed) is stopped; the
  manager leaves its HyperNodes alone (the controller retires them after the grace
  period, ``retire.py``);
- a rejected entry (bad field, unknown source, factory ``ConfigError``, start failure) is
  reported through ``on_problem`` with a message naming it; if that source was running
  with an earlier good entry it keeps running with it (unless the new entry was valid and
  only failed to start), so a typo loses nothing;
- a start failure that waiting may fix (``DiscovererStartError.retryable``, e.g. the Secret
  does not exist yet) makes ``apply`` ask to be called again (``ApplyOutcome.retry``); one
  that only a config change can fix is not retried until the entry changes.

Results: each running discoverer gets a sink. ``submit``/``fail`` put the result in the
source's single slot and call ``on_result(source)`` (the controller queues the source); a
second result blocks in ``submit`` until the controller has reconciled the first and called
``result_synced(source, result)`` — one result in flight per source. Stopping a discoverer
drops its unreconciled result and wakes a ``submit`` blocked on it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

from volcano_py.api import JSON
from volcano_py.controllers.hypernode.config import (
    ConfigError,
    DiscoveryConfig,
    NetworkTopologyConfig,
)
from volcano_py.controllers.hypernode.discovery import (
    Discoverer,
    DiscovererRegistry,
    DiscovererStartError,
    DiscoveryContext,
    DiscoveryResult,
)

log = logging.getLogger(__name__)


@dataclass(slots=True)
class ApplyOutcome:
    """What ``apply`` did."""

    started: list[str] = field(default_factory=list)
    stopped: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    retry: bool = False


class _Instance:
    """One started discoverer and its sink."""

    def __init__(self, manager: DiscoveryManager, config: DiscoveryConfig) -> None:
        self.manager = manager
        self.config = config
        self.source = config.source
        self.fingerprint = config.fingerprint
        self.alive = True
        self.discoverer: Discoverer | None = None

    # -- the ResultSink role ------------------------------------------------------------

    def submit(self, hypernodes: Sequence[JSON], explained: Collection[str] = ()) -> bool:
        result = DiscoveryResult(
            self.source,
            tuple(hypernodes),
            fingerprint=self.fingerprint,
            explained=frozenset(explained),
            force=self.config.force,
        )
        return self.manager._deliver(self, result)

    def fail(self, reason: str) -> bool:
        result = DiscoveryResult(self.source, error=reason, fingerprint=self.fingerprint)
        return self.manager._deliver(self, result)

    @property
    def stopped(self) -> bool:
        return not self.alive


class DiscoveryManager:
    """Lifecycle and back-pressure for discoverers. See the module docstring."""

    def __init__(
        self,
        registry: DiscovererRegistry,
        context: DiscoveryContext,
        *,
        on_result: Callable[[str], None],
        on_problem: Callable[[str], None] | None = None,
    ) -> None:
        self._registry = registry
        self._context = context
        self._on_result = on_result
        self._on_problem = on_problem or (lambda message: log.warning("%s", message))
        self._cond = threading.Condition()
        self._running: dict[str, _Instance] = {}
        self._failed: dict[str, DiscoveryConfig] = {}
        self._slots: dict[str, tuple[_Instance, DiscoveryResult]] = {}
        self._apply_lock = threading.Lock()

    # -- configuration ------------------------------------------------------------------

    def apply(self, config: NetworkTopologyConfig) -> ApplyOutcome:
        """Start, restart and stop discoverers to match ``config``."""
        with self._apply_lock:
            return self._apply(config)

    def _apply(self, config: NetworkTopologyConfig) -> ApplyOutcome:
        outcome = ApplyOutcome()
        keep = {p.source for p in config.problems if p.source is not None}
        outcome.problems.extend(p.message for p in config.problems)
        desired: dict[str, DiscoveryConfig] = {}
        for cfg in config.sources:
            if not cfg.enabled:
                continue
            if cfg.source not in self._registry:
                known = ", ".join(self._registry.names())
                outcome.problems.append(
                    f"{cfg.entry}: unknown discovery source {cfg.source!r}; known sources: {known}"
                )
                continue
            desired[cfg.source] = cfg
        for source in sorted(set(self._running) - set(desired) - keep):
            self._stop_instance(source)
            outcome.stopped.append(source)
        for source in list(self._failed):
            if source not in desired:
                del self._failed[source]
        for source, cfg in sorted(desired.items()):
            running = self._running.get(source)
            if running is not None and running.config == cfg:
                continue
            if self._failed.get(source) == cfg:
                continue
            self._failed.pop(source, None)
            try:
                discoverer = self._registry.create(cfg, self._context)
            except ConfigError as e:  # the running instance, if any, keeps running
                outcome.problems.append(f"{cfg.entry}: {e}")
                self._failed[source] = cfg
                continue
            if running is not None:
                self._stop_instance(source)
                outcome.stopped.append(source)
            try:
                self._start_instance(cfg, discoverer)
            except DiscovererStartError as e:
                outcome.problems.append(f"{cfg.entry}: cannot start: {e}")
                if e.retryable:
                    outcome.retry = True
                else:
                    self._failed[source] = cfg
            else:
                outcome.started.append(source)
        for message in outcome.problems:
            self._on_problem(message)
        if outcome.started and not outcome.problems:
            # the line Volcano's auto-discovery guide tells users to look for
            log.info("Successfully started all network topology discoverers: %s", outcome.started)
        if outcome.started or outcome.stopped:
            log.info(
                "discovery sources: started %s, stopped %s, running %s",
                outcome.started,
                outcome.stopped,
                sorted(self._running),
            )
        return outcome

    def _start_instance(self, cfg: DiscoveryConfig, discoverer: Discoverer) -> None:
        instance = _Instance(self, cfg)
        instance.discoverer = discoverer
        with self._cond:
            self._running[cfg.source] = instance
        try:
            discoverer.start(instance)
        except BaseException:
            with self._cond:
                instance.alive = False
                self._running.pop(cfg.source, None)
                self._cond.notify_all()
            discoverer.stop()
            raise
        log.info("started discovery source %s (%s)", cfg.source, cfg.entry)

    def _stop_instance(self, source: str) -> None:
        with self._cond:
            instance = self._running.pop(source, None)
            if instance is None:
                return
            instance.alive = False
            slot = self._slots.get(source)
            if slot is not None and slot[0] is instance:
                del self._slots[source]
            self._cond.notify_all()
        if instance.discoverer is not None:
            instance.discoverer.stop()
        log.info("stopped discovery source %s", source)

    def stop(self) -> None:
        """Stop every discoverer."""
        with self._apply_lock:
            for source in sorted(self._running):
                self._stop_instance(source)

    # -- results ------------------------------------------------------------------------

    def _deliver(self, instance: _Instance, result: DiscoveryResult) -> bool:
        with self._cond:
            while instance.alive and result.source in self._slots:
                self._cond.wait()
            if not instance.alive:
                return False
            self._slots[result.source] = (instance, result)
        self._on_result(result.source)
        return True

    def pending(self, source: str) -> DiscoveryResult | None:
        """The result of ``source`` waiting to be reconciled, if any."""
        with self._cond:
            slot = self._slots.get(source)
            return slot[1] if slot is not None else None

    def result_synced(self, source: str, result: DiscoveryResult) -> None:
        """``result`` has been reconciled: free the slot and tell its discoverer."""
        with self._cond:
            slot = self._slots.get(source)
            if slot is None or slot[1] is not result:
                return
            del self._slots[source]
            instance = slot[0]
            self._cond.notify_all()
        if instance.alive and instance.discoverer is not None:
            instance.discoverer.result_synced()

    # -- introspection ------------------------------------------------------------------

    def running(self) -> dict[str, DiscoveryConfig]:
        """The entries of the running sources."""
        with self._cond:
            return {source: inst.config for source, inst in self._running.items()}

    def config_for(self, source: str) -> DiscoveryConfig | None:
        """The entry ``source`` runs with (None when it is not running)."""
        with self._cond:
            instance = self._running.get(source)
            return instance.config if instance is not None else None
