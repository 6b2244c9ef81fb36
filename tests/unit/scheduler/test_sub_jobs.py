"""SubJobs: pods filed by ``subGroupPolicy``, readiness with ``minSubGroups``/``minTaskMember``."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.scheduler.helpers import gpu_cluster, session
from tests.unit.scheduler.objects import hypernode, node, pod, podgroup
from volcano_py.scheduler.actions.allocate_sub_jobs import ordered_sub_jobs
from volcano_py.scheduler.actions.domain_signature import domain_signature, label_blind
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.sub_job_info import DEFAULT_SUB_JOB, sub_job_id
from volcano_py.scheduler.api.task_info import TaskInfo, TaskStatus
from volcano_py.scheduler.plugins.gang import job_valid
from volcano_py.scheduler.plugins.network_topology_aware import NetworkTopologyAwarePlugin

PART = "volcano.sh/partition-id"
TP = {
    "name": "tp",
    "subGroupSize": 2,
    "matchLabelKeys": [PART],
    "labelSelector": {"matchLabels": {"role": "worker"}},
}


def _job(policies: list[dict[str, Any]], pods: list[dict[str, Any]], **pg: Any) -> JobInfo:
    job = JobInfo(podgroup("job", pg.pop("min_member", 1), sub_group_policy=policies, **pg))
    for p in pods:
        job.add_task(TaskInfo(p))
    return job


def _worker(name: str, part: str | None, role: str = "worker", **kw: Any) -> dict[str, Any]:
    labels = {"role": role}
    if part is not None:
        labels[PART] = part
    return pod(name, "job", {"nvidia.com/gpu": 1}, labels=labels, **kw)


def test_pods_are_filed_by_policy_and_match_values() -> None:
    job = _job(
        [TP],
        [
            _worker("w0", "0"),
            _worker("w1", "0"),
            _worker("w2", "1"),
            _worker("ps", "0", role="ps"),
            _worker("nolabel", None),
        ],
    )
    members = {uid: sorted(t.name for t in sj.tasks.values()) for uid, sj in job.sub_jobs.items()}
    assert members == {"tp/0": ["w0", "w1"], "tp/1": ["w2"], DEFAULT_SUB_JOB: ["nolabel", "ps"]}
    assert job.sub_jobs["tp/0"].min_available == 2
    assert job.sub_jobs[DEFAULT_SUB_JOB].min_available == 1  # policies exist: default needs 1


def test_first_matching_policy_wins() -> None:
    other = {"name": "any", "matchLabelKeys": [PART]}
    job = _job([TP, other], [_worker("w", "3"), _worker("p", "3", role="ps")])
    assert job.task_to_sub_job == {"default/w": "tp/3", "default/p": "any/3"}


def test_default_sub_job_needs_min_member_and_inherits_topology_without_policy() -> None:
    job = _job([], [_worker("a", "0")], min_member=4, mode="hard", highest_tier=2)
    default = job.sub_jobs[DEFAULT_SUB_JOB]
    assert (default.min_available, default.mode, default.highest_tier) == (4, "hard", 2)


def test_sub_job_id_uses_every_value_and_hashes_long_ones() -> None:
    assert sub_job_id("tp", ("1", "a")) == "tp/1-a"
    long = sub_job_id("tp", ("x" * 200,))
    assert long.startswith("tp/")
    assert len(long) == len("tp/") + 8
    assert long == sub_job_id("tp", ("x" * 200,))


def _ready(p: dict[str, Any]) -> dict[str, Any]:
    p["spec"]["nodeName"] = "node-1"
    p["status"]["phase"] = "Running"
    return p


@pytest.mark.parametrize(
    ("ready", "expected"),
    [
        (["w0", "w1"], False),  # one SubJob ready, minSubGroups 2
        (["w0", "w1", "w2"], False),  # tp/1 has 1 of 2
        (["w0", "w1", "w2", "w3"], True),
    ],
    ids=["one-group", "half-second", "both"],
)
def test_job_ready_needs_min_sub_groups_ready(ready: list[str], expected: bool) -> None:
    pods = [_worker(f"w{i}", str(i // 2)) for i in range(4)]
    pods = [_ready(p) if p["metadata"]["name"] in ready else p for p in pods]
    job = _job([{**TP, "minSubGroups": 2}], pods, min_member=2)
    assert job.is_ready() is expected


def test_job_ready_needs_min_task_member_roles() -> None:
    def spec(name: str, role: str, running: bool) -> dict[str, Any]:
        p = pod(name, "job", {"cpu": 1})
        p["metadata"]["annotations"]["volcano.sh/task-spec"] = role
        return _ready(p) if running else p

    pods = [spec("m", "master", False), spec("w0", "worker", True), spec("w1", "worker", True)]
    job = _job([], pods, min_member=3, min_task_member={"master": 1, "worker": 2})
    assert job.task_roles_short() == {"master": (0, 1)}
    assert not job.is_ready()
    job.tasks["default/m"].status = TaskStatus.ALLOCATED
    assert job.is_ready()


def test_gang_refuses_a_job_without_enough_sub_groups_naming_the_policy() -> None:
    job = _job([{**TP, "minSubGroups": 3}], [_worker(f"w{i}", str(i // 2)) for i in range(4)])
    result = job_valid(job)
    assert result is not None
    assert result.reason == "NotEnoughPodsOfTask"
    assert "tp has 2, min 3" in result.message


def test_gang_refuses_a_job_without_enough_pods_of_a_role() -> None:
    p = pod("w", "job", {"cpu": 1})
    p["metadata"]["annotations"]["volcano.sh/task-spec"] = "worker"
    job = _job([], [p], min_member=2, min_task_member={"worker": 1, "master": 1})
    result = job_valid(job)
    assert result is not None
    assert "master has 0, min 1" in result.message


def test_invalid_sub_group_policy_makes_the_job_invalid_naming_the_field() -> None:
    job = _job([{"name": "tp", "subGroupSize": 0}], [])
    assert "spec.subGroupPolicy[0].subGroupSize" in job.invalid


def test_sub_job_allocated_hypernode_is_recovered_from_its_running_pods() -> None:
    objects = gpu_cluster()
    rack = {**TP, "networkTopology": {"mode": "hard", "highestTierAllowed": 1}}
    objects.append(podgroup("job", 4, mode="hard", highest_tier=2, sub_group_policy=[rack]))
    placed = {"w0": "node-3", "w1": "node-4", "w2": "node-1"}
    for i in range(4):
        p = _worker(f"w{i}", str(i // 2))
        if p["metadata"]["name"] in placed:
            p["spec"]["nodeName"] = placed[p["metadata"]["name"]]
            p["status"]["phase"] = "Running"
        objects.append(p)
    job = session(objects).jobs["default/job"]
    assert job.sub_jobs["tp/0"].allocated_hypernode == "tor-2"
    assert job.sub_jobs["tp/1"].allocated_hypernode == "tor-1"
    assert job.allocated_hypernode == "spine-1"


def _two_spines(busy_node: str | None = None) -> list[dict[str, Any]]:
    objects = gpu_cluster()
    objects.append(podgroup("job", 8, mode="hard", highest_tier=2, sub_group_policy=[TP]))
    objects += [_worker(f"w{i}", str(i // 2)) for i in range(8)]
    if busy_node:
        objects.append(
            pod("busy", None, {"nvidia.com/gpu": 1}, node_name=busy_node, phase="Running")
        )
    return objects


def test_domain_signature_equal_for_identical_spines_and_differs_with_usage() -> None:
    ssn = session(_two_spines())
    hns = ssn.hypernodes
    assert domain_signature(ssn, hns["spine-1"], set()) == domain_signature(
        ssn, hns["spine-2"], set()
    )
    assert domain_signature(ssn, hns["spine-1"], {"node-2"}) is None
    busy = session(_two_spines("node-6"))
    assert domain_signature(busy, busy.hypernodes["spine-1"], set()) != domain_signature(
        busy, busy.hypernodes["spine-2"], set()
    )


def test_label_blind_only_without_node_selection_or_partly_placed_sub_jobs() -> None:
    job = session(_two_spines()).jobs["default/job"]
    assert label_blind(job)
    objects = _two_spines()
    objects[-1]["spec"]["nodeSelector"] = {"zone": "a"}
    assert not label_blind(session(objects).jobs["default/job"])
    objects = _two_spines()
    objects[-1]["spec"]["nodeName"] = "node-1"
    objects[-1]["status"]["phase"] = "Running"
    assert not label_blind(session(objects).jobs["default/job"])


def test_sub_job_order_puts_required_groups_first_then_partition_index() -> None:
    pods = [_worker(f"w{i}", str(i // 2)) for i in range(6)]
    job = _job([{**TP, "minSubGroups": 1}, {"name": "ps", "matchLabelKeys": ["ps"]}], pods)
    job.add_task(TaskInfo(pod("p", "job", {"cpu": 1}, labels={"ps": "7"}, priority=5)))
    # tp/0 is required (minSubGroups 1), then priority (ps/7), then partition index
    assert [sj.uid for sj in ordered_sub_jobs(job)] == ["tp/0", "ps/7", "tp/1", "tp/2"]


def _nta(ssn: Any) -> NetworkTopologyAwarePlugin:
    return next(p for p in ssn.plugins if isinstance(p, NetworkTopologyAwarePlugin))


def test_hypernode_order_for_a_sub_job_binpacks_its_own_request() -> None:
    # Volcano's TestHyperNodeOrderFn "score hypernodes for a subjob with default plugin
    # arguments": a SubJob of two 4-cpu/4G pods over racks of different sizes.
    shapes = {"s3": ("2", "4G"), "s4": ("4", "4G"), "s5": ("2", "8G"), "s6": ("4", "8G")}
    objects: list[dict[str, Any]] = []
    for rack, (cpu, mem) in shapes.items():
        objects += [node(f"{rack}-n{i}", {"cpu": cpu, "memory": mem}) for i in (1, 2)]
        objects.append(hypernode(rack, 1, nodes=[f"{rack}-n1", f"{rack}-n2"]))
    objects.append(hypernode("s1", 2, children=["s3", "s4"]))
    objects.append(hypernode("s2", 2, children=["s5", "s6"]))
    objects.append(hypernode("s0", 3, children=["s1", "s2"]))
    policy = {"name": "task1", "matchLabelKeys": ["volcano.sh/task-spec"]}
    objects.append(podgroup("pg1", 2, mode="hard", highest_tier=2, sub_group_policy=[policy]))
    for name in ("p1", "p2"):
        labels = {"volcano.sh/task-spec": "worker"}
        objects.append(pod(name, "pg1", {"cpu": 4, "memory": "4G"}, labels=labels))
    ssn = session(objects)
    job = ssn.jobs["default/pg1"]
    names = [*ssn.hypernodes]
    scores = ssn.hypernode_order_map(
        job, {n: ssn.nodes_in(n) for n in names}, job.sub_jobs["task1/worker"]
    )
    expected = {"s0": 25.0, "s1": 58.3, "s2": 45.8, "s3": 0.0, "s4": 100.0, "s5": 0.0}
    expected |= {"s6": 75.0, "<cluster-top-hypernode>": 25.0}
    assert {n: round(s, 1) for n, s in scores.items()} == expected


def test_node_scores_of_a_sub_job_task_follow_the_sub_jobs_allocated_hypernode() -> None:
    objects = gpu_cluster()
    rack = {**TP, "networkTopology": {"mode": "hard", "highestTierAllowed": 1}}
    objects.append(podgroup("job", 4, mode="hard", highest_tier=2, sub_group_policy=[rack]))
    placed = _worker("w0", "0")
    placed["spec"]["nodeName"] = "node-3"
    placed["status"]["phase"] = "Running"
    objects += [placed, _worker("w1", "0"), _worker("w2", "1"), _worker("w3", "1")]
    ssn = session(objects)
    plugin = _nta(ssn)
    nodes = ssn.node_list()
    partner = plugin.batch_node_order_fn(ssn.jobs["default/job"].tasks["default/w1"], nodes)
    # its SubJob sits in tor-2: 1 there plus the tie break (1 of the SubJob's 2 tasks is
    # there: +0.5), the LCA tier's score elsewhere in spine-1, 0 beyond
    assert partner["node-3"] == partner["node-4"] == 150.0
    assert partner["node-1"] < 100.0
    assert partner["node-5"] == 0.0
    fresh = plugin.batch_node_order_fn(ssn.jobs["default/job"].tasks["default/w2"], nodes)
    assert fresh == {}  # tp/1 has nothing placed: no topology score yet
