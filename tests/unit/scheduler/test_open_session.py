"""open_session / close_session: plugins, the enqueue fallback; Statement's target."""

from __future__ import annotations

from tests.unit.scheduler.helpers import gpu_cluster
from tests.unit.scheduler.objects import pod, podgroup
from volcano_py.scheduler.api.node_info import NodeInfo
from volcano_py.scheduler.api.task_info import TaskInfo, TaskStatus
from volcano_py.scheduler.framework.framework import close_session, open_session
from volcano_py.scheduler.framework.registry import load_conf
from volcano_py.scheduler.framework.statement import Statement
from volcano_py.scheduler.plugins.overcommit import OvercommitGate
from volcano_py.scheduler.scheduler import builtin_registries
from volcano_py.scheduler.simulator import Simulator

# No plugin votes on enqueue (volcano-py's default before it became Volcano's, issue 24).
NO_VOTER_CONF = """
actions: "enqueue, allocate"
tiers:
- plugins: [{name: priority}, {name: gang}]
- plugins: [{name: predicates}, {name: nodeorder}, {name: network-topology-aware}]
"""

OVERCOMMIT_CONF = """
actions: "enqueue, allocate"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: overcommit}]
- plugins: [{name: predicates}, {name: nodeorder}]
"""


def _too_big() -> list[dict[str, object]]:
    """The design doc's cluster (32 GPUs) and a Pending gang asking for 64."""
    objects = gpu_cluster()
    objects.append(podgroup("big", 1, min_resources={"nvidia.com/gpu": "64"}))
    objects.append(pod("big-0", "big", {"nvidia.com/gpu": 1}))
    return objects


def _names(conf_text: str, fallback: bool = True) -> tuple[list[str], str | None]:
    plugins, actions = builtin_registries()
    if not fallback:
        plugins.enqueue_fallback = None
    sim = Simulator(_too_big(), load_conf(conf_text, plugins, actions))
    ssn = open_session(sim.cache.snapshot(), sim.conf, plugins)
    try:
        return [p.name for p in ssn.plugins], ssn.job_enqueueable(ssn.jobs["default/big"])
    finally:
        close_session(ssn)


def test_open_session_adds_the_enqueue_fallback_when_no_plugin_votes() -> None:
    names, reason = _names(NO_VOTER_CONF)
    assert names[-1] == "overcommit-fallback"
    assert names.count("overcommit-fallback") == 1
    assert reason is not None
    assert "nvidia.com/gpu short by" in reason


def test_open_session_leaves_the_fallback_out_when_a_plugin_votes() -> None:
    names, reason = _names(OVERCOMMIT_CONF)
    assert "overcommit-fallback" not in names
    assert "overcommit" in names
    assert reason is not None
    assert "nvidia.com/gpu short by" in reason


def test_open_session_without_a_fallback_lets_every_job_in() -> None:
    names, reason = _names(NO_VOTER_CONF, fallback=False)
    assert "overcommit-fallback" not in names
    assert reason is None


def test_enqueue_fallback_votes_as_the_overcommit_gate_at_its_default_factor() -> None:
    plugins, actions = builtin_registries()
    sim = Simulator(_too_big(), load_conf(NO_VOTER_CONF, plugins, actions))
    ssn = open_session(sim.cache.snapshot(), sim.conf, plugins)
    job = ssn.jobs["default/big"]
    assert ssn.job_enqueueable(job) == OvercommitGate(ssn).reject(job)
    close_session(ssn)
    assert ssn.plugins == []
    assert ssn.job_enqueueable(job) is None  # the functions are gone with the plugins


class _Target:
    """A StatementTarget that is not a Session (and its own Binder): nodes, a log of events."""

    def __init__(self, nodes: dict[str, NodeInfo]) -> None:
        self.binds: list[TaskInfo] = []
        self.committed: list[list[TaskInfo]] = []
        self.binder = self
        self.nodes = nodes
        self.events: list[tuple[str, str]] = []

    def bind(self, tasks: list[TaskInfo]) -> None:
        self.committed.append(tasks)

    def unevictable(self) -> frozenset[str]:
        return frozenset()

    def own_node(self, name: str) -> NodeInfo:
        return self.nodes[name]

    def fire_allocate(self, task: TaskInfo) -> None:
        self.events.append(("allocate", task.key))

    def fire_deallocate(self, task: TaskInfo) -> None:
        self.events.append(("deallocate", task.key))


def test_statement_works_on_any_statement_target() -> None:
    objects = gpu_cluster()
    objects.append(podgroup("job", 2))
    objects += [pod(f"job-{i}", "job", {"nvidia.com/gpu": 1}) for i in range(2)]
    snapshot = Simulator(objects).cache.snapshot()
    first, second = snapshot.jobs["default/job"].pending_tasks()
    target = _Target({"node-1": snapshot.nodes["node-1"].clone()})
    stmt = Statement(target)
    stmt.allocate(first, "node-1")
    stmt.allocate(second, "node-1")
    stmt.discard(keep=1)
    stmt.commit()
    assert target.binds == [first]
    assert target.committed == [[first]]  # told at once, for its bind to start
    assert (second.status, second.node_name) == (TaskStatus.PENDING, "")
    assert target.events == [
        ("allocate", first.key),
        ("allocate", second.key),
        ("deallocate", second.key),
    ]
    assert target.nodes["node-1"].pods == 1
