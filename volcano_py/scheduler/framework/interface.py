"""The framework's vocabulary: Plugin/Action protocols, extension-point types, small records.

Volcano's ``pkg/scheduler/framework/interface.go`` plus the records the extension points pass
around (``ValidateResult``, ``EventHandler``, ``JobFit``, ``Eviction``). Everything above
(statement, session, the framework that opens sessions, actions, plugins) speaks these words;
this module imports only the scheduler's ``api``.

``Plugin`` and ``Action`` are generic in the session they are handed, so this layer does not
import ``Session``: the framework instantiates them as ``Plugin[Session]`` /
``Action[Session]``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar

from volcano_py.scheduler.api.hypernode_info import HyperNodeInfo
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.node_info import NodeInfo
from volcano_py.scheduler.api.queue_info import QueueInfo
from volcano_py.scheduler.api.sub_job_info import SubJobInfo
from volcano_py.scheduler.api.task_info import TaskInfo

SessionT = TypeVar("SessionT", contravariant=True)


class Plugin(Protocol[SessionT]):
    """A plugin instance, built per session from its arguments."""

    name: str

    def on_session_open(self, ssn: SessionT) -> None:
        """Register extension point functions on the session."""
        ...

    def on_session_close(self, ssn: SessionT) -> None:
        """Release per-session state."""
        ...


class Action(Protocol[SessionT]):
    """An action run once per cycle, in the configured order."""

    name: str

    def execute(self, ssn: SessionT) -> None:
        """Do the action's work through the session."""
        ...


@dataclass(frozen=True, slots=True)
class ValidateResult:
    """Why a job cannot be scheduled at all (Volcano's ``api.ValidateResult``)."""

    passed: bool
    reason: str = ""
    message: str = ""


@dataclass(slots=True)
class EventHandler:
    """Called after a statement allocates or deallocates a task."""

    allocate_func: Callable[[TaskInfo], None] | None = None
    deallocate_func: Callable[[TaskInfo], None] | None = None


@dataclass(slots=True)
class JobFit:
    """Why a job was not placed this cycle, for the PodGroup condition and events."""

    reason: str
    message: str
    # the node-level predicate reasons behind the message (their wake-up hints add up)
    node_reasons: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Eviction:
    """A victim chosen by preempt/reclaim: the pod, the preempting job, the domain freed."""

    task: TaskInfo
    preemptor: str
    domain: str
    action: str


JobOrderFn = Callable[[JobInfo, JobInfo], int]
JobValidFn = Callable[[JobInfo], ValidateResult | None]
JobReadyFn = Callable[[JobInfo], bool]
PredicateFn = Callable[[TaskInfo, NodeInfo], str | None]
NodeOrderFn = Callable[[TaskInfo, NodeInfo], float]
BatchNodeOrderFn = Callable[[TaskInfo, list[NodeInfo]], dict[str, float]]
# scores HyperNodes for a job, or for one of its SubJobs when the third argument is given
HyperNodeOrderFn = Callable[
    [JobInfo, dict[str, list[NodeInfo]], SubJobInfo | None], dict[str, float]
]
HyperNodeGradientFn = Callable[[JobInfo, HyperNodeInfo], list[list[HyperNodeInfo]]]
SubJobGradientFn = Callable[[JobInfo, SubJobInfo, HyperNodeInfo], list[list[HyperNodeInfo]]]
QueueOrderFn = Callable[[QueueInfo, QueueInfo], int]
OverusedFn = Callable[[QueueInfo], bool]
AllocatableFn = Callable[[QueueInfo, TaskInfo], bool]
# a vote on a Pending job entering its queue (Volcano's Abstain/Permit/Reject): None abstains,
# PERMIT permits (a tier with a permit and no reject admits, later tiers are not asked), any
# other text rejects and says why
PERMIT = ""
JobEnqueueableFn = Callable[[JobInfo], str | None]
JobEnqueuedFn = Callable[[JobInfo], None]
# the candidates a plugin lets an eviction (preempt/reclaim) take
EvictableFn = Callable[[list[TaskInfo]], list[TaskInfo]]
# a plugin's answer on preempt/reclaim victims: None abstains, else the candidates it permits
VictimFn = Callable[[TaskInfo, list[TaskInfo]], list[TaskInfo] | None]


class Binder(Protocol):
    """The binder a session is opened with (Volcano's session reaches ``Cache.Bind`` so).

    The loop's binder assumes committed tasks in the cache and starts their binds at once
    (``scheduler/binds.py``); the simulator and ``explain`` open sessions without one.
    """

    def bind(self, tasks: list[TaskInfo]) -> None:
        """A statement committed ``tasks`` (placed): start binding them."""
        ...

    def unevictable(self) -> frozenset[str]:
        """Pods whose eviction the API server refused lately (a PodDisruptionBudget)."""
        ...


class StatementTarget(Protocol):
    """What a ``Statement`` needs of its session: node copies, event handlers, the bind list."""

    binds: list[TaskInfo]
    binder: Binder | None

    def own_node(self, name: str) -> NodeInfo:
        """The session's private copy of a node, made on first write."""
        ...

    def fire_allocate(self, task: TaskInfo) -> None:
        """Run the allocate event handlers."""
        ...

    def fire_deallocate(self, task: TaskInfo) -> None:
        """Run the deallocate event handlers."""
        ...
