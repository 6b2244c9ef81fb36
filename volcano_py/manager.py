"""The composition root: one process serving webhooks, running controllers and scheduling.

``Manager`` builds every part from ``ManagerOptions`` (``manager_options.py``) and starts
them in an order that is written down here with its reason (controller-runtime's
``pkg/manager/internal.go`` idea):

1. **Construction, in the gunicorn worker** (``volcano-py manager`` runs gunicorn with one
   gthread worker; everything below happens after fork, because threads do not survive it).
   The client, the ``SharedInformerFactory``, the Event recorder, the admission router and
   the scheduler's cache wiring. No thread yet; parts only *ask* the factory for informers,
   so all consumers share one cache.
2. **Ops server first** (``/healthz``, ``/readyz``, ``/metrics``, and unless ``--ui=false``
   the read-only topology view ``/ui`` + ``/api/topology`` on the scheduler cache): probes
   answer from the first second, and ``/readyz`` says "not ready" until the caches sync, so
   no Service routes admissions to a replica whose HyperNode cache is still empty.
3. **Webhooks next**: gunicorn is already accepting; admissions are served on every replica,
   leader or not, from the shared HyperNode cache.
4. **Caches**: the informers start (the large ones from lists the master fetched before
   the fork: ``kube/prefetch.py``), then the Lease campaign; readiness flips when all synced.
5. **Leader-only work last**, while this replica holds the Lease: the scheduler first; the
   controllers are built (imports, ``initialize``: their informers and handlers) and run
   once its first cycle placed what it could (``decided``) and its binds are done
   (``CONTROLLERS_AFTER_BINDS_MAX_S`` at most): built sooner they slowed the first bind by
   ~0.15 s at 500 nodes, and started beside the binds their first reconciles took the CPU
   the API server binds with (P3 at 500 nodes: the manager used 1.46-1.69 s of CPU from the
   first bind to the last with them, 0.99-1.40 s without). A standby builds them
   ``WARM_AFTER_S`` after its sync, so a takeover finds their caches warm.
   Losing the Lease stops the worker so gunicorn starts a clean one. Without a scheduler the
   controllers are built in step 1. After the first cycle the start-up heap is frozen.

Every thread is named and guarded: a guarded thread that ends unexpectedly is logged at ERROR
and takes the worker down (gunicorn's master restarts it) rather than leaving a process that
answers probes but no longer reconciles. ``stop()`` (SIGTERM) releases the Lease, lets
in-flight binds and admissions finish, then stops the informers.
"""

from __future__ import annotations

import functools
import logging
import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from volcano_py.api import resources as R
from volcano_py.api.constants import DEFAULT_SCHEDULER_NAME, SCHEDULER_CONFIGMAP_NAME
from volcano_py.controllers.builtin import register_builtin_controllers
from volcano_py.controllers.framework import ControllerOptions, ControllerRegistry, ControllerSet
from volcano_py.controllers.podgroup.implicit import implicit_pod_test, implicit_podgroup
from volcano_py.kube.client import KubeClient
from volcano_py.kube.config import load_config
from volcano_py.kube.errors import NotLeader
from volcano_py.kube.events import EventRecorder
from volcano_py.kube.idle_trim import IdleTrimmer
from volcano_py.kube.informer import SharedInformerFactory
from volcano_py.kube.leaderelection import LeaderElector
from volcano_py.kube.prefetch import ListPrefetch
from volcano_py.kube.runtime import freeze_after_sync
from volcano_py.kube.store import Store
from volcano_py.kube.workqueue import set_default_metrics
from volcano_py.manager_options import ManagerOptions as ManagerOptions  # this module's API
from volcano_py.metrics import LEADER_WRITES_FENCED, PrometheusQueueMetrics
from volcano_py.ops import OpsServer
from volcano_py.scheduler.cache import Classifier, SchedulerCache
from volcano_py.scheduler.conf_watch import ConfigMapGetter
from volcano_py.scheduler.scheduler import Scheduler
from volcano_py.ui.view import TopologyView
from webhooks import hypernodes, jobs
from webhooks import podgroups as podgroup_admission
from webhooks import pods as pod_admission
from webhooks import queues as queue_admission
from webhooks.deferred import DeferredApp
from webhooks.probe import WebhookProbe
from webhooks.router import AdmissionRouter

log = logging.getLogger(__name__)

COMPONENT = "volcano-py"
# a replica that runs no cycle (a standby) settles (_settle) this long after sync
WARM_AFTER_S = 5.0
# the leader's controllers start once the first cycle's binds are done, this long at most
CONTROLLERS_AFTER_BINDS_MAX_S = 10.0


def scheduler_component(scheduler_names: tuple[str, ...]) -> str:
    """The scheduler's Event source, as Volcano's: its one scheduler name, else ``volcano``.

    Users filter on it (``kubectl get events --field-selector source=volcano``, alerts).
    """
    return scheduler_names[0] if len(scheduler_names) == 1 else DEFAULT_SCHEDULER_NAME


def _implicit_classifier(options: ManagerOptions) -> Classifier | None:
    """Implicit jobs need the embedded scheduler: it alone knows of their PodGroups."""
    if options.implicit_podgroups and options.scheduler_enabled:
        return implicit_podgroup
    return None


def _read_conf(path: str | None) -> str | None:
    if not path:
        return None
    return Path(path).read_text()


class Manager:
    """One process's parts and their lifecycle. See the module docstring for the order."""

    def __init__(
        self,
        options: ManagerOptions,
        *,
        client: KubeClient | None = None,
        on_fatal: Callable[[str], None] | None = None,
        head_start: ListPrefetch | None = None,  # lists fetched before the fork (prefetch.py)
    ) -> None:
        self.options = options
        self.client = client or KubeClient(
            load_config(options.kubeconfig), qps=options.kube_api_qps, burst=options.kube_api_burst
        )
        self.informers = SharedInformerFactory(self.client, head_start)
        # Leader-only work (controllers, scheduler, their Events) writes through a client
        # fenced on still holding the Lease; reads, the webhook and the election do not.
        self.leader_client = self.client.gated(self._fence)
        self.recorder = EventRecorder(self.leader_client, COMPONENT)
        self.lease_recorder = EventRecorder(self.client, COMPONENT)
        # the scheduler reports as Volcano's does (source and reportingComponent)
        self.scheduler_recorder = EventRecorder(
            self.leader_client, scheduler_component(options.scheduler_names)
        )
        self.stop_event = threading.Event()
        self._on_fatal = on_fatal or _terminate_worker
        self._ready = threading.Event()
        self._problems: list[str] = []
        self._threads: list[threading.Thread] = []
        self._leading_threads: list[threading.Thread] = []
        self._elector: LeaderElector | None = None
        self.webhook_probe = (
            WebhookProbe(*options.webhook_address) if options.webhook_address else None
        )

        set_default_metrics(PrometheusQueueMetrics())
        registry = ControllerRegistry()
        register_builtin_controllers(registry)
        implicit = _implicit_classifier(options)
        controller_options = ControllerOptions(
            client=self.leader_client,
            informers=self.informers,
            recorder=self.recorder,
            scheduler_names=options.scheduler_names,
            worker_threads=options.worker_threads,
            worker_threads_for_podgroup=options.worker_threads_for_podgroup,
            inherit_owner_annotations=options.inherit_owner_annotations,
            implicit_pod=implicit_pod_test(options.scheduler_names[0], enabled=bool(implicit)),
            namespace=options.namespace,
            foreground=self.client.foreground,
        )
        names = registry.enabled(options.controllers)
        self.controllers = ControllerSet(registry, names, controller_options)  # step 5
        if not options.scheduler_enabled:
            self.controllers.build()

        self.scheduler: Scheduler | None = None
        if options.scheduler_enabled:
            # --scheduler-conf was checked before anything listened (commands/manager.py);
            # without it the scheduler ConfigMap is watched and applied from the first cycle
            conf = _read_conf(options.scheduler_conf)
            configmap: ConfigMapGetter | None = None
            configmap_synced = None
            if conf is None:
                cms = self.informers.informer(
                    R.CONFIGMAPS,
                    namespace=options.namespace,
                    field_selector=f"metadata.name={SCHEDULER_CONFIGMAP_NAME}",
                )
                configmap = functools.partial(
                    cms.store.get, f"{options.namespace}/{SCHEDULER_CONFIGMAP_NAME}"
                )
                configmap_synced = cms.has_synced

            self.scheduler = Scheduler(
                self.leader_client,
                self.informers,
                conf,
                options.scheduler_names[0],
                self.scheduler_recorder,
                schedule_period=options.schedule_period,
                bind_workers=options.bind_workers,
                node_search=options.node_search,
                configmap=configmap,
                configmap_synced=configmap_synced,
                implicit=implicit,
            )

        self.router = AdmissionRouter()
        self.app = DeferredApp(self._build_app)
        hypernode_store = self.informers.informer(R.HYPERNODES).store
        self.hypernode_validator = hypernodes.DeferredValidator(
            lambda: hypernodes.new_validator(hypernode_store)
        )
        hypernodes.register(self.router, validator=self.hypernode_validator)
        queues = self.informers.informer(R.QUEUES).store
        jobs.register(self.router, queues.get, functools.partial(child_queues, queues))
        queue_admission.register(
            self.router,
            queue_admission.cluster_view(
                queues,
                self.informers.informer(R.PODGROUPS).store,
                self.informers.informer(R.NODES).store,
            ),
        )
        pod_admission.register(self.router, options.scheduler_names)
        namespaces = self.informers.informer(R.NAMESPACES).store
        podgroup_admission.register(self.router, namespaces.get)
        self.topology: TopologyView | None = None
        if options.ui_enabled:
            # the scheduler's cache when there is one (every replica builds it), else its own
            cache = self.scheduler.cache if self.scheduler is not None else SchedulerCache()
            if self.scheduler is None:
                cache.attach(self.informers)
            self.topology = TopologyView(
                cache,
                self.informers.change_key,
                self.informers.informer(R.HYPERNODES).store.list,
                replica=self._replica_state,
            )
        self.ops = OpsServer(
            options.metrics_host,
            options.metrics_port,
            healthy=self.health,
            ready=self.readiness,
            ready_detail=self.readiness_detail,
            routes=self.topology.routes() if self.topology is not None else None,
        )
        if head_start is not None:
            head_start.drop()  # lists no informer here took

    def _fence(self, method: str, path: str) -> None:
        """Refuse a leader-only write once this replica may no longer hold the Lease."""
        if not self.options.leader_elect:
            return
        elector = self._elector
        if elector is None or not elector.holds_lease():
            LEADER_WRITES_FENCED.inc()
            raise NotLeader(f"{method} {path}: not sent, this replica no longer holds the Lease")

    # -- probes ---------------------------------------------------------------------------

    def health(self) -> list[str]:
        """Reasons the process is unhealthy (empty: healthy)."""
        return list(self._problems)

    def readiness(self) -> list[str]:
        """Reasons the process is not ready to serve admissions (empty: ready)."""
        if self._ready.is_set():
            problems = self.health()
            found = self.webhook_probe.problem() if self.webhook_probe is not None else None
            return [*problems, found] if found else problems
        pending = [i.name for i in self.informers.informers() if not i.has_synced()]
        return [f"caches not synced: {', '.join(pending) or 'starting'}"]

    def readiness_detail(self) -> list[str]:
        """Lines shown on a passing ``/readyz``.

        What controllers with a ``readiness_detail()`` have to say (discovery changes), and
        what the scheduler conf accepts but skips.
        """
        lines: list[str] = []
        for controller in self.controllers.built():
            detail = getattr(controller, "readiness_detail", None)
            if callable(detail):
                lines.extend(str(line) for line in detail())
        if self.scheduler is None:
            return lines
        watch = self.scheduler.conf_watch
        lines += [
            f"scheduler conf: accepted, not implemented: {n}" for n in watch.conf.not_implemented
        ]
        if watch.topology_note:
            lines.append(f"scheduler conf: {watch.topology_note}")
        if watch.last_error:
            lines.append(f"scheduler conf: last edit rejected: {watch.last_error}")
        return lines

    def _replica_state(self) -> dict[str, Any]:
        """Who serves the topology view: identity, leader or not, caches synced."""
        return {
            "identity": self.options.identity,
            "leader": self.is_leader(),
            "cachesSynced": self._ready.is_set(),
        }

    def is_ready(self) -> bool:
        """Whether ``readiness`` is empty."""
        return not self.readiness()

    def wsgi_app(self) -> Any:
        """The admission router's Flask app, built on a first request or by ``_settle``."""
        return self.app

    def _build_app(self) -> Any:
        from webhooks.app import create_app

        return create_app(self.router, ready=self.is_ready)

    def is_leader(self) -> bool:
        """Whether this replica runs the controllers and the scheduler now."""
        return (
            self._elector.is_leader() if self._elector is not None else bool(self._leading_threads)
        )

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> None:
        """Start everything in the documented order; returns at once (threads do the work)."""
        self.ops.start()
        self.recorder.start()
        self.lease_recorder.start()
        self.scheduler_recorder.start()
        self.informers.start()
        self._guard("manager:cache-sync", self._wait_for_caches, expect_exit=True)
        trimmer = IdleTrimmer(self.informers.change_key)
        self._guard("manager:idle-trim", lambda: trimmer.run(self.stop_event), expect_exit=True)
        if self.webhook_probe is not None:
            probe = self.webhook_probe
            self._guard("webhook-probe", lambda: probe.run(self.stop_event), expect_exit=True)
        if self.options.leader_elect:
            self._elector = LeaderElector(
                self.client,
                self.options.lease_namespace or self.options.namespace,
                self.options.lease_name,
                self.options.identity,
                lease_duration=self.options.lease_duration,
                renew_deadline=self.options.renew_deadline,
                retry_period=self.options.retry_period,
                on_started_leading=self._lead,
                recorder=self.lease_recorder,
            )
            self._guard("leader-election", self._campaign, expect_exit=True)
        else:
            self._guard("manager:leading", lambda: self._lead(self.stop_event), expect_exit=True)

    def stop(self, timeout: float = 20.0) -> None:
        """Stop: release the Lease, finish in-flight work, stop caches. Idempotent."""
        if self.stop_event.is_set():
            return
        log.info("manager stopping")
        self.stop_event.set()
        deadline = time.monotonic() + timeout
        for thread in self._leading_threads + self._threads:
            thread.join(max(0.1, deadline - time.monotonic()))
        if self.scheduler is not None:
            self.scheduler.writer.close()
        self.recorder.stop(timeout=max(0.1, deadline - time.monotonic()))
        self.lease_recorder.stop(timeout=max(0.1, deadline - time.monotonic()))
        self.scheduler_recorder.stop(timeout=max(0.1, deadline - time.monotonic()))
        self.informers.shutdown()
        self.ops.stop()
        log.info("manager stopped")

    def _wait_for_caches(self) -> None:
        if not self.informers.wait_for_cache_sync(self.options.cache_sync_timeout):
            pending = [i.name for i in self.informers.informers() if not i.has_synced()]
            self._fatal(f"caches did not sync in {self.options.cache_sync_timeout}s: {pending}")
            return
        self._ready.set()
        log.info("caches synced: %d informers", len(self.informers.informers()))
        self._guard("manager:settle", self._settle, expect_exit=True)

    def _settle(self) -> None:
        """Once the first cycle ran: build the controllers and the webhook parts, then freeze.

        The webhook parts (flask's imports ~0.08 s, the validator's CEL compile ~0.2 s) and
        the full collection before ``freeze_after_sync`` (~0.1 s at 500 nodes) would delay
        the first bind. A request builds the webhook parts sooner; a standby (no cycle) does
        it all ``WARM_AFTER_S`` after sync.
        """
        self._after_first_cycle(self.stop_event)
        if self.stop_event.is_set():
            return
        self.controllers.build()  # a standby too: warm caches for a takeover
        self.informers.start()
        self.app.warm()
        self.hypernode_validator.warm()
        freeze_after_sync()

    def _after_first_cycle(self, stop: threading.Event, *, decided: bool = False) -> None:
        """Wait for the first cycle's end (or ``decided``), at most ``WARM_AFTER_S``."""
        if self.scheduler is None:
            return
        event = self.scheduler.first_decisions if decided else self.scheduler.first_cycle
        deadline = time.monotonic() + WARM_AFTER_S
        while not event.wait(0.2):
            if stop.is_set() or self.stop_event.is_set() or time.monotonic() >= deadline:
                return

    def _campaign(self) -> None:
        assert self._elector is not None
        self._elector.run(self.stop_event)
        if not self.stop_event.is_set():
            self._fatal("leader election lost")

    def _lead(self, leading_stop: threading.Event) -> None:
        """Run controllers and the scheduler until ``leading_stop`` (or process stop)."""
        stop = threading.Event()

        def relay() -> None:
            while not (leading_stop.wait(0.2) or self.stop_event.is_set()):
                pass
            stop.set()

        threading.Thread(target=relay, name="manager:leading-stop", daemon=True).start()
        self._ready.wait()
        if self.scheduler is not None:
            log.info("leading: starting the scheduler")
            run = functools.partial(self.scheduler.run, stop)
            self._leading_threads.append(self._guard("scheduler:loop", run))
            self._after_first_cycle(stop, decided=True)  # then the controllers (docstring)
            self.client.foreground.pause(CONTROLLERS_AFTER_BINDS_MAX_S)  # and its binds
        if not stop.is_set():
            controllers = self.controllers.build()
            log.info("leading: starting %d controllers", len(controllers))
            for controller in controllers:
                run = functools.partial(controller.run, stop)
                self._leading_threads.append(self._guard(f"controller:{controller.name}", run))
        stop.wait()

    # -- guarded threads ------------------------------------------------------------------

    def _guard(
        self, name: str, target: Callable[[], None], *, expect_exit: bool = False
    ) -> threading.Thread:
        """Run ``target`` on thread ``name``; an unexpected end is fatal to the worker."""

        def body() -> None:
            try:
                target()
            except Exception as e:
                log.exception("thread %s failed", name)
                self._fatal(f"thread {name} failed: {e}")
                return
            if not expect_exit and not self.stop_event.is_set():
                self._fatal(f"thread {name} exited unexpectedly")

        thread = threading.Thread(target=body, name=name, daemon=True)
        self._threads.append(thread)
        thread.start()
        return thread

    def _fatal(self, reason: str) -> None:
        if self.stop_event.is_set():
            return
        log.error("fatal: %s; stopping this worker", reason)
        self._problems.append(reason)
        self._on_fatal(reason)


def _terminate_worker(reason: str) -> None:
    """Ask our own process to exit gracefully (gunicorn's master starts a fresh worker)."""
    del reason
    os.kill(os.getpid(), signal.SIGTERM)


def child_queues(queues: Store, name: str) -> int:
    """How many cached Queues name ``name`` as their parent (Job admission: leaf queues only)."""
    return sum(1 for q in queues.list() if (q.get("spec") or {}).get("parent") == name)
