"""Per-cycle job and task latencies under Volcano's names, recorded by ``run_cycle``.

(``task_stage("Assumed", ...)`` by the cycle's binder, ``binds.py``, as it assumes a task.)

- ``record_binds``: for every task the cycle bound, ``volcano_task_scheduling_latency_
  milliseconds{stage="Bound"}`` (pod creation to bound; ``Assumed`` is recorded when the cache
  assumes it, just before); for every job with a task bound and no unmet fit left, Volcano's
  per-job e2e series (``volcano_e2e_job_scheduling_duration{job_name,queue,job_namespace}``,
  the ``..._latency_milliseconds`` histogram, start and last time), PodGroup creation to now;
  and ``volcano_scheduling_stage_duration_milliseconds{stage="Bind"}``, one observation per
  bind batch (volcano-py binds a cycle's tasks as one batch through the writer's workers).
- ``forget_jobs``: the per-job series of PodGroups that no longer exist are removed, the
  plugins' ones (job share, retries, unscheduled tasks) too (the scheduler calls it with the
  cache's PodGroup keys, at the capacity export's pace).

A missing or unreadable creation timestamp skips the observation, never raises.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from datetime import datetime

from volcano_py.metrics import (
    E2E_JOB_SCHEDULING_DURATION,
    E2E_JOB_SCHEDULING_LAST_TIME,
    E2E_JOB_SCHEDULING_LATENCY,
    E2E_JOB_SCHEDULING_START_TIME,
    SCHEDULING_STAGE_DURATION,
    TASK_SCHEDULING_LATENCY,
    remove_series,
)
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.task_info import TaskInfo
from volcano_py.scheduler.plugins.support import job_metrics

_lock = threading.Lock()
_job_labels: dict[str, tuple[str, str, str]] = {}  # job uid -> (job_name, queue, job_namespace)


def created_at(timestamp: str) -> float | None:
    """Unix seconds of an RFC 3339 ``creationTimestamp`` (None when missing or unreadable)."""
    if not timestamp:
        return None
    try:
        return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def task_stage(stage: str, task: TaskInfo, now: float) -> None:
    """Observe pod creation -> ``now`` for ``stage`` (Assumed, Bound)."""
    meta = task.pod.get("metadata") or {}
    created = created_at(str(meta.get("creationTimestamp") or ""))
    if created is not None:
        TASK_SCHEDULING_LATENCY.labels(stage).observe(max(0.0, now - created) * 1000)


def record_binds(
    jobs: Iterable[JobInfo],
    bound: Mapping[str, str],
    unmet: Mapping[str, object],
    bind_seconds: float,
    now: float,
) -> None:
    """Task and job latencies after a cycle bound ``bound`` (task uid -> node)."""
    if not bound:
        return
    SCHEDULING_STAGE_DURATION.labels("Bind").observe(bind_seconds * 1000)
    for job in jobs:
        placed = [task for uid, task in job.tasks.items() if uid in bound]
        for task in placed:
            task_stage("Bound", task, now)
        if not placed or unmet.get(job.key) is not None:
            continue
        labels = (job.name, job.queue, job.namespace)
        with _lock:
            _job_labels[job.key] = labels
        created = created_at(job.creation)
        if created is None:
            continue
        millis = max(0.0, now - created) * 1000
        E2E_JOB_SCHEDULING_DURATION.labels(*labels).set(millis)
        E2E_JOB_SCHEDULING_LATENCY.observe(millis)
        E2E_JOB_SCHEDULING_START_TIME.labels(*labels).set(int(created))
        E2E_JOB_SCHEDULING_LAST_TIME.labels(*labels).set(int(now))


def forget_jobs(existing: Iterable[str]) -> None:
    """Remove the per-job series of jobs not in ``existing`` (PodGroup keys)."""
    keep = set(existing)
    job_metrics.forget_jobs(keep)
    with _lock:
        gone = [(uid, labels) for uid, labels in _job_labels.items() if uid not in keep]
        for uid, _ in gone:
            del _job_labels[uid]
    for _, labels in gone:
        for gauge in (
            E2E_JOB_SCHEDULING_DURATION,
            E2E_JOB_SCHEDULING_START_TIME,
            E2E_JOB_SCHEDULING_LAST_TIME,
        ):
            remove_series(gauge, *labels)
