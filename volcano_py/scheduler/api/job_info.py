"""``JobInfo``: a PodGroup with its tasks — the unit the gang and topology plugins reason about.

Reads from the PodGroup dict only what scheduling needs: ``minMember``, ``minTaskMember``,
``minResources``, ``queue``, ``networkTopology`` (mode, ``highestTierAllowed``,
``highestTierName``; when the spec has none, the ``volcano.sh/network-topology-*`` annotations
of the PodGroup, see ``api/topology_annotations``), ``subGroupPolicy``, the phase and the
``volcano.sh/job-allocated-hypernode`` annotation. A malformed field does not crash the
scheduler: the job keeps an ``invalid`` message and the gang plugin refuses it.

Every task is filed in a SubJob as it is added (``sub_job_info``): the first policy that
takes the pod, else the default SubJob. The job is ready when ``minMember`` tasks are, every
``minTaskMember`` role has its count, and every policy has ``minSubGroups`` ready SubJobs.
"""

from __future__ import annotations

from volcano_py.api import JSON
from volcano_py.api.constants import (
    JOB_ALLOCATED_HYPERNODE_ANNOTATION,
    NetworkTopologyMode,
    PodGroupPhase,
)
from volcano_py.api.errors import FieldError
from volcano_py.api.native_composite import CHILD_POLICY, CHILDREN_FIELD, ERROR_FIELD
from volcano_py.api.native_groups import pod_group_name
from volcano_py.api.podgroup import (
    NetworkTopology,
    SubGroupPolicy,
    read_min_resources,
    read_min_task_member,
    read_sub_group_policies,
)
from volcano_py.api.topology_annotations import topology_from_annotations
from volcano_py.scheduler.api.nominated import nomination
from volcano_py.scheduler.api.resource import Resource, least_sum
from volcano_py.scheduler.api.sub_job_info import DEFAULT_SUB_JOB, SubJobInfo, sub_job_id
from volcano_py.scheduler.api.task_info import READY, TaskInfo, TaskStatus

TASK_SPEC_KEY = "volcano.sh/task-spec"


class JobInfo:
    """One PodGroup and its tasks."""

    __slots__ = (
        "allocated_hypernode",
        "children",
        "creation",
        "highest_tier",
        "highest_tier_name",
        "invalid",
        "key",
        "label_key",
        "min_member",
        "min_resources",
        "min_task_member",
        "mode",
        "name",
        "namespace",
        "phase",
        "podgroup",
        "policies",
        "priority",
        "queue",
        "sub_jobs",
        "task_to_sub_job",
        "tasks",
        "topology_error",
        "topology_warning",
    )

    def __init__(self, podgroup: JSON) -> None:
        """From a cached PodGroup dict (kept by reference, never mutated)."""
        meta = podgroup.get("metadata") or {}
        spec = podgroup.get("spec") or {}
        self.podgroup = podgroup
        self.namespace: str = meta.get("namespace", "")
        self.name: str = meta.get("name", "")
        self.key = f"{self.namespace}/{self.name}"
        self.creation: str = meta.get("creationTimestamp") or ""
        self.queue: str = spec.get("queue") or "default"
        self.phase: str = (podgroup.get("status") or {}).get("phase") or PodGroupPhase.PENDING
        self.tasks: dict[str, TaskInfo] = {}
        # the highest of its tasks' priorities, and a native PodGroup's own ``spec.priority``
        # (``api/native_groups.py``; a Volcano PodGroup has no such field)
        own = spec.get("priority")
        self.priority = own if isinstance(own, int) and not isinstance(own, bool) else 0
        self.invalid = ""
        self.topology_error = ""
        self.topology_warning = ""
        annotations = meta.get("annotations") or {}
        self.allocated_hypernode: str = annotations.get(JOB_ALLOCATED_HYPERNODE_ANNOTATION, "")
        self.min_member = 0
        self.min_resources = Resource()
        self.mode: NetworkTopologyMode | None = None
        self.highest_tier: int | None = None
        self.highest_tier_name = ""
        # a native group's topology key that no HyperNode tier names: placed within one
        # value of that node label instead (``topology.py``, ``actions/allocate_label.py``)
        self.label_key = ""
        self.min_task_member: dict[str, int] = {}
        self.policies: tuple[SubGroupPolicy, ...] = ()
        self.sub_jobs: dict[str, SubJobInfo] = {}
        self.task_to_sub_job: dict[str, str] = {}
        # a native CompositePodGroup's children: PodGroup name -> (minCount, topology)
        self.children: dict[str, tuple[int, NetworkTopology | None]] = {}
        try:
            self._parse_spec(spec, annotations)
        except FieldError as e:
            self.invalid = str(e)
        except (TypeError, ValueError) as e:
            self.invalid = f"spec: {e}"

    def _parse_spec(self, spec: JSON, annotations: JSON) -> None:
        min_member = spec.get("minMember", 0)
        if not isinstance(min_member, int) or isinstance(min_member, bool) or min_member < 0:
            raise ValueError(f"minMember must be a non-negative integer, got {min_member!r}")
        self.min_member = min_member
        read_min_resources(spec.get("minResources"))  # none negative (FieldError)
        self.min_resources = Resource.from_list(spec.get("minResources"), "spec.minResources")
        self.min_task_member = dict(read_min_task_member(spec.get("minTaskMember")))
        self.policies = read_sub_group_policies(spec.get("subGroupPolicy"), "spec.subGroupPolicy")
        if spec.get(ERROR_FIELD):
            raise FieldError("", str(spec[ERROR_FIELD]))
        self.children = read_children(spec.get(CHILDREN_FIELD))
        topology = spec.get("networkTopology")
        if not topology:
            asked = topology_from_annotations(annotations, f"PodGroup {self.key}")
            self.topology_warning = asked.warning
            self.mode = asked.mode
            self.highest_tier = asked.highest_tier
            self.highest_tier_name = asked.highest_tier_name
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
        """Add (or replace) a task in its SubJob; the job's priority is its highest task's."""
        self.tasks[task.key] = task
        self.priority = max(self.priority, task.priority)
        sub_job = self._sub_job_for(task)
        sub_job.add_task(task)
        self.task_to_sub_job[task.key] = sub_job.uid

    def _sub_job_for(self, task: TaskInfo) -> SubJobInfo:
        child = self.children.get(pod_group_name(task.pod)) if self.children else None
        if child is not None:  # a native CompositePodGroup's child PodGroup
            name = pod_group_name(task.pod)
            sub_job = SubJobInfo(sub_job_id(CHILD_POLICY, (name,)), CHILD_POLICY, *child)
            return self.sub_jobs.setdefault(sub_job.uid, sub_job)
        if self.policies:
            labels = (task.pod.get("metadata") or {}).get("labels") or {}
            for policy in self.policies:
                values = policy.match_values(labels)
                if values is not None:
                    sub_job = SubJobInfo.for_policy(policy, values)
                    return self.sub_jobs.setdefault(sub_job.uid, sub_job)
        default = self.sub_jobs.get(DEFAULT_SUB_JOB)
        if default is None:
            topology = None
            if self.mode is not None:
                topology = NetworkTopology(self.mode, self.highest_tier, self.highest_tier_name)
            size = 1 if self.policies else self.min_member
            default = SubJobInfo(DEFAULT_SUB_JOB, "", size, topology)
            self.sub_jobs[DEFAULT_SUB_JOB] = default
        return default

    def remove_task(self, uid: str) -> None:
        """Forget a task."""
        self.tasks.pop(uid, None)
        sub_job = self.sub_jobs.get(self.task_to_sub_job.pop(uid, DEFAULT_SUB_JOB))
        if sub_job is not None:
            sub_job.tasks.pop(uid, None)

    def sub_job_of(self, task: TaskInfo) -> SubJobInfo | None:
        """The SubJob holding ``task``."""
        return self.sub_jobs.get(self.task_to_sub_job.get(task.key, DEFAULT_SUB_JOB))

    def has_sub_group_policy(self) -> bool:
        """The PodGroup partitions its gang (Volcano's ``ContainsSubJobPolicy``)."""
        return bool(self.policies)

    def ready_task_num(self) -> int:
        """Tasks that count towards minMember (allocated, binding, bound, running, done)."""
        return sum(1 for t in self.tasks.values() if t.status in READY)

    def has_pending_tasks(self) -> bool:
        """Whether ``pending_tasks`` is not empty (without building and sorting it)."""
        return any(t.status == TaskStatus.PENDING and not t.gated for t in self.tasks.values())

    def pending_tasks(self) -> list[TaskInfo]:
        """Pending tasks in Volcano's task order: priority, then creation, then name.

        Pods with scheduling gates are left out: no action places them (``gated_tasks``).
        """
        pending = [t for t in self.tasks.values() if t.status == TaskStatus.PENDING and not t.gated]
        pending.sort(key=lambda t: (-t.priority, t.creation, t.key))
        return pending

    def gated_tasks(self) -> list[TaskInfo]:
        """Pending tasks whose pods still carry ``spec.schedulingGates``, by key."""
        gated = [t for t in self.tasks.values() if t.gated and t.status == TaskStatus.PENDING]
        gated.sort(key=lambda t: t.key)
        return gated

    def inqueue_need(self, need: Resource) -> Resource:
        """``need`` less what the gated pods ask, none below zero (Volcano's deduction).

        What an admitted job reserves in its queue and the cluster: its gated pods hold
        nothing, so they do not keep other jobs out.
        """
        gated = self.gated_tasks()
        if not gated:
            return need
        out = need.clone()
        for task in gated:
            out.sub(task.resreq)
        return out.clamped()

    def is_ready(self) -> bool:
        """The gang is satisfied: minMember, minTaskMember and every policy's minSubGroups."""
        if self.ready_task_num() < self.min_member:
            return False
        if self.min_task_member and self.task_roles_short():
            return False
        if not any(policy.min_sub_groups for policy in self.policies):
            return True
        return not self.sub_groups_short(ready=True)

    def task_roles_short(self) -> dict[str, tuple[int, int]]:
        """``minTaskMember`` roles below their count: role -> (ready, wanted).

        As Volcano, skipped when ``minMember`` is below the sum of the counts. A task's role is
        its pod's ``volcano.sh/task-spec`` annotation (or label).
        """
        surplus = self.role_surplus()
        return {
            role: (self.min_task_member[role] + spare, self.min_task_member[role])
            for role, spare in sorted(surplus.items())
            if spare < 0
        }

    def role_surplus(self) -> dict[str, int]:
        """Per ``minTaskMember`` role, ready pods beyond its count (negative: short).

        Empty when ``minMember`` is below the sum of the counts (Volcano skips the roles then).
        """
        if self.min_member < sum(self.min_task_member.values()):
            return {}
        ready: dict[str, int] = {}
        for task in self.tasks.values():
            if task.status in READY:
                role = task_role(task)
                ready[role] = ready.get(role, 0) + 1
        return {role: ready.get(role, 0) - wanted for role, wanted in self.min_task_member.items()}

    def sub_groups_short(self, *, ready: bool) -> dict[str, tuple[int, int]]:
        """Policies with fewer than ``minSubGroups`` SubJobs (ready ones when ``ready``)."""
        counts: dict[str, int] = {}
        for sub_job in self.sub_jobs.values():
            if sub_job.uid != DEFAULT_SUB_JOB and (not ready or sub_job.is_ready()):
                counts[sub_job.policy] = counts.get(sub_job.policy, 0) + 1
        return {
            policy.name: (counts.get(policy.name, 0), policy.min_sub_groups)
            for policy in self.policies
            if counts.get(policy.name, 0) < policy.min_sub_groups
        }

    def nominated_hypernode(self) -> str:
        """The HyperNode preempt/reclaim freed for the job ("" when none)."""
        return nomination(self.podgroup) or ""

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
        pending = [t.resreq for t in self.pending_tasks()]
        return least_sum(pending, missing)

    def __repr__(self) -> str:
        """``Job(ns/name minMember=N tasks=M)``."""
        return f"Job({self.key} minMember={self.min_member} tasks={len(self.tasks)})"


def read_children(data: object) -> dict[str, tuple[int, NetworkTopology | None]]:
    """A composite view's ``nativeChildren`` (``api/native_composite.py``), each checked."""
    if not data:
        return {}
    if not isinstance(data, dict):
        raise FieldError(CHILDREN_FIELD, "must be an object")
    out: dict[str, tuple[int, NetworkTopology | None]] = {}
    for name, entry in data.items():
        size = entry.get("minMember")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise FieldError(
                f"PodGroup {name} spec.schedulingPolicy.gang.minCount",
                f"must be a non-negative integer, got {size!r}",
            )
        topology = entry.get("networkTopology")
        field = f"PodGroup {name} networkTopology"
        out[name] = (
            max(size, 1),
            None if topology is None else NetworkTopology.from_dict(topology, field),
        )
    return out


def task_role(task: TaskInfo) -> str:
    """The task's role for ``minTaskMember``: ``volcano.sh/task-spec`` annotation, else label."""
    meta = task.pod.get("metadata") or {}
    role = (meta.get("annotations") or {}).get(TASK_SPEC_KEY) or (meta.get("labels") or {}).get(
        TASK_SPEC_KEY
    )
    return str(role or "")
