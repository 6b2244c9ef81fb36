"""``Scheduler``: the loop — snapshot, session, actions, then bind and report.

One cycle (``run_cycle``, Volcano's ``runOnce``): open a session on the cache's snapshot with
the cycle's binder (``binds.CycleBinder``: each committed task is assumed in the cache and its
bind started at once), run the configured actions, close the session and wait for the binds
(a failed bind is forgotten and its job retried next cycle), write the evictions, then run the
``JobUpdater`` (``job_updater.py``, Volcano's ``closeSession``): the PodGroups whose phase,
conditions or allocated HyperNode changed go to the writer (written off the cycle), the
pending pods of unplaced gangs are told why, and the jobs with nothing to do are settled or,
when they could not be placed, parked (``cache/parking.py``). Plugins and actions never write;
the scheduler's PodGroup, pod and bind writes go through the writer (Queue status has its own,
``queue_status.py``).

``Scheduler.run(stop)`` runs a cycle every ``schedule_period`` seconds (default 1 s) and
earlier when the cache reports a relevant change. The manager constructs it with the shared
informers; ``simulate`` uses ``run_cycle`` with a ``MemoryWriter`` and no informers.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from volcano_py.api.constants import DEFAULT_SCHEDULER_NAME
from volcano_py.api.resources import NATIVE_COMPOSITES, NATIVE_PODGROUPS, NATIVE_WORKLOADS
from volcano_py.kube.changelog import ChangeLog
from volcano_py.kube.client import KubeClient
from volcano_py.kube.clock import Clock, RealClock
from volcano_py.kube.discovery import serves
from volcano_py.kube.events import Recorder
from volcano_py.kube.informer import SharedInformerFactory
from volcano_py.metrics import (
    ACTION_SCHEDULING_LATENCY,
    E2E_SCHEDULING_LATENCY,
    OPEN_SESSION_DURATION,
    SCHEDULE_ATTEMPTS,
    UNSCHEDULE_JOB_COUNT,
)
from volcano_py.scheduler.actions import register_builtin_actions
from volcano_py.scheduler.api.node_search import NodeSearch
from volcano_py.scheduler.binds import CycleBinder
from volcano_py.scheduler.cache import Classifier, SchedulerCache
from volcano_py.scheduler.capacity_metrics import EXPORT_INTERVAL_S, export_capacity
from volcano_py.scheduler.conf_watch import ConfigMapGetter, ConfWatch
from volcano_py.scheduler.cycle_metrics import forget_jobs, record_binds
from volcano_py.scheduler.eviction_writes import write_evictions
from volcano_py.scheduler.framework.conf import DEFAULT_SCHEDULER_CONF, SchedulerConf
from volcano_py.scheduler.framework.framework import close_session, open_session
from volcano_py.scheduler.framework.interface import JobFit
from volcano_py.scheduler.framework.registry import ActionRegistry, PluginRegistry, load_conf
from volcano_py.scheduler.framework.session import Session
from volcano_py.scheduler.job_updater import JobUpdater
from volcano_py.scheduler.plugins import register_builtin_plugins
from volcano_py.scheduler.plugins.support.queue_metrics import export_queue_infos
from volcano_py.scheduler.podgroup_events import Event, PodGroupEvents
from volcano_py.scheduler.podgroup_warnings import PodGroupWarnings
from volcano_py.scheduler.queue_status import (
    QueueEvents,
    QueueStatusWriter,
    ensure_builtin_queues,
)
from volcano_py.scheduler.topology_config import enforces_topology
from volcano_py.scheduler.writer import DEFAULT_BIND_WORKERS, KubeWriter, Writer

log = logging.getLogger(__name__)

DEFAULT_SCHEDULE_PERIOD_S = 1.0
MIN_CYCLE_GAP_S = 0.05
STOP_POLL_S = 0.1


def builtin_registries() -> tuple[PluginRegistry, ActionRegistry]:
    """Fresh registries holding the built-in plugins and actions."""
    plugins, actions = PluginRegistry(), ActionRegistry()
    register_builtin_plugins(plugins)
    register_builtin_actions(actions)
    return plugins, actions


@dataclass(slots=True)
class CycleResult:
    """What one cycle did (for logs, tests and ``simulate``)."""

    binds: dict[str, str] = field(default_factory=dict)
    bind_errors: dict[str, str] = field(default_factory=dict)
    podgroups_written: int = 0
    job_fit: dict[str, JobFit] = field(default_factory=dict)
    seconds: float = 0.0
    evictions: dict[str, str] = field(default_factory=dict)  # victim -> preemptor PodGroup
    # job uid -> (reason, message): told once as a Warning Event (``podgroup_warnings``)
    warnings: dict[str, tuple[str, str]] = field(default_factory=dict)
    # job uid -> (type, reason, message): Unschedulable / Scheduled (``podgroup_events``)
    job_events: dict[str, Event] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        """Whether anything was bound or written."""
        return bool(self.binds or self.podgroups_written or self.evictions)


EVICTING_ACTIONS = frozenset({"preempt", "gangpreempt", "reclaim", "gangreclaim"})


def run_cycle(
    cache: SchedulerCache,
    conf: SchedulerConf,
    plugins: PluginRegistry,
    actions: ActionRegistry,
    writer: Writer,
    notes: ChangeLog | None = None,
    node_search: NodeSearch | None = None,
    decided: threading.Event | None = None,
) -> CycleResult:
    """One scheduling cycle (see the module docstring).

    ``notes`` remembers what was logged about each job across cycles, so a fact that holds
    for many cycles is logged once (``ChangeLog``); the cycle starts a new generation of it.
    ``node_search``: the scheduler's node-search limits and position, carried across cycles
    (a fresh default one when None). ``decided`` is set once the actions ran, before the
    cycle waits for its binds.
    """
    started = time.perf_counter()
    # an eviction action looks at every job's pods (victims are settled, running jobs)
    snapshot = cache.snapshot(
        active_only=not EVICTING_ACTIONS.intersection(conf.actions), tree_if_jobs=True
    )
    if notes is not None:
        notes.new_cycle()
    binder = CycleBinder(cache, writer)
    ssn = open_session(snapshot, conf, plugins, notes, node_search, binder)
    OPEN_SESSION_DURATION.observe((time.perf_counter() - started) * 1000)
    try:
        _execute(ssn, conf, actions)
    finally:
        close_session(ssn)
        if decided is not None:
            decided.set()
        bound, errors, bind_seconds = binder.finish(ssn.binds)
    result = CycleResult(bound, errors, job_fit=dict(ssn.job_fit))
    record_binds(ssn.jobs.values(), bound, ssn.job_fit, bind_seconds, time.time())
    result.evictions = write_evictions(cache, ssn, writer) if ssn.evictions else {}
    updater = JobUpdater(cache, writer, snapshot.job_versions, topology_on=enforces_topology(conf))
    updater.update_all(ssn, errors)
    result.podgroups_written, result.warnings = updater.written, updater.warnings
    result.job_events = updater.events
    result.seconds = time.perf_counter() - started
    _record_cycle(cache, result)
    return result


def _execute(ssn: Session, conf: SchedulerConf, actions: ActionRegistry) -> None:
    """Run the configured actions in order, timing each."""
    for name in conf.actions:
        action_started = time.perf_counter()
        actions.get(name).execute(ssn)
        ACTION_SCHEDULING_LATENCY.labels(name).observe(
            (time.perf_counter() - action_started) * 1000
        )


def _record_cycle(cache: SchedulerCache, result: CycleResult) -> None:
    """Volcano's cycle metrics: latency, attempts by outcome, unschedulable jobs."""
    E2E_SCHEDULING_LATENCY.observe(result.seconds * 1000)
    if result.binds:
        SCHEDULE_ATTEMPTS.labels("scheduled").inc(len(result.binds))
    if result.bind_errors:
        SCHEDULE_ATTEMPTS.labels("error").inc(len(result.bind_errors))
    unschedulable = [uid for uid, fit in result.job_fit.items() if fit is not None]
    if unschedulable:
        SCHEDULE_ATTEMPTS.labels("unschedulable").inc(len(unschedulable))
    # parked jobs are still unschedulable, though this cycle did not look at them
    UNSCHEDULE_JOB_COUNT.set(cache.unschedulable_count(unschedulable))


class Scheduler:
    """The embedded scheduler the manager runs (leader only)."""

    def __init__(
        self,
        client: KubeClient,
        informers: SharedInformerFactory,
        conf: SchedulerConf | str | None = None,
        scheduler_name: str = DEFAULT_SCHEDULER_NAME,
        recorder: Recorder | None = None,
        *,
        schedule_period: float = DEFAULT_SCHEDULE_PERIOD_S,
        bind_workers: int = DEFAULT_BIND_WORKERS,
        plugins: PluginRegistry | None = None,
        actions: ActionRegistry | None = None,
        clock: Clock | None = None,
        configmap: ConfigMapGetter | None = None,
        configmap_synced: Callable[[], bool] | None = None,
        node_search: NodeSearch | None = None,
        implicit: Classifier | None = None,
    ) -> None:
        """Wire the cache to ``informers`` (call before ``informers.start()``).

        ``configmap`` (the scheduler ConfigMap from a watched store) makes the conf
        hot-reloadable: see ``conf_watch.ConfWatch``; ``configmap_synced`` tells when that
        store has its first list, so the first cycle already runs the ConfigMap's conf.
        ``node_search``: how many feasible nodes a task's search finds (Volcano's defaults
        when None; ``api/node_search.py``). ``implicit``: the classifier of bare pods run as
        implicit jobs (``implicit_jobs.py``; none when None, as in Volcano).

        Raises:
            ConfError: when ``conf`` (a ``volcano-scheduler.conf`` text) is wrong.
        """
        default_plugins, default_actions = builtin_registries()
        self.plugins = plugins or default_plugins
        self.actions = actions or default_actions
        if conf is None:
            conf = DEFAULT_SCHEDULER_CONF
        text = conf if isinstance(conf, str) else None
        if isinstance(conf, str):
            conf = load_conf(conf, self.plugins, self.actions)
        self.conf_watch = ConfWatch(
            conf, self.plugins, self.actions, configmap=configmap, recorder=recorder, text=text
        )
        self.period = schedule_period
        self.clock = clock or RealClock()
        self.cache = SchedulerCache(scheduler_name, implicit, self.clock)
        self.informers = informers
        # Kubernetes' own PodGroups, when the API server serves them (api/native_groups.py)
        native = serves(client, NATIVE_PODGROUPS)
        composite = native and serves(client, NATIVE_COMPOSITES)
        workloads = native and serves(client, NATIVE_WORKLOADS)
        self._registrations = self.cache.attach(
            informers, native=native, composite=composite, workloads=workloads
        )
        self.writer = KubeWriter(
            client, recorder, workers=bind_workers, clock=self.clock, foreground=client.foreground
        )
        self.client = client
        self._configmap_synced = configmap_synced
        self.notes = ChangeLog()  # per-job log lines, once per change across cycles
        self.node_search = node_search or NodeSearch()
        self._conf_seen: SchedulerConf | None = None
        self.queue_status = QueueStatusWriter(client)
        self.queue_events = QueueEvents(recorder)
        self.podgroup_warnings = PodGroupWarnings(recorder)
        self.podgroup_events = PodGroupEvents(recorder)
        self._capacity_exported_at = float("-inf")
        # set once the first cycle has run: start-up work that can wait waits for it
        self.first_cycle = threading.Event()
        # set once the first cycle placed what it could (its binds may be in flight)
        self.first_decisions = threading.Event()
        self._capacity_series: set[tuple[str, str, str]] = set()

    @property
    def conf(self) -> SchedulerConf:
        """The running configuration."""
        return self.conf_watch.conf

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        """Wait until the cache has seen the informers' initial lists."""
        deadline = None if timeout is None else self.clock.now() + timeout
        for registration in self._registrations:
            left = None if deadline is None else max(0.0, deadline - self.clock.now())
            if not registration.wait_synced(left):
                return False
        while self._configmap_synced is not None and not self._configmap_synced():
            if deadline is not None and self.clock.now() >= deadline:
                return False
            self.clock.sleep(0.01)
        return True

    def _export_capacity(self) -> None:
        """Refresh the capacity gauges, at most every ``EXPORT_INTERVAL_S`` seconds."""
        now = self.clock.now()
        if now - self._capacity_exported_at < EXPORT_INTERVAL_S:
            return
        self._capacity_exported_at = now
        try:
            # nodes and the tree are all it reads: settled jobs need not be rebuilt for it
            snapshot = self.cache.snapshot(active_only=True)
            self._capacity_series = export_capacity(snapshot, self._capacity_series)
            forget_jobs(self.cache.podgroup_keys())
        except Exception:
            log.exception("exporting capacity metrics failed")

    def _sync_queues(self) -> None:
        """Write changed Queue statuses (never raises into the loop)."""
        infos = self.cache.queue_infos()
        try:
            export_queue_infos(infos)
            self.queue_status.sync(infos)
        except Exception:
            log.exception("writing queue status failed")

    def run_once(self) -> CycleResult:
        """One cycle now."""
        conf = self.conf_watch.current()
        if conf is not self._conf_seen:
            self.cache.unpark_all()  # what could not be placed may fit the new configuration
            self._conf_seen = conf
        result = run_cycle(
            self.cache,
            conf,
            self.plugins,
            self.actions,
            self.writer,
            self.notes,
            self.node_search,
            self.first_decisions,
        )
        fits = {uid: (f.reason, f.message) for uid, f in result.job_fit.items() if f is not None}
        self.queue_events.record(fits, self.cache.podgroup_object, self.cache.is_parked)
        if result.warnings:
            self.podgroup_warnings.record(result.warnings, self.cache.podgroup_object)
        self.podgroup_events.record(result.job_events, self.cache.podgroup_object)
        return result

    def _wait(self, stop: threading.Event) -> None:
        """Until the period ends, a relevant change arrives, or ``stop`` is set."""
        deadline = self.clock.now() + self.period
        while not stop.is_set():
            left = deadline - self.clock.now()
            if left <= 0 or self.clock.wait_event(self.cache.changed, min(left, STOP_POLL_S)):
                return

    def run(self, stop: threading.Event) -> None:
        """Cycle until ``stop`` is set: every period, or sooner after a relevant change."""
        while not self.wait_for_sync(STOP_POLL_S * 5):
            if stop.is_set():
                self.writer.close()
                return
        log.info("scheduler started: actions=%s period=%.2fs", self.conf.actions, self.period)
        seen = {n for n, q in self.cache.queue_infos().items() if not q.implicit}
        # two round trips the first cycle need not wait for: it schedules into a missing
        # queue as into an implicit one, and the created objects arrive through the informer
        threading.Thread(
            target=ensure_builtin_queues,
            args=(self.client, seen),
            name="scheduler:builtin-queues",
            daemon=True,
        ).start()
        try:
            while not stop.is_set():
                self.cache.changed.clear()
                try:
                    result = self.run_once()
                except Exception:
                    log.exception("scheduling cycle failed")
                    result = CycleResult()
                self.first_decisions.set()
                self.first_cycle.set()
                self._export_capacity()
                self._sync_queues()
                if result.binds or result.bind_errors:
                    log.info(
                        "cycle: %d bound, %d bind errors, %d podgroups written in %.3fs",
                        len(result.binds),
                        len(result.bind_errors),
                        result.podgroups_written,
                        result.seconds,
                    )
                if stop.wait(MIN_CYCLE_GAP_S):
                    break
                self._wait(stop)
        finally:
            self.writer.close()
