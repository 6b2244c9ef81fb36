"""The ``hyperNode-controller``: wiring, event handlers, queues and sync functions.

``initialize`` takes the shared Node and HyperNode informers, adds a ConfigMap informer
field-selected to the controller ConfigMap (``config.configmap_location``), and builds:

- the **discovery manager** (``manager.py``) with the builtin sources (``label``, ``ufm``),
  whose results land in the ``source`` queue, keyed by source name;
- the **reconciler** (``reconcile.py``) that applies one source's result;
- the **node-count index and sync** (``status.py``), fed by the Node/HyperNode handlers,
  whose affected HyperNodes land in the ``status`` queue.

``run`` starts the informers, waits until the caches *and our handlers* have seen the first
lists (so neither a discovery nor a node count is computed from a half-filled cache),
queues the ConfigMap once (an absent one means "no sources yet"), and runs three worker
pools until ``stop``: ``sync_config`` (one worker), ``sync_source`` (one worker: sources are
few and each holds one result; it comes back when a missing HyperNode's grace period ends,
records a Normal Event on the ConfigMap when a configuration change was applied, and
``readiness_detail`` puts both on ``/readyz``) and ``sync_status`` (``worker_threads``). All
three are plain functions of a key over the caches, tested directly without threads.

A source removed from (or disabled in) the configuration: ``sync_config`` starts its
pending retirement (``retire.py``: Normal Event, ``/readyz`` line) and queues the source
for when its grace period ends; ``sync_source`` then deletes its HyperNodes, unless it was
configured again meanwhile (which cancels the retirement).
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Mapping
from typing import Any

from volcano_py.api import JSON
from volcano_py.api import resources as R
from volcano_py.api.constants import (
    HYPERNODE_CONTROLLER_NAME,
    LABEL_DISCOVERER,
    NETWORK_TOPOLOGY_SOURCE_LABEL,
    UFM_DISCOVERER,
)
from volcano_py.api.meta import labels_of, name_of
from volcano_py.controllers.framework import (
    ControllerOptions,
    start_and_wait_for_caches,
)
from volcano_py.controllers.hypernode.config import (
    DEFAULT_DELETION_GRACE_SECONDS,
    DEFAULT_MAX_DELETE_PERCENT,
    ConfigError,
    DiscoveryConfig,
    NetworkTopologyConfig,
    config_from_configmap,
    configmap_location,
)
from volcano_py.controllers.hypernode.discovery import (
    Discoverer,
    DiscovererRegistry,
    DiscoveryContext,
    DiscoveryResult,
    EventHub,
    ReadStore,
)
from volcano_py.controllers.hypernode.label import new_label_discoverer
from volcano_py.controllers.hypernode.manager import DiscoveryManager
from volcano_py.controllers.hypernode.plan import REASON_CONFIG_HELD_BACK
from volcano_py.controllers.hypernode.reconcile import ReconcileOutcome, Reconciler
from volcano_py.controllers.hypernode.retire import (
    REASON_RETIRED,
    REASON_RETIREMENT_CANCELLED,
    REASON_RETIREMENT_STARTED,
    PendingRetirement,
    Retirements,
    cancelled_message,
    configured_sources,
    discovered_by_source,
    due_stamp,
    pending_line,
    retired_message,
    started_message,
)
from volcano_py.controllers.hypernode.status import NodeCountIndex, NodeCountSync
from volcano_py.kube.clock import Clock, RealClock
from volcano_py.kube.events import NORMAL, WARNING, Recorder
from volcano_py.kube.informer import EventHandler, HandlerRegistration, Informer
from volcano_py.kube.workqueue import RateLimitingQueue, run_workers
from volcano_py.metrics import DISCOVERY_RUNS

log = logging.getLogger(__name__)

CONFIG_RETRY_S = 30.0
REASON_INVALID_CONFIG = "InvalidDiscoveryConfig"
REASON_CONFIG_APPLIED = "DiscoveryConfigApplied"
_GRACE_SLACK_S = 0.5
_NAMES_SHOWN = 5


def register_builtin_discoverers(registry: DiscovererRegistry) -> None:
    """Register the ``label`` and ``ufm`` sources."""
    registry.register(LABEL_DISCOVERER, new_label_discoverer)
    registry.register(UFM_DISCOVERER, _new_ufm_discoverer)


def _new_ufm_discoverer(config: DiscoveryConfig, context: DiscoveryContext) -> Discoverer:
    # imported when a configuration names UFM: its HTTPS client (urllib3) is ~0.03 s of a
    # manager's start-up that most clusters never use
    from volcano_py.controllers.hypernode.ufm import new_ufm_discoverer

    return new_ufm_discoverer(config, context)


class HyperNodeController:
    """Volcano's ``hyperNode-controller``. See the module docstring."""

    def __init__(
        self,
        *,
        registry: DiscovererRegistry | None = None,
        clock: Clock | None = None,
        configmap: tuple[str, str] | None = None,
        rng: random.Random | None = None,
    ) -> None:
        if registry is None:
            registry = DiscovererRegistry()
            register_builtin_discoverers(registry)
        self.registry = registry
        self._clock: Clock = clock or RealClock()
        self._rng = rng or random.Random()
        self.configmap_namespace, self.configmap_name = configmap or configmap_location()
        self.config_queue: RateLimitingQueue[str] = RateLimitingQueue(
            f"{HYPERNODE_CONTROLLER_NAME}:config", clock=self._clock
        )
        self.source_queue: RateLimitingQueue[str] = RateLimitingQueue(
            f"{HYPERNODE_CONTROLLER_NAME}:source", clock=self._clock
        )
        self.status_queue: RateLimitingQueue[str] = RateLimitingQueue(
            f"{HYPERNODE_CONTROLLER_NAME}:status", clock=self._clock
        )
        self.index = NodeCountIndex()
        self.node_events = EventHub()
        self.hypernode_events = EventHub()
        self._options: ControllerOptions | None = None
        self._informers: list[Informer] = []
        self._registrations: list[HandlerRegistration] = []
        self._recorder: Recorder | None = None
        self._configmaps: Informer | None = None
        self._config_loaded = False
        self.manager: DiscoveryManager | None = None
        self.reconciler: Reconciler | None = None
        self.status_sync: NodeCountSync | None = None
        self.last_outcome: dict[str, ReconcileOutcome] = {}
        self.config_changes: dict[str, str] = {}
        self._last_good: dict[str, DiscoveryResult] = {}
        self.retirements = Retirements()
        self._hypernodes: ReadStore | None = None

    @property
    def name(self) -> str:
        """``hyperNode-controller``."""
        return HYPERNODE_CONTROLLER_NAME

    @property
    def config_loaded(self) -> bool:
        """Whether a configuration (possibly "no ConfigMap": no sources) has been applied."""
        return self._config_loaded

    @property
    def configmap_key(self) -> str:
        """The ConfigMap's cache key."""
        return f"{self.configmap_namespace}/{self.configmap_name}"

    # -- wiring -------------------------------------------------------------------------

    def initialize(self, options: ControllerOptions) -> None:
        """Get the informers, build the manager, reconciler and status sync, add handlers."""
        self._options = options
        self._recorder = options.recorder
        factory = options.informers
        nodes = factory.informer(R.NODES)
        hypernodes = factory.informer(R.HYPERNODES)
        self._hypernodes = hypernodes.store
        self._configmaps = factory.informer(
            R.CONFIGMAPS,
            namespace=self.configmap_namespace,
            field_selector=f"metadata.name={self.configmap_name}",
        )
        self._informers = [nodes, hypernodes, self._configmaps]
        client = options.client

        def get_secret(namespace: str, name: str) -> JSON:
            return client.get(R.SECRETS, name, namespace)

        context = DiscoveryContext(
            nodes=nodes.store,
            hypernodes=hypernodes.store,
            get_secret=get_secret,
            node_events=self.node_events,
            hypernode_events=self.hypernode_events,
            clock=self._clock,
            rng=self._rng,
            report=self.report_problem,
        )
        self.manager = DiscoveryManager(
            self.registry, context, on_result=self.source_queue.add, on_problem=self.report_problem
        )
        self.reconciler = Reconciler(
            client,
            hypernodes.store,
            recorder=self._recorder,
            clock=self._clock,
            event_target=self.configmap,
        )
        self.status_sync = NodeCountSync(
            client, hypernodes.store, self.index, foreground=options.foreground
        )
        self._registrations = [
            nodes.add_event_handler(
                EventHandler(self.on_node_add, self.on_node_update, self.on_node_delete)
            ),
            hypernodes.add_event_handler(
                EventHandler(
                    self.on_hypernode_add, self.on_hypernode_update, self.on_hypernode_delete
                )
            ),
            self._configmaps.add_event_handler(
                EventHandler(
                    lambda obj: self.config_queue.add(self.configmap_key),
                    lambda old, new: self.config_queue.add(self.configmap_key),
                    lambda obj: self.config_queue.add(self.configmap_key),
                )
            ),
        ]

    def run(self, stop: threading.Event) -> None:
        """Start informers, wait for caches and handlers, run the workers until ``stop``."""
        if self._options is None or self.manager is None:
            raise RuntimeError(f"{self.name}: run() before initialize()")
        if not start_and_wait_for_caches(self._options, self._informers, stop, self._registrations):
            return
        log.info("%s: caches synced", self.name)
        self.config_queue.add(self.configmap_key)
        threads = [
            threading.Thread(
                target=run_workers,
                args=(queue, 1, sync, stop, queue.name),
                name=f"controller:{queue.name}",
                daemon=True,
            )
            for queue, sync in (
                (self.config_queue, self.sync_config),
                (self.source_queue, self.sync_source),
            )
        ]
        for thread in threads:
            thread.start()
        try:
            workers = max(1, self._options.worker_threads)
            run_workers(self.status_queue, workers, self.sync_status, stop, self.status_queue.name)
        finally:
            self.manager.stop()
            for thread in threads:
                thread.join(timeout=10.0)
            log.info("%s: stopped", self.name)

    # -- handlers -----------------------------------------------------------------------

    def _enqueue_status(self, names: set[str]) -> None:
        for name in names:
            self.status_queue.add(name)

    def on_node_add(self, obj: JSON) -> None:
        """Count the node in; wake discoverers."""
        self._enqueue_status(self.index.node_upserted(name_of(obj), labels_of(obj)))
        self.node_events.on_add(obj)

    def on_node_update(self, old: JSON, new: JSON) -> None:
        """Re-count only when the labels changed; wake discoverers."""
        if labels_of(old) != labels_of(new):
            self._enqueue_status(self.index.node_upserted(name_of(new), labels_of(new)))
        self.node_events.on_update(old, new)

    def on_node_delete(self, obj: JSON) -> None:
        """Count the node out; wake discoverers."""
        self._enqueue_status(self.index.node_deleted(name_of(obj)))
        self.node_events.on_delete(obj)

    def on_hypernode_add(self, obj: JSON) -> None:
        """Index the HyperNode and queue what it affects.

        One labelled with a source that is neither running nor being retired (its source was
        removed before the cache had it) queues the configuration, which starts the
        retirement.
        """
        self._enqueue_status(self.index.hypernode_upserted(obj))
        self.hypernode_events.on_add(obj)
        source = labels_of(obj).get(NETWORK_TOPOLOGY_SOURCE_LABEL)
        if (
            source
            and self._config_loaded
            and self.manager is not None
            and self.manager.config_for(source) is None
            and self.retirements.get(source) is None
        ):
            self.config_queue.add(self.configmap_key)

    def on_hypernode_update(self, old: JSON, new: JSON) -> None:
        """Re-index (cheap when only status changed) and queue what it affects."""
        self._enqueue_status(self.index.hypernode_upserted(new))
        self.hypernode_events.on_update(old, new)

    def on_hypernode_delete(self, obj: JSON) -> None:
        """Drop the HyperNode and queue its ancestors."""
        self._enqueue_status(self.index.hypernode_deleted(name_of(obj)))
        self.hypernode_events.on_delete(obj)

    # -- sync functions -----------------------------------------------------------------

    def configmap(self) -> Mapping[str, Any] | None:
        """The controller ConfigMap from the cache (None when it does not exist)."""
        if self._configmaps is None:
            return None
        return self._configmaps.store.get(self.configmap_key)

    def sync_config(self, key: str) -> float | None:
        """Apply the ConfigMap's configuration; a retry delay when a source should retry."""
        if self.manager is None:
            raise RuntimeError(f"{self.name}: sync before initialize()")
        configmap = self.configmap()
        if configmap is None:
            log.info(
                "%s: ConfigMap %s not found; no discovery sources run until it exists",
                self.name,
                key,
            )
        try:
            config = config_from_configmap(configmap, default_namespace=self.configmap_namespace)
        except ConfigError as e:
            if self._config_loaded:
                self.report_problem(f"ConfigMap {key}: {e}; keeping the running sources")
            else:
                self.report_problem(f"ConfigMap {key}: {e}; running with no discovery sources")
            return None
        self._config_loaded = True
        self.retirements.note_running(self.manager.running())
        outcome = self.manager.apply(config)
        if configmap is not None:  # an absent ConfigMap removes nothing (docs/discovery.md)
            self._schedule_retirements(config)
        return CONFIG_RETRY_S if outcome.retry else None

    def _schedule_retirements(self, config: NetworkTopologyConfig) -> None:
        """Start or cancel the retirement of sources no longer configured (``retire.py``)."""
        if self.manager is None or self._hypernodes is None:
            return
        changes = self.retirements.update(
            configured_sources(config, self.manager.running()),
            discovered_by_source(self._hypernodes.list()),
            self.retirements.grace_of(config),
            self._clock.now(),
        )
        for pending in changes.started:
            when = due_stamp(self._clock, pending)
            message = started_message(pending, when, _names(list(pending.hypernodes)))
            self._announce(REASON_RETIREMENT_STARTED, message)
            self.source_queue.add_after(pending.source, pending.grace + _GRACE_SLACK_S)
        for pending in changes.cancelled:
            self._announce(REASON_RETIREMENT_CANCELLED, cancelled_message(pending))

    def sync_source(self, source: str) -> float | None:
        """Reconcile the result waiting for ``source`` (raises to retry it).

        With no result waiting (a planned requeue: a missing HyperNode's grace period ends),
        the last good result is reconciled again, unless the configuration changed since.
        Returns when to look again while a missing HyperNode waits out its grace period.
        """
        if self.manager is None or self.reconciler is None:
            raise RuntimeError(f"{self.name}: sync before initialize()")
        retirement = self.retirements.get(source)
        if retirement is not None:
            return self._sync_retirement(retirement)
        config = self.manager.config_for(source)
        pending = self.manager.pending(source)
        result = pending
        if result is None:
            result = self._last_good.get(source)
            if result is None or config is None or result.fingerprint != config.fingerprint:
                return None
        share = config.max_delete_percent if config is not None else DEFAULT_MAX_DELETE_PERCENT
        grace = config.deletion_grace if config is not None else DEFAULT_DELETION_GRACE_SECONDS
        outcome = self.reconciler.reconcile(result, share, grace)
        self.last_outcome[source] = outcome
        if result.ok:
            self._last_good[source] = result
        DISCOVERY_RUNS.labels(
            source, "error" if not result.ok else "held-back" if outcome.held_back else "ok"
        ).inc()
        self._report_config_change(outcome)
        if pending is not None:
            self.manager.result_synced(source, pending)
        plan = outcome.plan
        if plan is None or plan.next_due is None:
            return None
        return plan.next_due + _GRACE_SLACK_S

    def _sync_retirement(self, pending: PendingRetirement) -> float | None:
        """Retire a removed source's HyperNodes once its grace period is over."""
        if self.manager is None or self.reconciler is None:
            raise RuntimeError(f"{self.name}: sync before initialize()")
        source = pending.source
        remaining = pending.remaining(self._clock.now())
        if remaining > 0:
            return remaining + _GRACE_SLACK_S
        if self.manager.config_for(source) is not None:  # configured again meanwhile
            self.retirements.finish(source)
            return None
        outcome = self.reconciler.retire_source(source)
        self.retirements.finish(source)
        self._last_good.pop(source, None)
        self.last_outcome.pop(source, None)
        message = retired_message(source, outcome.deleted, _names(outcome.deleted))
        when = self._clock.wall().strftime("%Y-%m-%dT%H:%M:%SZ")
        self.config_changes[source] = f"{message} at {when}"
        self._announce(REASON_RETIRED, message)
        return None

    def _announce(self, reason: str, message: str) -> None:
        """Log ``message`` and record it as a Normal Event on the ConfigMap."""
        log.info("%s: %s", self.name, message)
        configmap = self.configmap()
        if self._recorder is not None and configmap is not None:
            self._recorder.event(configmap, NORMAL, reason, message, resource=R.CONFIGMAPS)

    def _report_config_change(self, outcome: ReconcileOutcome) -> None:
        """A Normal Event on the ConfigMap and a ``/readyz`` line for an applied change."""
        plan = outcome.plan
        if plan is None or not plan.config_changed or outcome.held_back:
            return
        retired = [n for n in plan.retired if n in outcome.deleted]
        message = (
            f"discovery source {outcome.source!r}: configuration change applied: retired "
            f"{len(retired)} HyperNodes{_names(retired)}, created {len(outcome.created)}"
            f"{_names(outcome.created)}"
        )
        when = self._clock.wall().strftime("%Y-%m-%dT%H:%M:%SZ")
        self.config_changes[outcome.source] = f"{message} at {when}"
        self._announce(REASON_CONFIG_APPLIED, message)

    def readiness_detail(self) -> list[str]:
        """Lines for ``/readyz``: configuration changes applied or held back, what waits."""
        lines = [f"hypernode discovery: {line}" for _, line in sorted(self.config_changes.items())]
        for pending in self.retirements.pending():
            lines.append(
                f"hypernode discovery: {pending_line(pending, due_stamp(self._clock, pending))}"
            )
        for source in sorted(self.last_outcome):
            outcome = self.last_outcome[source]
            plan = outcome.plan
            if outcome.held_back and plan and plan.held_back_reason == REASON_CONFIG_HELD_BACK:
                lines.append(f"hypernode discovery: {outcome.held_back}")
                continue  # what it would retire is not waiting to be deleted
            if self.reconciler is not None:
                waiting = self.reconciler.missing.waiting(source)
                if waiting:
                    lines.append(
                        f"hypernode discovery: source {source!r}: {len(waiting)} HyperNodes "
                        f"missing from its results{_names(sorted(waiting))}, deleted after "
                        "the grace period unless they come back"
                    )
        return lines

    def sync_status(self, name: str) -> None:
        """Bring one HyperNode's ``status.nodeCount`` up to date."""
        if self.status_sync is None:
            raise RuntimeError(f"{self.name}: sync before initialize()")
        self.status_sync.sync(name)

    def report_problem(self, message: str) -> None:
        """Log a configuration problem and record it as an Event on the ConfigMap."""
        log.warning("%s: %s", self.name, message)
        configmap = self.configmap()
        if self._recorder is not None and configmap is not None:
            self._recorder.event(
                configmap, WARNING, REASON_INVALID_CONFIG, message, resource=R.CONFIGMAPS
            )


def _names(names: list[str]) -> str:
    """`` (a, b, c and 4 more)`` for messages; empty for no names."""
    if not names:
        return ""
    shown = ", ".join(names[:_NAMES_SHOWN])
    more = len(names) - _NAMES_SHOWN
    return f" ({shown} and {more} more)" if more > 0 else f" ({shown})"
