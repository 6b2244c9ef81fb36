"""Prometheus metrics of the whole process, defined once, on one registry.

Names, labels, units and buckets follow Volcano's scheduler (``pkg/scheduler/metrics/`` and the
controllers' queue PodGroup counts) wherever volcano-py computes the same thing, so Volcano's
Grafana dashboards work unchanged: latencies in milliseconds (``_milliseconds``), queue
resources as ``milli_cpu`` / ``memory_bytes`` / ``scalar_resources`` (scalars in milli-units,
as Volcano's ``Resource`` keeps them). The rest (HyperNode capacity, webhook, workqueue,
discovery, conf reloads) are ours, under the same ``volcano`` namespace; docs/operations.md lists
every name. Components import the metric objects they feed; ``/metrics`` (served by the
manager's ops server) renders ``REGISTRY``. Recording a metric never raises and never blocks.

This module sits beside ``volcano_py.kube`` in the layering: controllers, the scheduler and the
webhooks may import it; it imports nothing of ours.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.metrics_core import Metric

REGISTRY = CollectorRegistry(auto_describe=True)
NAMESPACE = "volcano"


def exponential_range(low: float, high: float, count: int) -> tuple[float, ...]:
    """``count`` buckets from ``low`` to ``high`` growing by a constant factor.

    The same bounds as Prometheus Go's ``ExponentialBucketsRange``, which Volcano uses.
    """
    factor = (high / low) ** (1 / (count - 1))
    return tuple(low * factor**i for i in range(count))


# Names of every PlainCounter: their ``# HELP``/``# TYPE`` lines are renamed by ``render``.
_PLAIN_COUNTER_NAMES: set[str] = set()


class PlainCounter:
    """A counter exported under exactly its name (no ``_total`` suffix added).

    ``prometheus_client`` appends ``_total`` to every counter; Volcano has counters without it
    (``volcano_total_preemption_attempts``, ``volcano_job_retry_counts``) that its dashboards
    and alerts query by that name. Without ``labelnames`` the one series is there from the
    start, at 0; with them a series appears at its first ``inc`` and goes with ``remove``.
    """

    def __init__(
        self,
        name: str,
        documentation: str,
        registry: CollectorRegistry,
        labelnames: tuple[str, ...] = (),
    ) -> None:
        """Register on ``registry`` (the unlabelled series at 0)."""
        self.name = f"{NAMESPACE}_{name}"
        self.documentation = documentation
        self.labelnames = labelnames
        self._values: dict[tuple[str, ...], float] = {} if labelnames else {(): 0.0}
        self._lock = threading.Lock()
        registry.register(self)
        _PLAIN_COUNTER_NAMES.add(self.name)

    def inc(self, amount: float = 1.0, labels: tuple[str, ...] = ()) -> None:
        """Add ``amount`` (>= 0) to the series of ``labels`` (one value per label name)."""
        if len(labels) != len(self.labelnames):
            raise ValueError(f"{self.name}: labels {self.labelnames}, got {labels}")
        with self._lock:
            self._values[labels] = self._values.get(labels, 0.0) + amount

    def remove(self, labels: tuple[str, ...]) -> None:
        """Drop the series of ``labels``; nothing when it was never exported."""
        with self._lock:
            self._values.pop(labels, None)

    def collect(self) -> Iterator[Metric]:
        """One sample per series under the exact name."""
        metric = Metric(self.name, self.documentation, "counter")
        with self._lock:
            for labels, value in self._values.items():
                metric.add_sample(self.name, dict(zip(self.labelnames, labels, strict=True)), value)
        yield metric

    def describe(self) -> Iterator[Metric]:
        """The family without samples (for the registry's name check)."""
        yield Metric(self.name, self.documentation, "counter")


def render(registry: CollectorRegistry) -> bytes:
    """``registry`` in Prometheus' text format, every family typed under its samples' name.

    ``generate_latest`` writes a counter's ``# HELP`` and ``# TYPE`` lines under the family name
    plus ``_total``; a ``PlainCounter``'s samples have no ``_total``, so Prometheus would find
    no type for them (untyped). Those two lines are written under the exact name instead, as
    Volcano's Go client writes them.
    """
    lines = generate_latest(registry).split(b"\n")
    for i, line in enumerate(lines):
        if not line.startswith((b"# HELP ", b"# TYPE ")):
            continue
        head, _, rest = line[7:].partition(b" ")
        name = head.decode()
        if name.endswith("_total") and name[: -len("_total")] in _PLAIN_COUNTER_NAMES:
            lines[i] = line[:7] + name[: -len("_total")].encode() + b" " + rest
    return b"\n".join(lines)


def remove_series(metric: Gauge, *labels: str) -> None:
    """Remove one labelled series of ``metric``; nothing when it was never exported."""
    with contextlib.suppress(KeyError):
        metric.remove(*labels)


def _histogram(name: str, doc: str, labels: list[str], buckets: tuple[float, ...]) -> Histogram:
    return Histogram(name, doc, labels, namespace=NAMESPACE, buckets=buckets, registry=REGISTRY)


def _gauge(name: str, doc: str, labels: list[str] | None = None) -> Gauge:
    return Gauge(name, doc, labels or [], namespace=NAMESPACE, registry=REGISTRY)


# -- scheduler (Volcano's names, labels and buckets) -------------------------------------

E2E_SCHEDULING_LATENCY = _histogram(
    "e2e_scheduling_latency_milliseconds",
    "Duration of a single scheduling session execution in milliseconds (open, actions, close)",
    [],
    exponential_range(1, 5000, 20),
)
OPEN_SESSION_DURATION = _histogram(
    "open_session_duration_milliseconds",
    "Duration of opening a scheduling session in milliseconds (snapshot and plugins)",
    [],
    exponential_range(1, 5000, 20),
)
ACTION_SCHEDULING_LATENCY = _histogram(
    "action_scheduling_latency_milliseconds",
    "Action scheduling latency in milliseconds",
    ["action"],
    exponential_range(1, 2000, 20),
)
PLUGIN_SCHEDULING_LATENCY = _histogram(
    "plugin_scheduling_latency_milliseconds",
    "Plugin scheduling latency in milliseconds",
    ["plugin", "OnSession"],
    exponential_range(0.1, 100, 15),
)
E2E_JOB_SCHEDULING_LATENCY = _histogram(
    "e2e_job_scheduling_latency_milliseconds",
    "End-to-end job scheduling latency in milliseconds (PodGroup creation to its tasks bound)",
    [],
    exponential_range(100, 120000, 30),
)
_JOB_LABELS = ["job_name", "queue", "job_namespace"]
E2E_JOB_SCHEDULING_DURATION = _gauge(
    "e2e_job_scheduling_duration",
    "Per-job duration from PodGroup creation to its last task placed, in milliseconds",
    _JOB_LABELS,
)
E2E_JOB_SCHEDULING_START_TIME = _gauge(
    "e2e_job_scheduling_start_time", "E2E job scheduling start time (unix seconds)", _JOB_LABELS
)
E2E_JOB_SCHEDULING_LAST_TIME = _gauge(
    "e2e_job_scheduling_last_time", "E2E job scheduling last time (unix seconds)", _JOB_LABELS
)
TASK_SCHEDULING_LATENCY = _histogram(
    "task_scheduling_latency_milliseconds",
    "Task scheduling latency from pod creation to a stage (Assumed, Bound) in milliseconds",
    ["stage"],
    exponential_range(50, 60000, 30),
)
SCHEDULING_STAGE_DURATION = _histogram(
    "scheduling_stage_duration_milliseconds",
    "Duration of a scheduling stage in milliseconds (Predicate, Scoring: one placement trial; "
    "Bind: one cycle's bind batch)",
    ["stage"],
    exponential_range(0.1, 500, 20),
)
SCHEDULE_ATTEMPTS = Counter(
    "schedule_attempts_total",
    "Number of attempts to schedule pods, by the result",
    ["result"],
    namespace=NAMESPACE,
    registry=REGISTRY,
)
PREEMPTION_VICTIMS = _gauge("pod_preemption_victims", "Number of selected preemption victims")
PREEMPTION_ATTEMPTS = PlainCounter(
    "total_preemption_attempts", "Total preemption attempts in the cluster till now", REGISTRY
)
EVICTION_TRANSACTIONS = Counter(
    "eviction_transactions_total",
    "Total number of committed eviction transactions, by action",
    ["action"],
    namespace=NAMESPACE,
    registry=REGISTRY,
)
UNSCHEDULE_TASK_COUNT = _gauge(
    "unschedule_task_count", "Number of tasks could not be scheduled", ["job_id"]
)
UNSCHEDULE_JOB_COUNT = _gauge("unschedule_job_count", "Number of jobs could not be scheduled")
# Volcano labels both with the PodGroup's name (``job_id``), the share with its namespace too.
JOB_SHARE = _gauge(
    "job_share",
    "Share for one job (drf: its dominant resource share)",
    [
        "job_ns",
        "job_id",
    ],
)
JOB_RETRY_COUNTS = PlainCounter(
    "job_retry_counts",
    "Number of retry counts for one job (cycles that closed with the gang not ready)",
    REGISTRY,
    ("job_id",),
)

# -- queues (Volcano's names: scheduler's quota plugins and controller's PodGroup counts) --

QUEUE_RESOURCE_KINDS = ("allocated", "request", "deserved", "capacity", "real_capacity", "inqueue")
# kind -> (milli cpu, memory bytes, scalar resources by resource)
QUEUE_RESOURCES: dict[str, tuple[Gauge, Gauge, Gauge]] = {
    kind: (
        _gauge(f"queue_{kind}_milli_cpu", f"{kind} CPU (millicores) for one queue", ["queue_name"]),
        _gauge(f"queue_{kind}_memory_bytes", f"{kind} memory for one queue", ["queue_name"]),
        _gauge(
            f"queue_{kind}_scalar_resources",
            f"{kind} scalar resources (milli-units) for one queue",
            ["queue_name", "resource"],
        ),
    )
    for kind in QUEUE_RESOURCE_KINDS
}
QUEUE_SHARE = _gauge("queue_share", "Share for one queue", ["queue_name"])
QUEUE_WEIGHT = _gauge("queue_weight", "Weight for one queue", ["queue_name"])
QUEUE_OVERUSED = _gauge("queue_overused", "If one queue is overused", ["queue_name"])
QUEUE_PHASES = ("Inqueue", "Pending", "Running", "Unknown", "Completed")
QUEUE_PODGROUPS: dict[str, Gauge] = {
    phase: _gauge(
        f"queue_pod_group_{phase.lower()}_count",
        f"The number of {phase} PodGroup in this queue",
        ["queue_name"],
    )
    for phase in QUEUE_PHASES
}

# -- ours -----------------------------------------------------------------------------------

QUEUE_STATES = ("Open", "Closing", "Closed", "Unknown")
QUEUE_STATE = _gauge(
    "queue_state",
    "1 for the state a queue is in (status.state: Open, Closing, Closed, Unknown), else 0",
    ["queue_name", "state"],
)

HYPERNODE_FREE = Gauge(
    "hypernode_free_resource",
    "Free (idle) resource under a HyperNode, in base units (cpu cores, memory bytes, "
    "a count for GPUs and every other resource)",
    ["hypernode", "tier", "resource"],
    namespace=NAMESPACE,
    registry=REGISTRY,
)
SCHEDULER_CONF_NOT_IMPLEMENTED = Gauge(
    "scheduler_conf_not_implemented",
    "1 for each action or plugin the running scheduler conf names that volcano-py accepts "
    "but does not implement",
    ["kind", "name"],
    namespace=NAMESPACE,
    registry=REGISTRY,
)
LEADER_WRITES_FENCED = Counter(
    "leader_writes_fenced",
    "Leader-only writes not sent because this replica no longer held the Lease",
    namespace=NAMESPACE,
    registry=REGISTRY,
)
SCHEDULER_CONF_RELOADS = Counter(
    "scheduler_conf_reloads_total",
    "Scheduler ConfigMap edits seen, by result (applied, rejected)",
    ["result"],
    namespace=NAMESPACE,
    registry=REGISTRY,
)
LARGEST_GANG_PER_TIER = Gauge(
    "largest_gang_fits_per_tier",
    "The largest number of identical pods (by the reference request) one HyperNode of the "
    "tier can still hold",
    ["tier"],
    namespace=NAMESPACE,
    registry=REGISTRY,
)

# -- webhooks ---------------------------------------------------------------------------

WEBHOOK_LATENCY = Histogram(
    "webhook_admission_latency_milliseconds",
    "Admission review handling latency in milliseconds",
    ["path", "allowed"],
    namespace=NAMESPACE,
    buckets=(0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500),
    registry=REGISTRY,
)

# -- controllers ------------------------------------------------------------------------

WORKQUEUE_DEPTH = Gauge(
    "workqueue_depth",
    "Current depth of a workqueue",
    ["name"],
    namespace=NAMESPACE,
    registry=REGISTRY,
)
WORKQUEUE_ADDS = Counter(
    "workqueue_adds_total",
    "Keys added to a workqueue",
    ["name"],
    namespace=NAMESPACE,
    registry=REGISTRY,
)
WORKQUEUE_RETRIES = Counter(
    "workqueue_retries_total",
    "Rate-limited re-adds of a workqueue",
    ["name"],
    namespace=NAMESPACE,
    registry=REGISTRY,
)
WORKQUEUE_WORK_DURATION = Histogram(
    "workqueue_work_duration_seconds",
    "Time a worker spent on one key",
    ["name"],
    namespace=NAMESPACE,
    buckets=(0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10),
    registry=REGISTRY,
)
DISCOVERY_RUNS = Counter(
    "hypernode_discovery_runs_total",
    "Discovery results produced, by source and outcome",
    ["source", "outcome"],
    namespace=NAMESPACE,
    registry=REGISTRY,
)


class PrometheusQueueMetrics:
    """A ``volcano_py.kube.workqueue.QueueMetrics`` sink that feeds the metrics above."""

    def depth(self, queue: str, depth: int) -> None:
        """Record the queue's current depth."""
        WORKQUEUE_DEPTH.labels(queue).set(depth)

    def added(self, queue: str) -> None:
        """Count one add."""
        WORKQUEUE_ADDS.labels(queue).inc()

    def retried(self, queue: str) -> None:
        """Count one rate-limited re-add."""
        WORKQUEUE_RETRIES.labels(queue).inc()

    def latency(self, queue: str, seconds: float) -> None:
        """Time a key waited in the queue (not exported separately)."""

    def work_duration(self, queue: str, seconds: float) -> None:
        """Time a worker spent on one key."""
        WORKQUEUE_WORK_DURATION.labels(queue).observe(seconds)
