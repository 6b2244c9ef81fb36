"""``SubJobInfo``: one partition of a job's gang (Volcano's ``api.SubJobInfo``).

A PodGroup's ``spec.subGroupPolicy[]`` splits its pods: a pod belongs to the first policy
whose selector matches it and whose ``matchLabelKeys`` all carry a value on the pod; the
SubJob is that policy plus those values (id ``<policy>/<values joined by "-">``). The other
pods form the job's default SubJob (id ``""``): it needs ``minMember`` pods when the PodGroup
has no policy, else 1, and inherits the job's network topology.

A SubJob is ready when ``subGroupSize`` of its tasks are (allocated, binding, bound, running
or done). Its AllocatedHyperNode is never persisted: the session recovers it from where its
placed tasks run (their lowest common HyperNode), so after a restart a replacement pod rejoins
its partition's HyperNode.
"""

from __future__ import annotations

from volcano_py.api.constants import NetworkTopologyMode
from volcano_py.api.podgroup import NetworkTopology, SubGroupPolicy
from volcano_py.scheduler.api.resource import Resource, least_sum
from volcano_py.scheduler.api.task_info import READY, TaskInfo, TaskStatus

DEFAULT_SUB_JOB = ""
MAX_ID_VALUES_LENGTH = 128


def sub_job_id(policy: str, values: tuple[str, ...]) -> str:
    """``<policy>/<values joined by "-">`` (long value lists are hashed, as Volcano does)."""
    joined = "-".join(values)
    if len(joined) > MAX_ID_VALUES_LENGTH:
        # FNV-1a 32: short, stable across processes (Python's hash() is salted)
        digest = 0x811C9DC5
        for byte in joined.encode():
            digest = ((digest ^ byte) * 0x01000193) & 0xFFFFFFFF
        joined = f"{digest:08x}"
    return f"{policy}/{joined}"


class SubJobInfo:
    """One SubJob: its policy's size and topology, its tasks, its allocated HyperNode."""

    __slots__ = (
        "allocated_hypernode",
        "highest_tier",
        "highest_tier_name",
        "match_index",
        "min_available",
        "mode",
        "policy",
        "priority",
        "tasks",
        "uid",
    )

    def __init__(
        self,
        uid: str,
        policy: str,
        min_available: int,
        topology: NetworkTopology | None,
        values: tuple[str, ...] = (),
    ) -> None:
        """A SubJob with no tasks yet."""
        self.uid = uid
        self.policy = policy
        self.min_available = min_available
        self.tasks: dict[str, TaskInfo] = {}
        self.priority = 0
        self.allocated_hypernode = ""
        self.mode: NetworkTopologyMode | None = None if topology is None else topology.mode
        self.highest_tier = None if topology is None else topology.highest_tier_allowed
        self.highest_tier_name = "" if topology is None else topology.highest_tier_name or ""
        # the first match value as a number orders partitions 0, 1, 2 ... (Volcano's MatchIndex)
        self.match_index = int(values[0]) if values and values[0].isdigit() else 0

    @classmethod
    def for_policy(cls, policy: SubGroupPolicy, values: tuple[str, ...]) -> SubJobInfo:
        """The SubJob of ``policy`` for one set of match values."""
        return cls(
            sub_job_id(policy.name, values),
            policy.name,
            policy.sub_group_size,
            policy.network_topology,
            values,
        )

    def add_task(self, task: TaskInfo) -> None:
        """Add (or replace) a task; the SubJob's priority is its highest task priority."""
        self.tasks[task.key] = task
        self.priority = max(self.priority, task.priority)

    def ready_task_num(self) -> int:
        """Tasks that count towards ``subGroupSize``."""
        return sum(1 for t in self.tasks.values() if t.status in READY)

    def is_ready(self) -> bool:
        """At least ``subGroupSize`` tasks ready."""
        return self.ready_task_num() >= self.min_available

    def pending_tasks(self) -> list[TaskInfo]:
        """Pending tasks in task order: priority, then creation, then name."""
        pending = [t for t in self.tasks.values() if t.status == TaskStatus.PENDING]
        pending.sort(key=lambda t: (-t.priority, t.creation, t.key))
        return pending

    def min_resources(self) -> Resource:
        """The least the SubJob's missing members need (the pre-filter's bound)."""
        missing = self.min_available - self.ready_task_num()
        pending = [t.resreq for t in self.tasks.values() if t.status == TaskStatus.PENDING]
        return least_sum(pending, missing)

    def with_network_topology(self) -> bool:
        """The SubJob has a topology of its own (or inherits the job's)."""
        return self.mode is not None

    def __repr__(self) -> str:
        """``SubJob(policy/values size=N tasks=M)``."""
        return (
            f"SubJob({self.uid or '<default>'} size={self.min_available} tasks={len(self.tasks)})"
        )
