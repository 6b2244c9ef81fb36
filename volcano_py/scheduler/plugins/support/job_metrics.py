"""Per-job scheduler metrics under Volcano's names, fed by the plugins that compute them.

- ``export_job_shares`` (drf, at session close): ``volcano_job_share{job_ns,job_id}``, each
  session job's dominant resource share as the session left it. Volcano sets it at session
  open and on every allocate/deallocate event; between sessions, when Prometheus scrapes,
  both hold the value after the last event, and here the hot path pays nothing per task.
- ``export_gang_outcome`` (gang, at session close): ``volcano_job_retry_counts{job_id}`` + 1
  for every job with tasks that closed the session not ready (Volcano's gang plugin counts
  the same, skipping a job whose only missing pods are releasing), and
  ``volcano_unschedule_task_count{job_id}``: minMember minus the ready tasks of such a job,
  0 for a ready one.
- ``forget_jobs(existing)``: the series of PodGroups that no longer exist are removed (as
  Volcano's ``DeleteJobMetrics``); a ``job_id`` series shared by same-named PodGroups of
  other namespaces stays while one of them does.

``job_id`` is the PodGroup's name, as in Volcano.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping

from volcano_py.metrics import JOB_RETRY_COUNTS, JOB_SHARE, UNSCHEDULE_TASK_COUNT, remove_series
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.task_info import TaskStatus

_lock = threading.Lock()
_jobs: dict[str, tuple[str, str]] = {}  # job key -> (namespace, PodGroup name)


def _remember(job: JobInfo) -> None:
    with _lock:
        _jobs[job.key] = (job.namespace, job.name)


def export_job_shares(jobs: Mapping[str, JobInfo], shares: Mapping[str, float]) -> None:
    """Set ``volcano_job_share`` for every job in ``jobs`` (0 when it holds nothing)."""
    for key, job in jobs.items():
        _remember(job)
        JOB_SHARE.labels(job.namespace, job.name).set(shares.get(key, 0.0))


def releasing_only(job: JobInfo) -> bool:
    """Volcano's skip: nothing pending, and ready plus releasing tasks reach minMember."""
    releasing = 0
    for task in job.tasks.values():
        if task.status == TaskStatus.PENDING:
            return False
        if task.status == TaskStatus.RELEASING:
            releasing += 1
    return releasing > 0 and job.ready_task_num() + releasing >= job.min_member


def export_gang_outcome(jobs: Iterable[JobInfo]) -> None:
    """Count a retry for every job with tasks that is not ready; set its unscheduled tasks."""
    for job in jobs:
        if not job.tasks:
            continue
        unready = 0
        if not job.is_ready():
            if releasing_only(job):
                continue
            unready = max(0, job.min_member - job.ready_task_num())
            JOB_RETRY_COUNTS.inc(1.0, (job.name,))
        _remember(job)
        UNSCHEDULE_TASK_COUNT.labels(job.name).set(unready)


def forget_jobs(existing: Iterable[str]) -> None:
    """Remove the per-job series of jobs whose key is not in ``existing``."""
    keep = set(existing)
    with _lock:
        gone = [(key, labels) for key, labels in _jobs.items() if key not in keep]
        for key, _ in gone:
            del _jobs[key]
        names_left = {name for _, name in _jobs.values()}
    for _, (namespace, name) in gone:
        remove_series(JOB_SHARE, namespace, name)
        if name not in names_left:
            remove_series(UNSCHEDULE_TASK_COUNT, name)
            JOB_RETRY_COUNTS.remove((name,))
