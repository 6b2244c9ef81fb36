"""``JobInfo``: a PodGroup with its tasks — the unit the gang and topology plugins reason about.

Reads from the PodGroup dict only what scheduling needs: ``minMember``, ``minResources``,
``queue``, ``networkTopology`` (mode, ``highestTierAllowed``, ``highestTierName``), the phase
and the ``volcano.sh/job-allocated-hypernode`` annotation. A malformed field does not crash
the scheduler: the job keeps an ``invalid`` message and the gang plugin refuses it.
"""

from __future__ import annotations

from typing import Any

from volcano_py.api.constants import (
    JOB_ALLOCATED_HYPERNODE_ANNOTATION,
    NetworkTopologyMode,
    PodGroupPhase,
)
from volcano_py.api.errors import FieldError
from volcano_py.scheduler.api.resource import Resource, least_sum
from volcano_py.scheduler.api.task_info import READY, TaskInfo, TaskStatus

JSON = dict[str, Any]


class JobInfo:
    """One PodGroup and its tasks."""

    __slots__ = (
        "allocated_hypernode",
        "creation",
        "highest_tier",
        "highest_tier_name",
        "invalid",
        "min_member",
        "min_resources",
        "mode",
        "name",
        "namespace",
        "phase",
        "podgroup",
        "priority",
        "queue",
        "tasks",
        "topology_error",
        "uid",
    )

    def __init__(self, podgroup: JSON) -> None:
        """From a cached PodGroup dict (kept by reference, never mutated)."""
        meta = podgroup.get("metadata") or {}
        spec = podgroup.get("spec") or {}
        self.podgroup = podgroup
        self.namespace: str = meta.get("namespace", "")
        self.name: str = meta.get("name", "")
        self.uid = f"{self.namespace}/{self.name}"
        self.creation: str = meta.get("creationTimestamp") or ""
        self.queue: str = spec.get("queue") or "default"
        self.phase: str = (podgroup.get("status") or {}).get("phase") or PodGroupPhase.PENDING
        self.tasks: dict[str, TaskInfo] = {}
        self.priority = 0
        self.invalid = ""
        self.topology_error = ""
        annotations = meta.get("annotations") or {}
        self.allocated_hypernode: str = annotations.get(JOB_ALLOCATED_HYPERNODE_ANNOTATION, "")
        self.min_member = 0
        self.min_resources = Resource()
        self.mode: NetworkTopologyMode | None = None
        self.highest_tier: int | None = None
        self.highest_tier_name = ""
        try:
            self._parse_spec(spec)
        except FieldError as e:
            self.invalid = str(e)
        except (TypeError, ValueError) as e:
            self.invalid = f"spec: {e}"

    def _parse_spec(self, spec: JSON) -> None:
        min_member = spec.get("minMember", 0)
        if not isinstance(min_member, int) or isinstance(min_member, bool) or min_member < 0:
            raise ValueError(f"minMember must be a non-negative integer, got {min_member!r}")
        self.min_member = min_member
        self.min_resources = Resource.from_list(spec.get("minResources"), "spec.minResources")
        topology = spec.get("networkTopology")
        if not topology:
            return
        mode = topology.get("mode") or NetworkTopologyMode.HARD
        self.mode = NetworkTopologyMode(mode)
        tier = topology.get("highestTierAllowed")
        if tier is not None:
            if not isinstance(tier, int) or isinstance(tier, bool):
                raise ValueError(f"networkTopology.highestTierAllowed must be an int: {tier!r}")
            self.highest_tier = tier
        self.highest_tier_name = str(topology.get("highestTierName") or "")

    # -- gang bookkeeping ---------------------------------------------------------------------

    def add_task(self, task: TaskInfo) -> None:
        """Add (or replace) a task; the job's priority is its highest task priority."""
        self.tasks[task.uid] = task
        self.priority = max(self.priority, task.priority)

    def remove_task(self, uid: str) -> None:
        """Forget a task."""
        self.tasks.pop(uid, None)

    def ready_task_num(self) -> int:
        """Tasks that count towards minMember (allocated, binding, bound, running, done)."""
        return sum(1 for t in self.tasks.values() if t.status in READY)

    def pending_tasks(self) -> list[TaskInfo]:
        """Pending tasks in Volcano's task order: priority, then creation, then name."""
        pending = [t for t in self.tasks.values() if t.status == TaskStatus.PENDING]
        pending.sort(key=lambda t: (-t.priority, t.creation, t.uid))
        return pending

    def is_ready(self) -> bool:
        """The gang is satisfied: at least minMember tasks ready."""
        return self.ready_task_num() >= self.min_member

    def with_network_topology(self) -> bool:
        """The job asks for topology-aware placement at all."""
        return self.mode is not None

    def is_hard_topology_mode(self) -> tuple[bool, int]:
        """``(True, highestTierAllowed)`` for a hard-mode job whose tier is known."""
        if self.mode == NetworkTopologyMode.HARD and self.highest_tier is not None:
            return True, self.highest_tier
        return False, 0

    def is_soft_topology_mode(self) -> bool:
        """The job prefers, but does not require, a close placement."""
        return self.mode == NetworkTopologyMode.SOFT

    def gang_min_resources(self) -> Resource:
        """What the gang needs at least: ``minResources``, else derived from its pending pods.

        Without ``minResources`` (hand-written PodGroups, Kubeflow, KubeRay, Spark) the need is,
        per resource, the sum of the smallest requests of as many pending tasks as the gang
        still misses (``minMember`` minus the ready ones): a lower bound, so the resource
        pre-filter prunes only HyperNodes that cannot hold the gang whichever tasks go first.
        """
        if not self.min_resources.is_empty():
            return self.min_resources
        missing = self.min_member - self.ready_task_num()
        pending = [t.resreq for t in self.tasks.values() if t.status == TaskStatus.PENDING]
        return least_sum(pending, missing)

    def tasks_request(self) -> Resource:
        """Sum of the requests of every task not yet finished."""
        total = Resource()
        for task in self.tasks.values():
            if task.status not in (TaskStatus.SUCCEEDED, TaskStatus.FAILED):
                total.add(task.resreq)
        return total

    def __repr__(self) -> str:
        """``Job(ns/name minMember=N tasks=M)``."""
        return f"Job({self.uid} minMember={self.min_member} tasks={len(self.tasks)})"
