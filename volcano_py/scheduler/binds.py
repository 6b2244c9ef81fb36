"""``CycleBinder``: the binder a cycle's session is opened with (``framework.interface.Binder``).

Binds start as the session commits them, not after the cycle: each commit's tasks are
assumed in the cache and handed to the writer at once, so the API server binds the first jobs
while the session still places the rest (5,000 one-pod jobs took 3 s to place before the
first bind went out). ``finish`` waits for every bind, rolls failed ones back in the cache
and in the session's tasks; the loop calls it even when an action raised.

It also tells the session which pods not to evict: those whose eviction the API server
refused lately (``eviction_writes.refused_recently``).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from volcano_py.scheduler.api.task_info import TaskInfo, TaskStatus
from volcano_py.scheduler.cache import SchedulerCache
from volcano_py.scheduler.cycle_metrics import task_stage
from volcano_py.scheduler.eviction_writes import refused_recently
from volcano_py.scheduler.writer import Writer


class CycleBinder:
    """Starts the binds of one cycle's commits and collects their outcome."""

    def __init__(self, cache: SchedulerCache, writer: Writer) -> None:
        self.cache = cache
        self.writer = writer
        self.waits: list[Callable[[], dict[str, str]]] = []
        self.started = 0.0

    def unevictable(self) -> frozenset[str]:
        """Pods whose eviction was refused within ``REFUSED_TTL_S``."""
        return refused_recently(self.cache)

    def bind(self, tasks: list[TaskInfo]) -> None:
        """Assume ``tasks`` in the cache and start their binds."""
        assumed_at = time.time()
        for task in tasks:
            self.cache.assume(task.key, task.node_name)
            task_stage("Assumed", task, assumed_at)
        if not self.waits:
            self.started = time.perf_counter()
        self.waits.append(self.writer.start_binds(tasks))

    def finish(self, committed: list[TaskInfo]) -> tuple[dict[str, str], dict[str, str], float]:
        """Wait for every bind: ``{task: node}`` bound, ``{task: error}`` failed, seconds.

        A failed task is forgotten in the cache and pending again in the session.
        """
        errors: dict[str, str] = {}
        for wait in self.waits:
            errors.update(wait())
        for key in errors:
            self.cache.forget(key)
        seconds = (time.perf_counter() - self.started) if self.waits else 0.0
        bound: dict[str, str] = {}
        for task in committed:
            if task.key in errors:
                task.status = TaskStatus.PENDING
                task.node_name = ""
            else:
                bound[task.key] = task.node_name
        return bound, errors, seconds
