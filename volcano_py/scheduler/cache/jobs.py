"""``JobStore``: the cache's jobs: PodGroups, their tasks, change counters and settled set.

- **Jobs** are PodGroups (API objects, or implicit ones kept by ``ImplicitJobs``,
  ``implicit_jobs.py``) with the pending and placed tasks of our scheduler that name them.
- **Change counters.** Every change to a job's PodGroup or one of its tasks gives the job a
  new version (``touch``) from one counter for the whole store, so a job deleted and created
  again never repeats a version its predecessor had.
- **Settled jobs** (``settle``) are left out of a cycle's snapshot until they change; so are
  parked ones (``set_aside``; ``parking.py`` decides when they come back).
- **Allocated index**: which jobs' PodGroups record each HyperNode (``allocated_index.py``,
  ``key_index.py``).

The cache calls it under its lock.
"""

from __future__ import annotations

import itertools
from collections.abc import Container, Iterable

from volcano_py.api import JSON
from volcano_py.api.constants import CLUSTER_TOP_HYPERNODE
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.queue_info import QueueInfo
from volcano_py.scheduler.api.task_info import TaskInfo, TaskStatus
from volcano_py.scheduler.cache.allocated_index import allocated_of
from volcano_py.scheduler.cache.implicit_jobs import Classifier, ImplicitJobs
from volcano_py.scheduler.cache.key_index import KeyIndex
from volcano_py.scheduler.queues import build_queues


class JobStore:
    """PodGroups by ``namespace/name``, their tasks, versions, and which are settled."""

    __slots__ = (
        "_by_allocated",
        "_job_tasks",
        "_podgroups",
        "_settled",
        "_versions",
        "implicit",
        "versions",
    )

    def __init__(self, classify: Classifier | None) -> None:
        self.implicit = ImplicitJobs(classify)
        self._podgroups: dict[str, JSON] = {}
        self._job_tasks: dict[str, dict[str, TaskInfo]] = {}
        self.versions: dict[str, int] = {}
        self._versions = itertools.count(1)
        self._settled: set[str] = set()
        # HyperNode name -> jobs whose allocated-hypernode annotation names it
        self._by_allocated = KeyIndex()  # allocated HyperNode -> job keys

    # -- change counters and settling ---------------------------------------------------------

    def touch(self, job: str) -> None:
        """Something of ``job`` changed: a new version, and it is not settled any more.

        A job with neither a PodGroup nor tasks left keeps no version (a pod deleted after its
        PodGroup must not leave one behind for ever).
        """
        if job in self._podgroups or job in self._job_tasks:
            self.versions[job] = next(self._versions)
        else:
            self.versions.pop(job, None)
        self._settled.discard(job)

    def current(self, job: str, version: int) -> bool:
        """Whether ``job`` still has its PodGroup and has not changed since ``version``."""
        return self.versions.get(job, 0) == version and job in self._podgroups

    def settle(self, job: str) -> None:
        """Leave ``job`` out of cycles until it changes."""
        self._settled.add(job)

    def is_settled(self, job: str) -> bool:
        """Whether cycles leave ``job`` out (settled or parked)."""
        return job in self._settled

    def all_settled(self) -> bool:
        """Whether cycles leave every job out (settled or parked; none pending a look).

        Settled jobs are always cached PodGroups (``settle`` is called for current ones,
        ``remove_podgroup`` drops them), so this is a count, not a scan.
        """
        return len(self._settled) >= len(self._podgroups)

    def unsettle(self, jobs: Iterable[str]) -> None:
        """Bring these jobs back into cycles."""
        self._settled.difference_update(jobs)

    def unsettle_all(self) -> None:
        """Bring every job back into cycles."""
        self._settled.clear()

    def holders(self, hypernode: str) -> list[str]:
        """The jobs whose PodGroup records ``hypernode`` as allocated (a copy)."""
        return self._by_allocated.keys(hypernode)

    def stranded(self, job: str, hypernodes: Container[str]) -> bool:
        """Whether ``job`` runs on a recorded HyperNode that no longer exists."""
        allocated = allocated_of(self._podgroups.get(job))
        if not allocated or allocated == CLUSTER_TOP_HYPERNODE or allocated in hypernodes:
            return False
        return any(t.node_name for t in self._job_tasks.get(job, {}).values())

    # -- tasks ----------------------------------------------------------------------------------

    def add_task(self, key: str, task: TaskInfo) -> None:
        """``task`` is one of its job's tasks."""
        self._job_tasks.setdefault(task.job, {})[key] = task
        self.touch(task.job)

    def remove_task(self, key: str, task: TaskInfo) -> None:
        """``task`` is not one of its job's tasks any more."""
        tasks = self._job_tasks.get(task.job)
        if tasks is not None:
            tasks.pop(key, None)
            if not tasks:
                del self._job_tasks[task.job]  # no empty table per job that ever ran
        self.touch(task.job)

    def pending_without_podgroup(self) -> list[TaskInfo]:
        """Pending tasks of jobs that have no PodGroup (yet), by key."""
        return sorted(
            (
                task
                for job, tasks in self._job_tasks.items()
                if job not in self._podgroups
                for task in tasks.values()
                if task.status == TaskStatus.PENDING
            ),
            key=lambda t: t.key,
        )

    def job_of(self, pod: JSON, bound: bool) -> str:
        """The implicit job of a pod of ours without a group name ("" for none)."""
        return self.implicit.job_of(pod, bound, self._podgroups)

    # -- podgroups ------------------------------------------------------------------------------

    def update_podgroup(self, key: str, pg: JSON) -> JSON | None:
        """A PodGroup was added or changed; the one it replaces."""
        self.implicit.replaced(key)  # a real one replaces the cache's own
        old = self._podgroups.get(key)
        self._podgroups[key] = pg
        self._by_allocated.move(key, allocated_of(old), allocated_of(pg))
        self.touch(key)
        return old

    def remove_podgroup(self, key: str) -> None:
        """Forget a job's PodGroup with its counter, index entry and settled state."""
        self._by_allocated.move(key, allocated_of(self._podgroups.pop(key, None)), "")
        self.versions.pop(key, None)
        self._settled.discard(key)

    def forget_implicit(self, job: str) -> bool:
        """Drop an implicit job whose pod left it (deleted, or joined a real group).

        Returns whether it was dropped.
        """
        if job in self._job_tasks or not self.implicit.forget(job):
            return False
        self.remove_podgroup(job)
        return True

    def keep_implicit_status(self, key: str, pg: JSON) -> None:
        """An implicit job's new status, kept instead of written (no version bump)."""
        if key in self.implicit:
            self._podgroups[key] = pg

    def keep_status(self, key: str, pg: JSON) -> None:
        """A job's new view, kept as it is (no version bump; a native group's own status)."""
        if key in self._podgroups:
            self._podgroups[key] = pg

    def podgroup(self, key: str) -> JSON | None:
        """The cached PodGroup dict."""
        return self._podgroups.get(key)

    def podgroup_keys(self) -> list[str]:
        """The ``namespace/name`` of every cached PodGroup."""
        return list(self._podgroups)

    # -- what a snapshot and the queue status read --------------------------------------------

    def queue_infos(self, queues: Iterable[JSON]) -> dict[str, QueueInfo]:
        """Every queue with its usage and PodGroup counts."""
        return build_queues(queues, self._podgroups, self._job_tasks)

    def job_infos(self, active_only: bool) -> tuple[dict[str, JobInfo], dict[str, int]]:
        """Every job (only those not settled when ``active_only``) and their versions.

        Pending tasks are copied (the session places them); placed ones are shared.
        """
        jobs: dict[str, JobInfo] = {}
        versions: dict[str, int] = {}
        settled = self._settled if active_only else ()
        for key, pg in self._podgroups.items():
            if key in settled:
                continue
            job = JobInfo(pg)
            for task in self._job_tasks.get(key, {}).values():
                job.add_task(task.clone() if task.status == TaskStatus.PENDING else task)
            jobs[key] = job
            versions[key] = self.versions.get(key, 0)
        return jobs, versions
