"""The writers: where a scheduling cycle's decisions reach the API server.

Everything a cycle decides is written here (the loop's other writer is ``queue_status.py``,
which writes Queue status through its own client after the cycle).

``KubeWriter`` binds through the ``pods/binding`` subresource with bounded concurrency,
writes PodGroup status (``podgroup_status_patch``: Volcano's PodGroup CRD has no status
subresource, so a JSON merge patch of ``status`` and the two annotations only the scheduler
sets, without a ``resourceVersion``, so the controllers' spec/annotation PUTs never make it
conflict: the scheduler is the one writer of those fields),
sets ``PodScheduled=False`` on pods that could not be placed and records rate-limited
``FailedScheduling`` events, and evicts preempt/reclaim victims through the Eviction API
(``pods/<name>/eviction``, policy/v1: PodDisruptionBudgets are honoured; a 429 means the
budget forbids it) with an Event on each victim and ``status.nominatedNodeName`` on the
preemptor's pods. ``MemoryWriter`` does the same to a ``SchedulerCache`` in
process (``simulate``, unit tests, benchmarks).

Binding never binds a pod twice: the cache assumes the pod on its node before the call (so
no later cycle places it again), the API server refuses a second binding (409), and a failed
bind is forgotten in the cache so the job is retried on the next cycle.
"""

from __future__ import annotations

import copy
import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

from volcano_py.api import JSON
from volcano_py.api.constants import (
    JOB_ALLOCATED_HYPERNODE_ANNOTATION,
    NOMINATED_HYPERNODE_ANNOTATION,
)
from volcano_py.api.meta import object_key
from volcano_py.api.native_composite import is_native_composite
from volcano_py.api.native_groups import is_native
from volcano_py.api.resources import NATIVE_COMPOSITES, NATIVE_PODGROUPS, PODGROUPS, PODS
from volcano_py.kube.client import KubeClient
from volcano_py.kube.clock import Clock, RealClock
from volcano_py.kube.errors import ApiError, Conflict, NotFound
from volcano_py.kube.events import Recorder
from volcano_py.kube.foreground import Foreground
from volcano_py.scheduler.api.task_info import TaskInfo
from volcano_py.scheduler.cache import SchedulerCache
from volcano_py.scheduler.status_writes import StatusWrites

log = logging.getLogger(__name__)


EVENT_INTERVAL_S = 60.0
_EVENTS_PRUNE_MIN = 4096  # throttle entries kept before stale ones are dropped
# Concurrent bindings. A bind waits ~10 ms on a busy kube-apiserver, so 4 workers bound at most
# ~330 pods/s: once plain pods cost one write each (implicit PodGroups) and binds start as jobs
# are committed, they were the limit (5,000 pods on 500 nodes: 16.3-18.6 s with 4 or 8, 12.4 s
# with 16, 10.7 s with 32, 10.3 s with 64; kube-scheduler 10.4-12.5 s). The admission tail
# while 2,000 pods are placed stayed within P5's goal (p99 7.7 ms with 4, 8.8 ms with 32:
# 1.38x and 1.97x the bare endpoint under the same background, goal <= 3x).
DEFAULT_BIND_WORKERS = 32
POD_CONDITIONS_QUEUE = "scheduler-pod-condition"
# The PodGroup annotations the scheduler alone sets (allocate, preempt/reclaim).
SCHEDULER_ANNOTATIONS = (JOB_ALLOCATED_HYPERNODE_ANNOTATION, NOMINATED_HYPERNODE_ANNOTATION)
# Every field of Volcano's PodGroupStatus (the CRD prunes any other): the counts are
# ``omitempty``, so a count that drops to 0 leaves the object.
PODGROUP_STATUS_FIELDS = ("phase", "conditions", "running", "succeeded", "failed")


def podgroup_status_patch(pg: JSON) -> JSON:
    """The merge patch that writes ``pg``'s status and the scheduler's annotations, nothing else.

    No ``resourceVersion``: the controllers write spec and their annotations with PUTs, and a
    PUT of ours would conflict with every one of them (3 in 10 on a busy gang). The ``uid`` is
    a precondition: a PodGroup deleted and created again under the name is not written.

    Applied to any PodGroup, the patch leaves exactly ``pg``'s status and scheduler
    annotations, as the whole-object PUT did: a field ``pg`` lacks (a count that dropped to 0,
    a served nomination) is sent as null, which a merge patch reads as "remove". Without the
    nulls, ``running: 2`` of a gang whose pods are gone stayed on the object, so it never
    matched the status the scheduler computed and was written again every cycle.
    """
    meta = pg.get("metadata") or {}
    annotations = meta.get("annotations") or {}
    patch_meta: JSON = {"annotations": {k: annotations.get(k) for k in SCHEDULER_ANNOTATIONS}}
    if meta.get("uid"):
        patch_meta["uid"] = meta["uid"]
    status = pg.get("status") or {}
    patch_status: JSON = {field: status.get(field) for field in PODGROUP_STATUS_FIELDS}
    patch_status.update(status)
    return {"metadata": patch_meta, "status": patch_status}


def podgroup_status_changes(current: JSON, pg: JSON) -> bool:
    """Whether writing ``pg``'s status (``podgroup_status_patch``) would change ``current``.

    The fields compared as the API server stores them: an absent field is an empty one (a
    count of 0, no conditions), an absent annotation is no annotation. The job updater never
    writes a status the cache already holds, whatever path computed it.
    """
    patch = podgroup_status_patch(pg)
    have = current.get("status") or {}
    if any((have.get(k) or None) != (v or None) for k, v in patch["status"].items()):
        return True
    annotations = (current.get("metadata") or {}).get("annotations") or {}
    return any(annotations.get(k) != v for k, v in patch["metadata"]["annotations"].items())


class Writer(Protocol):
    """Where a cycle's decisions go."""

    def start_binds(self, tasks: list[TaskInfo]) -> Callable[[], dict[str, str]]:
        """Start binding every task to its ``node_name``; the call returned waits for them.

        It gives ``{task key: error}`` for the failures.
        """
        ...

    def update_podgroup(self, pg: JSON) -> None:
        """Write a PodGroup's new phase/conditions/annotations."""
        ...

    def pod_unschedulable(self, pod: JSON, condition: JSON | None, message: str) -> None:
        """Tell a pod (condition, when changed) and its owner (event) why it waits."""
        ...

    def evict(self, victim: JSON, message: str) -> str | None:
        """Evict a victim pod and tell it why; returns an error, None on success."""
        ...

    def nominate(self, pod: JSON, node_name: str) -> None:
        """Set ``status.nominatedNodeName`` on a preemptor's pod."""
        ...


def binding_body(task: TaskInfo) -> JSON:
    """The ``v1.Binding`` posted to ``pods/<name>/binding``."""
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": task.name, "namespace": task.namespace},
        "target": {"apiVersion": "v1", "kind": "Node", "name": task.node_name},
    }


def eviction_body(pod: JSON) -> JSON:
    """The ``policy/v1`` Eviction posted to ``pods/<name>/eviction``."""
    meta = pod.get("metadata") or {}
    return {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": meta.get("name", ""), "namespace": meta.get("namespace", "")},
    }


class KubeWriter:
    """Writes to the API server."""

    def __init__(
        self,
        client: KubeClient,
        recorder: Recorder | None,
        *,
        workers: int = DEFAULT_BIND_WORKERS,
        clock: Clock | None = None,
        foreground: Foreground | None = None,
    ) -> None:
        """A writer with ``workers`` concurrent bind calls.

        ``foreground``: where each bind is marked as running, so the process's background
        writes give way to it (the client's, ``kube/foreground.py``; none when None).
        """
        self.client = client
        self._foreground = foreground or Foreground()
        self.recorder = recorder
        self.clock = clock or RealClock()
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="scheduler:bind")
        self._events: dict[str, tuple[str, float]] = {}
        self._prune_at = _EVENTS_PRUNE_MIN
        self._lock = threading.Lock()
        # PodGroup statuses are written off the cycle (``status_writes.py``)
        self.statuses = StatusWrites(self._put_podgroup)
        # and so are the pending pods' PodScheduled=False conditions (a gang of 5,000 pods
        # told why it waits was 5,000 PATCHes inside the cycle), coalesced per pod
        self.pod_conditions = StatusWrites(self._patch_pod_condition, name=POD_CONDITIONS_QUEUE)

    def _bind_one(self, task: TaskInfo) -> str | None:
        """Post one binding (queued on the foreground by ``start_binds``)."""
        try:
            self.client.create(
                PODS,
                binding_body(task),
                task.namespace,
                subresource_of=task.name,
                subresource="binding",
            )
        except ApiError as e:
            return f"{type(e).__name__}: {e}"
        finally:
            self._foreground.done()
        return None

    def start_binds(self, tasks: list[TaskInfo]) -> Callable[[], dict[str, str]]:
        """Queue the binds on the pool now; the call returned waits for them.

        Failures are returned, never raised.
        """
        # foreground from now, not from when a worker takes them: a write that gives way to
        # binds must not slip in between the submission and the first worker
        self._foreground.queued(len(tasks))
        futures = []
        try:
            for task in tasks:
                futures.append(self._pool.submit(self._bind_one, task))
        finally:
            if len(futures) < len(tasks):  # the pool refused (closing)
                self._foreground.done(len(tasks) - len(futures))

        def wait() -> dict[str, str]:
            errors: dict[str, str] = {}
            for task, future in zip(tasks, futures, strict=True):
                error = future.result()
                if error is not None:
                    errors[task.key] = error
                    log.warning("bind %s to %s failed: %s", task.key, task.node_name, error)
            return errors

        return wait

    def update_podgroup(self, pg: JSON) -> None:
        """Write the PodGroup's status soon, off the cycle (``status_writes.py``)."""
        self.statuses.put(pg)

    def _put_podgroup(self, pg: JSON) -> None:
        """Write the PodGroup's status; a failure is left to the next cycle (level-based)."""
        meta = pg.get("metadata") or {}
        try:
            if is_native(pg):  # kube-scheduler's condition, on the status subresource
                self.client.update(NATIVE_PODGROUPS, pg, subresource="status")
            elif is_native_composite(pg):
                self.client.update(NATIVE_COMPOSITES, pg, subresource="status")
            else:
                name, namespace = meta.get("name", ""), meta.get("namespace")
                self.client.patch(PODGROUPS, name, podgroup_status_patch(pg), namespace)
        except (Conflict, NotFound) as e:
            log.info("podgroup %s/%s not updated: %s", meta.get("namespace"), meta.get("name"), e)
        except ApiError as e:
            log.warning(
                "podgroup %s/%s update failed: %s", meta.get("namespace"), meta.get("name"), e
            )

    def pod_unschedulable(self, pod: JSON, condition: JSON | None, message: str) -> None:
        """Patch the condition (when new) and record a rate-limited FailedScheduling event."""
        meta = pod.get("metadata") or {}
        key = object_key(pod)
        if condition is not None:  # off the cycle (``status_writes.py``)
            where = {"name": meta.get("name", ""), "namespace": meta.get("namespace")}
            self.pod_conditions.put({"metadata": where, "condition": condition})
        if self.recorder is None or not self._event_due(key, message):
            return
        self.recorder.event(pod, "Warning", "FailedScheduling", message, resource=PODS)

    def _patch_pod_condition(self, item: JSON) -> None:
        """PATCH one pod's condition; a failure is logged (the next change writes it again)."""
        meta = item["metadata"]
        try:
            self.client.patch(
                PODS,
                meta["name"],
                {"status": {"conditions": [item["condition"]]}},
                meta["namespace"],
                patch_type="strategic",
                subresource="status",
            )
        except ApiError as e:
            log.info("pod %s/%s: condition not set: %s", meta["namespace"], meta["name"], e)

    def evict(self, victim: JSON, message: str) -> str | None:
        """POST the Eviction; a PodDisruptionBudget refusal (429) comes back as the error."""
        meta = victim.get("metadata") or {}
        try:
            self.client.create(
                PODS,
                eviction_body(victim),
                meta.get("namespace"),
                subresource_of=meta.get("name", ""),
                subresource="eviction",
                retry_throttled=False,  # a budget's 429 is the answer; re-plan next cycle
            )
        except NotFound:
            return None  # already gone: nothing to evict
        except ApiError as e:
            log.info("evict %s/%s refused: %s", meta.get("namespace"), meta.get("name"), e)
            return f"{type(e).__name__}: {e}"
        if self.recorder is not None:
            self.recorder.event(victim, "Normal", "Preempted", message, resource=PODS)
        return None

    def nominate(self, pod: JSON, node_name: str) -> None:
        """Patch ``status.nominatedNodeName`` (a failure is logged; the next cycle retries)."""
        meta = pod.get("metadata") or {}
        try:
            self.client.patch(
                PODS,
                meta.get("name", ""),
                {"status": {"nominatedNodeName": node_name}},
                meta.get("namespace"),
                patch_type="merge",
                subresource="status",
            )
        except ApiError as e:
            log.info(
                "pod %s/%s: nominatedNodeName not set: %s",
                meta.get("namespace"),
                meta.get("name"),
                e,
            )

    def _event_due(self, key: str, message: str) -> bool:
        now = self.clock.now()
        with self._lock:
            last = self._events.get(key)
            if last is not None and last[0] == message and now - last[1] < EVENT_INTERVAL_S:
                return False
            self._events[key] = (message, now)
            if len(self._events) > self._prune_at:
                # Entries past the interval throttle nothing: drop them (deleted pods' too).
                # Pruning again only once the table doubles keeps the cost amortised O(1).
                self._events = {
                    k: v for k, v in self._events.items() if now - v[1] < EVENT_INTERVAL_S
                }
                self._prune_at = max(_EVENTS_PRUNE_MIN, 2 * len(self._events))
            return True

    def close(self) -> None:
        """Stop the bind pool; write pending statuses for a few seconds, then stop."""
        self._pool.shutdown(wait=True)
        self.statuses.close()
        self.pod_conditions.close()


class MemoryWriter:
    """Applies decisions to a cache in process; keeps what a person would want to see."""

    def __init__(self, cache: SchedulerCache, fail: Callable[[TaskInfo], str | None] | None = None):
        """A writer on ``cache``; ``fail`` may inject bind failures (tests).

        ``refuse_eviction(pod)`` models a PodDisruptionBudget: an error refuses the eviction.
        """
        self.cache = cache
        self.fail = fail
        self.refuse_eviction: Callable[[JSON], str | None] | None = None
        self.bindings: dict[str, str] = {}
        self.events: list[tuple[str, str, str]] = []
        self.evicted: list[str] = []
        self.nominated: dict[str, str] = {}

    def start_binds(self, tasks: list[TaskInfo]) -> Callable[[], dict[str, str]]:
        """Set ``spec.nodeName`` on the cached pods now (never twice).

        The call returned gives the errors.
        """
        errors: dict[str, str] = {}
        for task in tasks:
            error = self.fail(task) if self.fail else None
            pod = self.cache.pod(task.key)
            if error is None and pod is None:
                error = "NotFound"
            elif error is None and pod is not None and (pod.get("spec") or {}).get("nodeName"):
                error = "Conflict: pod is already bound"
            if error is not None:
                errors[task.key] = error
                continue
            assert pod is not None
            bound = copy.copy(pod)
            bound["spec"] = dict(pod.get("spec") or {}, nodeName=task.node_name)
            self.bindings[task.key] = task.node_name
            self.cache.update_pod(bound)
        return lambda: errors

    def update_podgroup(self, pg: JSON) -> None:
        """Store the new PodGroup in the cache."""
        self.cache.update_podgroup(pg)

    def pod_unschedulable(self, pod: JSON, condition: JSON | None, message: str) -> None:
        """Record the event; store the condition on the cached pod."""
        key = object_key(pod)
        self.events.append((key, "FailedScheduling", message))
        if condition is not None:
            status = dict(pod.get("status") or {})
            others = [c for c in status.get("conditions") or () if c.get("type") != "PodScheduled"]
            status["conditions"] = [*others, condition]
            self.cache.update_pod(dict(pod, status=status))

    def evict(self, victim: JSON, message: str) -> str | None:
        """Delete the victim from the cache (an eviction whose grace period has passed)."""
        key = object_key(victim)
        error = self.refuse_eviction(victim) if self.refuse_eviction else None
        if error is not None:
            return error
        self.events.append((key, "Preempted", message))
        self.evicted.append(key)
        self.bindings.pop(key, None)
        self.cache.delete_pod(victim)
        return None

    def nominate(self, pod: JSON, node_name: str) -> None:
        """Remember the nominated node."""
        self.nominated[object_key(pod)] = node_name
