"""Prometheus metrics of the whole process, defined once, on one registry.

Names follow Volcano's where Volcano has the metric (namespace ``volcano``:
``volcano_e2e_scheduling_latency_milliseconds``, ``volcano_action_scheduling_latency_microseconds``,
``volcano_plugin_scheduling_latency_microseconds``, ``volcano_schedule_attempts_total``,
``volcano_unschedule_task_count``, ``volcano_unschedule_job_count``); the rest are ours, under the
same namespace. Components import the metric objects they feed; ``/metrics`` (served by the
manager's ops server) renders ``REGISTRY``. Recording a metric never raises and never blocks.

This module sits beside ``volcano_py.kube`` in the layering: controllers, the scheduler and the
webhooks may import it; it imports nothing of ours.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

REGISTRY = CollectorRegistry(auto_describe=True)
NAMESPACE = "volcano"

_LATENCY_MS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000)
_LATENCY_US = tuple(b * 1000 for b in _LATENCY_MS)

# -- scheduler (Volcano's names) --------------------------------------------------------

E2E_SCHEDULING_LATENCY = Histogram(
    "e2e_scheduling_latency_milliseconds",
    "E2e scheduling latency in milliseconds (scheduling algorithm + binding)",
    namespace=NAMESPACE,
    buckets=_LATENCY_MS,
    registry=REGISTRY,
)
ACTION_SCHEDULING_LATENCY = Histogram(
    "action_scheduling_latency_microseconds",
    "Action scheduling latency in microseconds",
    ["action"],
    namespace=NAMESPACE,
    buckets=_LATENCY_US,
    registry=REGISTRY,
)
PLUGIN_SCHEDULING_LATENCY = Histogram(
    "plugin_scheduling_latency_microseconds",
    "Plugin scheduling latency in microseconds",
    ["plugin", "OnSession"],
    namespace=NAMESPACE,
    buckets=_LATENCY_US,
    registry=REGISTRY,
)
SCHEDULE_ATTEMPTS = Counter(
    "schedule_attempts_total",
    "Number of attempts to schedule pods, by the result",
    ["result"],
    namespace=NAMESPACE,
    registry=REGISTRY,
)
UNSCHEDULE_TASK_COUNT = Gauge(
    "unschedule_task_count",
    "Number of tasks could not be scheduled",
    ["job_id"],
    namespace=NAMESPACE,
    registry=REGISTRY,
)
UNSCHEDULE_JOB_COUNT = Gauge(
    "unschedule_job_count",
    "Number of jobs could not be scheduled",
    namespace=NAMESPACE,
    registry=REGISTRY,
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
