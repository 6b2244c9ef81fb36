"""Typed view of ``batch.volcano.sh/v1alpha1`` Job (a "vcjob") and its wire constants.

A vcjob is Volcano's batch workload: ``tasks[]`` each give a pod ``template`` and a number
of ``replicas``; the job controller (``volcano_py.controllers.job``) turns one Job into one
PodGroup (the gang the scheduler places) and, once that PodGroup is admitted (``Inqueue``),
into ``<job>-<task>-<index>`` pods. ``JobView.from_dict`` reads an object the API server
accepted (the CRD already checked types and bounds): it checks the shapes the controller
relies on and names the field that is wrong, so a Job that got past admission with a bad
value gets a Warning Event naming the field instead of a crash.

Field names, label and annotation keys, phases, events and actions are Volcano's
(``batch/v1alpha1`` ``JobSpec``/``TaskSpec``/``JobStatus`` and ``bus/v1alpha1``).
Pod templates stay raw JSON: the controller copies them into pods as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from volcano_py.api import JSON
from volcano_py.api.constants import DEFAULT_QUEUE
from volcano_py.api.errors import FieldError, child, index
from volcano_py.api.meta import (
    name_of,
    namespace_of,
    read_int,
    read_list,
    read_object,
    read_section,
    read_str,
    uid_of,
)

GROUP = "batch.volcano.sh"
VERSION = "v1alpha1"
API_VERSION = f"{GROUP}/{VERSION}"
KIND = "Job"
JOB_CONTROLLER_NAME = "job-controller"

# Pod labels and annotations (Volcano's batch/v1alpha1 labels.go).
TASK_SPEC_KEY = "volcano.sh/task-spec"
TASK_INDEX = "volcano.sh/task-index"
JOB_NAME_KEY = "volcano.sh/job-name"
JOB_NAMESPACE_KEY = "volcano.sh/job-namespace"
QUEUE_NAME_KEY = "volcano.sh/queue-name"
JOB_VERSION = "volcano.sh/job-version"
JOB_RETRY_COUNT_KEY = "volcano.sh/job-retry-count"
POD_TEMPLATE_KEY = "volcano.sh/template-uid"
TASK_PARTITION_ID = "volcano.sh/partition-id"
NUMA_POLICY_KEY = "volcano.sh/numa-topology-policy"
DEFAULT_TASK_SPEC = "default"
DEFAULT_MAX_RETRY = 3


class JobPhase(StrEnum):
    """``status.state.phase``."""

    PENDING = "Pending"
    ABORTING = "Aborting"
    ABORTED = "Aborted"
    RUNNING = "Running"
    RESTARTING = "Restarting"
    COMPLETING = "Completing"
    COMPLETED = "Completed"
    TERMINATING = "Terminating"
    TERMINATED = "Terminated"
    FAILED = "Failed"


FINISHED_PHASES = frozenset({JobPhase.COMPLETED, JobPhase.FAILED, JobPhase.TERMINATED})


class Event(StrEnum):
    """``bus/v1alpha1`` events a policy reacts to."""

    ANY = "*"
    POD_PENDING = "PodPending"
    POD_RUNNING = "PodRunning"
    POD_FAILED = "PodFailed"
    POD_EVICTED = "PodEvicted"
    UNKNOWN = "Unknown"
    TASK_COMPLETED = "TaskCompleted"
    OUT_OF_SYNC = "OutOfSync"
    COMMAND_ISSUED = "CommandIssued"
    JOB_UPDATED = "JobUpdated"
    TASK_FAILED = "TaskFailed"


class Action(StrEnum):
    """``bus/v1alpha1`` actions a policy or command asks for."""

    ABORT_JOB = "AbortJob"
    RESTART_JOB = "RestartJob"
    RESTART_TASK = "RestartTask"
    RESTART_POD = "RestartPod"
    RESTART_PARTITION = "RestartPartition"
    TERMINATE_JOB = "TerminateJob"
    COMPLETE_JOB = "CompleteJob"
    RESUME_JOB = "ResumeJob"
    SYNC_JOB = "SyncJob"


def _read_bool_free_int(data: Mapping[str, Any], name: str, path: str) -> int | None:
    return read_int(data.get(name), child(path, name))


@dataclass(frozen=True, slots=True)
class PartitionPolicy:
    """``tasks[].partitionPolicy``: the task's pods in partitions of ``partition_size``."""

    total_partitions: int
    partition_size: int
    min_partitions: int = 0
    network_topology: Mapping[str, Any] | None = None

    @classmethod
    def from_dict(cls, data: Any, path: str) -> PartitionPolicy:
        """Read a partition policy at ``path``."""
        obj = read_object(data, path)
        topology = obj.get("networkTopology")
        return cls(
            total_partitions=_read_bool_free_int(obj, "totalPartitions", path) or 0,
            partition_size=_read_bool_free_int(obj, "partitionSize", path) or 0,
            min_partitions=_read_bool_free_int(obj, "minPartitions", path) or 0,
            network_topology=(
                None if topology is None else read_object(topology, child(path, "networkTopology"))
            ),
        )


@dataclass(frozen=True, slots=True)
class TaskSpec:
    """``spec.tasks[i]``."""

    name: str
    replicas: int
    template: Mapping[str, Any]
    min_available: int | None = None
    max_retry: int | None = None
    partition_policy: PartitionPolicy | None = None
    policies: tuple[Mapping[str, Any], ...] = ()
    depends_on: Mapping[str, Any] | None = None
    topology_policy: str = ""

    @property
    def key(self) -> str:
        """The task's key in pod names, labels and counts (``default`` when unnamed)."""
        return self.name or DEFAULT_TASK_SPEC

    @property
    def min_task_member(self) -> int:
        """The PodGroup's ``minTaskMember`` entry (Volcano's ``getMinTaskMember``)."""
        if self.min_available is not None:
            return self.min_available
        policy = self.partition_policy
        if policy is not None and policy.min_partitions and policy.partition_size:
            return policy.min_partitions * policy.partition_size
        return self.replicas

    @classmethod
    def from_dict(cls, data: Any, path: str) -> TaskSpec:
        """Read one task at ``path``."""
        obj = read_object(data, path)
        template = obj.get("template")
        partition = obj.get("partitionPolicy")
        depends_on = obj.get("dependsOn")
        replicas = _read_bool_free_int(obj, "replicas", path) or 0
        if replicas < 0:
            raise FieldError(child(path, "replicas"), "must be greater than or equal to 0")
        return cls(
            name=read_str(obj, "name", path),
            replicas=replicas,
            template={} if template is None else read_object(template, child(path, "template")),
            min_available=_read_bool_free_int(obj, "minAvailable", path),
            max_retry=_read_bool_free_int(obj, "maxRetry", path),
            partition_policy=(
                None
                if partition is None
                else PartitionPolicy.from_dict(partition, child(path, "partitionPolicy"))
            ),
            policies=tuple(
                read_object(p, index(child(path, "policies"), i))
                for i, p in enumerate(read_list(obj.get("policies"), child(path, "policies")))
            ),
            depends_on=(
                None if depends_on is None else read_object(depends_on, child(path, "dependsOn"))
            ),
            topology_policy=read_str(obj, "topologyPolicy", path),
        )


@dataclass(frozen=True, slots=True)
class JobView:
    """A vcjob as the controller reads it: identity, ``spec`` and the ``status`` it keeps."""

    namespace: str
    name: str
    uid: str
    min_available: int
    tasks: tuple[TaskSpec, ...]
    queue: str = DEFAULT_QUEUE
    scheduler_name: str = ""
    priority_class_name: str = ""
    max_retry: int = DEFAULT_MAX_RETRY
    min_success: int | None = None
    ttl_seconds_after_finished: int | None = None
    network_topology: Mapping[str, Any] | None = None
    policies: tuple[Mapping[str, Any], ...] = ()
    plugins: Mapping[str, list[str]] = field(default_factory=dict)
    phase: str = ""
    version: int = 0
    retry_count: int = 0

    @property
    def podgroup_name(self) -> str:
        """``<job>-<uid>``: the PodGroup Volcano makes for the job."""
        return f"{self.name}-{self.uid}"

    @property
    def total_replicas(self) -> int:
        """Pods the job asks for over all tasks (Volcano's ``TotalTasks``)."""
        return sum(task.replicas for task in self.tasks)

    @property
    def total_task_min_available(self) -> int:
        """Sum of tasks' ``minAvailable`` (``replicas`` where unset)."""
        return sum(
            task.replicas if task.min_available is None else task.min_available
            for task in self.tasks
        )

    def task(self, key: str) -> TaskSpec | None:
        """The task whose key is ``key``."""
        return next((task for task in self.tasks if task.key == key), None)

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any]) -> JobView:
        """Read a Job object; raises ``FieldError`` naming the first bad field."""
        spec = read_section(obj, "spec")
        status = read_section(obj, "status")
        state = read_section(status, "state") if status else {}
        tasks = tuple(
            TaskSpec.from_dict(task, index("spec.tasks", i))
            for i, task in enumerate(read_list(spec.get("tasks"), "spec.tasks"))
        )
        names = [task.key for task in tasks]
        duplicate = next((n for n in names if names.count(n) > 1), None)
        if duplicate is not None:
            raise FieldError("spec.tasks", f"duplicated task name {duplicate!r}")
        plugins = read_object(spec.get("plugins") or {}, "spec.plugins")
        topology = spec.get("networkTopology")
        max_retry = _read_bool_free_int(spec, "maxRetry", "spec")
        return cls(
            namespace=namespace_of(obj),
            name=name_of(obj),
            uid=uid_of(obj),
            min_available=_read_bool_free_int(spec, "minAvailable", "spec") or 0,
            tasks=tasks,
            queue=read_str(spec, "queue", "spec") or DEFAULT_QUEUE,
            scheduler_name=read_str(spec, "schedulerName", "spec"),
            priority_class_name=read_str(spec, "priorityClassName", "spec"),
            max_retry=DEFAULT_MAX_RETRY if max_retry is None else max_retry,
            min_success=_read_bool_free_int(spec, "minSuccess", "spec"),
            ttl_seconds_after_finished=_read_bool_free_int(spec, "ttlSecondsAfterFinished", "spec"),
            network_topology=(
                None if topology is None else read_object(topology, "spec.networkTopology")
            ),
            policies=tuple(
                read_object(p, index("spec.policies", i))
                for i, p in enumerate(read_list(spec.get("policies"), "spec.policies"))
            ),
            plugins={
                str(k): [str(a) for a in read_list(v, f"spec.plugins[{k}]")]
                for k, v in plugins.items()
            },
            phase=read_str(state, "phase", "status.state") if state else "",
            version=_read_bool_free_int(status, "version", "status") or 0,
            retry_count=_read_bool_free_int(status, "retryCount", "status") or 0,
        )


def job_owner_reference(job: Mapping[str, Any]) -> JSON:
    """The controller owner reference a Job puts on what it creates."""
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "name": name_of(job),
        "uid": uid_of(job),
        "controller": True,
        "blockOwnerDeletion": True,
    }
