"""Conf loading, registries, Statement inverses, session topology resolution."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.scheduler.helpers import gpu_cluster, session
from tests.unit.scheduler.objects import pod, podgroup
from volcano_py.scheduler.api.task_info import TaskStatus
from volcano_py.scheduler.framework.arguments import ConfError
from volcano_py.scheduler.framework.conf import DEFAULT_SCHEDULER_CONF
from volcano_py.scheduler.framework.registry import PluginRegistry, load_conf
from volcano_py.scheduler.scheduler import builtin_registries


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('actions: "enqueue, preemptx"', "actions: unknown action 'preemptx'"),
        ("actions: [enqueue]", "actions: expected a string"),
        ("tiers: [{plugins: [{name: binpackx}]}]", "tiers[0].plugins[0].name: unknown plugin"),
        ("tiers: {plugins: []}", "tiers: expected a list"),
        (
            "tiers: [{plugins: [{name: gang, enableJobReady: 'no'}]}]",
            "tiers[0].plugins[0].enableJobReady: expected a boolean",
        ),
        (
            "tiers: [{plugins: [{name: nodeorder, arguments: {leastrequested.weight: x}}]}]",
            "arguments[leastrequested.weight]: expected an integer, got 'x'",
        ),
        ("actionz: allocate", "unknown key 'actionz'"),
    ],
    ids=[
        "unknown-action",
        "actions-type",
        "unknown-plugin",
        "tiers-type",
        "switch-type",
        "argument-type",
        "unknown-key",
    ],
)
def test_conf_errors_name_the_key(text: str, message: str) -> None:
    plugins, actions = builtin_registries()
    with pytest.raises(ConfError) as info:
        load_conf(text, plugins, actions)
    assert message in str(info.value)


def test_conf_default_tiers_load() -> None:
    plugins, actions = builtin_registries()
    text = Path("examples/scheduler/volcano-scheduler.conf").read_text()
    conf = load_conf(text, plugins, actions)
    assert conf.actions == ("enqueue", "allocate", "backfill")
    assert [p.name for t in conf.tiers for p in t] == [
        "priority",
        "gang",
        "conformance",
        "overcommit",
        "drf",
        "predicates",
        "proportion",
        "nodeorder",
        "network-topology-aware",
    ]
    built_in = load_conf(DEFAULT_SCHEDULER_CONF, plugins, actions)  # the example is the default
    assert built_in.actions == conf.actions
    assert [[p.name for p in t] for t in built_in.tiers] == [
        [p.name for p in t] for t in conf.tiers
    ]


def test_registry_rejects_duplicates_and_lists_known_names() -> None:
    registry = PluginRegistry()
    registry.register("a", object)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="already registered"):
        registry.register("a", object)  # type: ignore[arg-type]
    with pytest.raises(KeyError, match=r"known: \['a'\]"):
        registry.get("b")


def test_statement_discard_is_exact_inverse_of_allocate() -> None:
    objects = gpu_cluster()
    objects.append(podgroup("job", 2))
    objects += [pod(f"job-{i}", "job", {"cpu": "500m", "nvidia.com/gpu": 1}) for i in range(2)]
    ssn = session(objects)
    node = ssn.nodes["node-1"]
    idle, used, pods = node.idle.clone(), node.used.clone(), node.pods
    tasks = ssn.jobs["default/job"].pending_tasks()
    stmt = ssn.statement()
    for task in tasks:
        stmt.allocate(task, "node-1")
    assert ssn.nodes["node-1"].pods == pods + 2
    assert node.idle == idle, "the cache's node must not change (copy-on-write)"
    stmt.discard()
    after = ssn.nodes["node-1"]
    assert (after.idle, after.used, after.pods) == (idle, used, pods)
    assert all(t.status == TaskStatus.PENDING and not t.node_name for t in tasks)
    assert ssn.binds == []


def test_statement_discard_keep_undoes_only_the_later_allocations() -> None:
    objects = gpu_cluster()
    objects.append(podgroup("job", 3))
    objects += [pod(f"job-{i}", "job", {"nvidia.com/gpu": 1}) for i in range(3)]
    ssn = session(objects)
    first, *later = ssn.jobs["default/job"].pending_tasks()
    stmt = ssn.statement()
    stmt.allocate(first, "node-1")
    for task in later:
        stmt.allocate(task, "node-2")
    stmt.discard(keep=1)
    assert len(stmt) == 1
    assert (first.status, first.node_name) == (TaskStatus.ALLOCATED, "node-1")
    assert all(t.status == TaskStatus.PENDING for t in later)
    assert ssn.nodes["node-2"].pods == 0


def test_statement_commit_hands_tasks_to_binds() -> None:
    objects = gpu_cluster()
    objects.append(podgroup("job", 1))
    objects.append(pod("job-0", "job", {"nvidia.com/gpu": 1}))
    ssn = session(objects)
    task = ssn.jobs["default/job"].pending_tasks()[0]
    stmt = ssn.statement()
    stmt.allocate(task, "node-2")
    stmt.commit()
    assert ssn.binds == [task]
    assert len(stmt) == 0


@pytest.mark.parametrize(
    ("pg", "tier", "error"),
    [
        ({"mode": "hard", "highest_tier_name": "spine"}, 2, ""),
        ({"mode": "hard", "highest_tier_name": "rack"}, None, "matches no HyperNode tierName"),
        ({"mode": "soft", "highest_tier_name": "rack"}, None, ""),
        ({"mode": "hard"}, 3, ""),
    ],
    ids=["name-translated", "unknown-name-hard", "unknown-name-soft", "hard-without-tier"],
)
def test_session_resolves_highest_tier(pg: dict[str, object], tier: int | None, error: str) -> None:
    objects = gpu_cluster()
    objects.append(podgroup("job", 1, **pg))  # type: ignore[arg-type]
    objects.append(pod("job-0", "job", {"nvidia.com/gpu": 1}))
    job = session(objects).jobs["default/job"]
    assert job.highest_tier == tier
    assert (error in job.topology_error) if error else job.topology_error == ""


@pytest.mark.parametrize(
    ("annotation", "bound", "expected"),
    [
        ("", ["node-3", "node-4"], "tor-2"),
        ("", ["node-3", "node-5"], "<cluster-top-hypernode>"),
        ("", ["node-1", "node-3"], "spine-1"),
        ("gone", ["node-1"], "tor-1"),
        ("tor-4", [], ""),
        ("spine-2", ["node-7"], "spine-2"),
    ],
    ids=[
        "same-tor",
        "across-spines",
        "same-spine",
        "unknown-dropped",
        "nothing-placed",
        "annotation-kept",
    ],
)
def test_session_recovers_allocated_hypernode(
    annotation: str, bound: list[str], expected: str
) -> None:
    objects = gpu_cluster()
    annotations = {"volcano.sh/job-allocated-hypernode": annotation} if annotation else {}
    objects.append(podgroup("job", 1, mode="hard", highest_tier=3, annotations=annotations))
    for i, node in enumerate(bound):
        objects.append(pod(f"b-{i}", "job", {"nvidia.com/gpu": 1}, node_name=node, phase="Running"))
    objects.append(pod("p", "job", {"nvidia.com/gpu": 1}))
    assert session(objects).jobs["default/job"].allocated_hypernode == expected


def test_scheduler_rejects_bad_conf_before_touching_the_cluster() -> None:
    from volcano_py.scheduler.scheduler import Scheduler

    with pytest.raises(ConfError, match="unknown action 'reclaimx'"):
        Scheduler(None, None, 'actions: "enqueue, reclaimx"')  # type: ignore[arg-type]
