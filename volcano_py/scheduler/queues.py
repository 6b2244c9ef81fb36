"""Queues for a snapshot: ``build_queues`` turns Queue objects and PodGroups into QueueInfos.

Called by ``SchedulerCache.snapshot`` under the cache lock. Every PodGroup counts (settled
ones too): a queue's ``allocated`` is what its placed tasks hold wherever they are in the
cycle's job list. ``default`` and ``root`` exist even before their objects do (the scheduler
creates them when missing, as Volcano's does), so a PodGroup without ``spec.queue`` is never
held back by an empty cluster. A Queue object the scheduler cannot read is logged once per
resourceVersion and left out (its PodGroups then wait on a missing queue, named in their
condition), never a crash.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from volcano_py.api.constants import PodGroupPhase
from volcano_py.api.errors import FieldError
from volcano_py.api.queue import BUILTIN_QUEUES, ROOT_QUEUE, Queue, queue_manifest
from volcano_py.scheduler.api.queue_info import QueueInfo
from volcano_py.scheduler.api.resource import Resource
from volcano_py.scheduler.api.task_info import OCCUPYING, TaskInfo

log = logging.getLogger(__name__)

_reported: set[tuple[str, str]] = set()


def queue_infos(queues: Iterable[Mapping[str, Any]]) -> dict[str, QueueInfo]:
    """QueueInfos of the readable Queue objects plus implicit ``root``/``default``."""
    result: dict[str, QueueInfo] = {}
    for obj in queues:
        meta = obj.get("metadata") or {}
        try:
            info = QueueInfo(Queue.from_dict(obj))
        except (FieldError, ValueError) as e:
            mark = (str(meta.get("name")), str(meta.get("resourceVersion")))
            if mark not in _reported:
                _reported.add(mark)
                log.error("queue %s: unreadable, left out: %s", mark[0], e)
            continue
        result[info.name] = info
    for name in BUILTIN_QUEUES:
        if name not in result:
            parent = "" if name == ROOT_QUEUE else ROOT_QUEUE
            result[name] = QueueInfo(
                Queue.from_dict(queue_manifest(name, parent=parent)), implicit=True
            )
    return result


def build_queues(
    queues: Iterable[Mapping[str, Any]],
    podgroups: Mapping[str, Mapping[str, Any]],
    job_tasks: Mapping[str, Mapping[str, TaskInfo]],
) -> dict[str, QueueInfo]:
    """QueueInfos with allocated/request/inqueue and phase counts from every PodGroup."""
    result = queue_infos(queues)
    no_tasks: Mapping[str, TaskInfo] = {}
    for key, pg in podgroups.items():
        spec = pg.get("spec") or {}
        info = result.get(spec.get("queue") or "default")
        if info is None:
            continue
        phase = (pg.get("status") or {}).get("phase") or PodGroupPhase.PENDING
        info.phases[phase] += 1
        tasks = job_tasks.get(key, no_tasks)
        # thousands of waiting groups have no pods yet: nothing to add, no Resource built
        placed = _add_tasks(info, tasks.values()) if tasks else None
        if phase == PodGroupPhase.INQUEUE:
            try:
                need = Resource.from_list(spec.get("minResources"), "spec.minResources")
            except (FieldError, ValueError):
                continue
            if placed is not None:
                # gated pods hold nothing: their share of minResources is not kept
                need.sub(placed[0]).sub(placed[1])
            info.inqueue.add(need.clamped())
    return result


def _add_tasks(info: QueueInfo, tasks: Iterable[TaskInfo]) -> tuple[Resource, Resource]:
    """Add one job's tasks to ``info``'s request and allocated; what they hold and what is gated."""
    placed = Resource()
    gated = Resource()
    for task in tasks:
        info.request.add(task.resreq)
        if task.status in OCCUPYING:
            placed.add(task.resreq)
        elif task.gated:
            gated.add(task.resreq)
    info.allocated.add(placed)
    return placed, gated
