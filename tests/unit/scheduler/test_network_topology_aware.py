"""network-topology-aware: arguments, gradients, hypernode and node scores, resource cache."""

from __future__ import annotations

import logging

import pytest

from tests.unit.scheduler.helpers import gpu_cluster, session
from tests.unit.scheduler.objects import hypernode, pod, podgroup
from volcano_py.scheduler.api.resource import Resource
from volcano_py.scheduler.framework.arguments import Arguments, ConfError
from volcano_py.scheduler.plugins.network_topology_aware import (
    NetworkTopologyAwarePlugin,
    _tier_weight_sum,
)


def _plugin(ssn: object) -> NetworkTopologyAwarePlugin:
    for plugin in ssn.plugins:  # type: ignore[attr-defined]
        if isinstance(plugin, NetworkTopologyAwarePlugin):
            return plugin
    raise AssertionError("plugin not in session")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({}, (1, {"cpu": 1, "memory": 1}, True, 0.8)),
        (
            {
                "weight": 2,
                "hypernode.binpack.cpu": 3,
                "hypernode.binpack.memory": 4,
                "hypernode.binpack.resources": "nvidia.com/gpu, example.com/foo",
                "hypernode.binpack.resources.nvidia.com/gpuxxx": 5,
                "hypernode.binpack.resources.example.com/foo": 6,
                "hypernode.binpack.normal-pod.enable": False,
                "hypernode.binpack.normal-pod.fading": 0,
            },
            (
                2,
                {"cpu": 3, "memory": 4, "nvidia.com/gpu": 1, "example.com/foo": 6},
                False,
                0.0,
            ),
        ),
        (
            {
                "weight": -1,
                "hypernode.binpack.cpu": -1,
                "hypernode.binpack.memory": -1,
                "hypernode.binpack.resources": "nvidia.com/gpu",
                "hypernode.binpack.resources.nvidia.com/gpu": -1,
                "hypernode.binpack.normal-pod.fading": -0.5,
            },
            (1, {"cpu": 1, "memory": 1, "nvidia.com/gpu": 1}, True, 0.8),
        ),
    ],
    ids=["defaults", "custom", "negative-fallbacks"],
)
def test_nta_arguments_follow_volcano_defaults_and_fallbacks(
    args: dict[str, object], expected: tuple[object, ...]
) -> None:
    plugin = NetworkTopologyAwarePlugin(Arguments("network-topology-aware", args))
    got = (plugin.global_weight, plugin.binpack_weights, plugin.normal_pod_enable, plugin.fading)
    assert got == expected


def test_nta_argument_fallback_is_logged_with_the_key(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        NetworkTopologyAwarePlugin(Arguments("network-topology-aware", {"weight": -3}))
    assert "weight=-3 is negative" in caplog.text


def test_nta_argument_of_wrong_type_fails_naming_key() -> None:
    with pytest.raises(ConfError, match=r"arguments\[hypernode.binpack.cpu\]: expected an integer"):
        NetworkTopologyAwarePlugin(
            Arguments("network-topology-aware", {"hypernode.binpack.cpu": "lots"})
        )


def _job_cluster(min_gpu: int, **pg: object) -> list[dict[str, object]]:
    objects = gpu_cluster()
    objects.append(podgroup("job", 1, min_resources={"nvidia.com/gpu": min_gpu}, **pg))  # type: ignore[arg-type]
    objects.append(pod("job-0", "job", {"nvidia.com/gpu": 1}))
    return objects


@pytest.mark.parametrize(
    ("min_gpu", "tier", "expected"),
    [
        (8, 2, [["tor-1", "tor-2", "tor-3", "tor-4"], ["spine-1", "spine-2"]]),
        (12, 2, [["spine-1", "spine-2"]]),
        (12, 1, []),
        (8, 1, [["tor-1", "tor-2", "tor-3", "tor-4"]]),
    ],
    ids=["fits-tor", "prefilter-drops-tors", "nothing-allowed-fits", "tier-cap"],
)
def test_gradient_keeps_eligible_hypernodes_per_tier(
    min_gpu: int, tier: int, expected: list[list[str]]
) -> None:
    ssn = session(_job_cluster(min_gpu, mode="hard", highest_tier=tier))
    job = ssn.jobs["default/job"]
    gradients = ssn.hypernode_gradient_for_job(job, ssn.tree.top)
    assert [sorted(hn.name for hn in g) for g in gradients] == expected


@pytest.mark.parametrize(
    ("pods", "min_member", "expected"),
    [
        ([1] * 12, 12, [["spine-1", "spine-2"]]),
        ([1] * 8, 8, [["tor-1", "tor-2", "tor-3", "tor-4"], ["spine-1", "spine-2"]]),
        ([8, 1, 1], 2, [["tor-1", "tor-2", "tor-3", "tor-4"], ["spine-1", "spine-2"]]),
        ([8, 8, 1], 2, [["spine-1", "spine-2"]]),
        ([1] * 20, 20, []),
    ],
    ids=["twelve-drop-tors", "eight-fit-tors", "two-smallest", "big-pair", "too-big"],
)
def test_gradient_prefilter_without_min_resources_uses_the_pods_requests(
    pods: list[int], min_member: int, expected: list[list[str]]
) -> None:
    objects = gpu_cluster()
    objects.append(podgroup("job", min_member, mode="hard", highest_tier=2))
    objects += [pod(f"job-{i}", "job", {"nvidia.com/gpu": g}) for i, g in enumerate(pods)]
    ssn = session(objects)
    gradients = ssn.hypernode_gradient_for_job(ssn.jobs["default/job"], ssn.tree.top)
    assert [sorted(hn.name for hn in g) for g in gradients] == expected


def test_gang_min_resources_counts_only_the_members_still_missing() -> None:
    objects = gpu_cluster()
    objects.append(podgroup("job", 3, mode="hard", highest_tier=2))
    objects.append(pod("job-0", "job", {"nvidia.com/gpu": 2}, node_name="node-1", phase="Running"))
    objects += [pod(f"job-{i}", "job", {"nvidia.com/gpu": i, "cpu": 4 - i}) for i in (1, 2, 3)]
    job = session(objects).jobs["default/job"]
    # two members missing: per resource the two smallest pending requests (gpu 1+2, cpu 1+2)
    assert job.gang_min_resources().to_list() == {"cpu": "3", "nvidia.com/gpu": "3"}


def test_gang_min_resources_prefers_the_podgroups_min_resources() -> None:
    job = session(_job_cluster(7, mode="hard", highest_tier=2)).jobs["default/job"]
    assert job.gang_min_resources().to_list() == {"nvidia.com/gpu": "7"}


def test_gradient_uses_future_idle_when_idle_is_short() -> None:
    objects = _job_cluster(8, mode="hard", highest_tier=1)
    objects.append(
        {
            **pod("leaving", None, {"nvidia.com/gpu": 4}, node_name="node-1", phase="Running"),
        }
    )
    objects[-1]["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    ssn = session(objects)
    gradients = ssn.hypernode_gradient_for_job(ssn.jobs["default/job"], ssn.tree.top)
    assert "tor-1" in [hn.name for hn in gradients[0]]


def test_gradient_search_root_is_highest_allowed_ancestor_of_allocated() -> None:
    ssn = session(_job_cluster(8, mode="hard", highest_tier=2))
    job = ssn.jobs["default/job"]
    job.allocated_hypernode = "tor-3"
    names = [[hn.name for hn in g] for g in ssn.hypernode_gradient_for_job(job, ssn.tree.top)]
    assert names == [["tor-3", "tor-4"], ["spine-2"]]


def test_gradient_soft_mode_climbs_from_tier_1_up_to_the_virtual_top() -> None:
    # Volcano HEAD (#5206): soft is hard bounded by the virtual top tier (highestTier ignored)
    ssn = session(_job_cluster(8, mode="soft", highest_tier=1))
    gradients = ssn.hypernode_gradient_for_job(ssn.jobs["default/job"], ssn.tree.top)
    assert [sorted(hn.name for hn in g) for g in gradients] == [
        ["tor-1", "tor-2", "tor-3", "tor-4"],
        ["spine-1", "spine-2"],
        ["<cluster-top-hypernode>"],
    ]


def test_gradient_soft_mode_prefilter_skips_tiers_too_small() -> None:
    ssn = session(_job_cluster(24, mode="soft"))
    gradients = ssn.hypernode_gradient_for_job(ssn.jobs["default/job"], ssn.tree.top)
    assert [[hn.name for hn in g] for g in gradients] == [["<cluster-top-hypernode>"]]


GPU_CONF = """
actions: "enqueue, allocate"
tiers:
- plugins: [{name: priority}, {name: gang}]
- plugins:
  - {name: predicates}
  - {name: nodeorder}
  - name: network-topology-aware
    arguments: {hypernode.binpack.resources: nvidia.com/gpu}
"""


def test_hypernode_score_ties_broken_by_task_count_when_nothing_weighted() -> None:
    objects = _job_cluster(1, mode="hard", highest_tier=1)
    objects.append(pod("job-1", "job", {"nvidia.com/gpu": 1}, node_name="node-3", phase="Running"))
    ssn = session(objects)
    job = ssn.jobs["default/job"]
    scores = ssn.hypernode_order_map(job, {n: ssn.nodes_in(n) for n in ("tor-1", "tor-2")})
    # GPUs carry no binpack weight by default: both score 0, tie broken by the share of the
    # job's tasks inside (tor-2 holds 1 of 2) -> 0.5 x 100.
    assert scores == {"tor-1": 0.0, "tor-2": 50.0}


def test_hypernode_score_binpacks_weighted_resources() -> None:
    objects = _job_cluster(1, mode="hard", highest_tier=1)
    objects.append(pod("job-1", "job", {"nvidia.com/gpu": 1}, node_name="node-3", phase="Running"))
    ssn = session(objects, GPU_CONF)
    job = ssn.jobs["default/job"]
    scores = ssn.hypernode_order_map(job, {n: ssn.nodes_in(n) for n in ("tor-1", "tor-2")})
    # request = the pending task's 1 GPU (the running one is already in tor-2's used):
    # tor-2 (1 used) -> 2/8, tor-1 -> 1/8; no tie; x100. Volcano counts the running one twice.
    assert scores == {"tor-1": pytest.approx(12.5), "tor-2": pytest.approx(25.0)}


def test_hypernode_score_is_zero_when_request_overflows() -> None:
    ssn = session(_job_cluster(1, mode="hard", highest_tier=1))
    job = ssn.jobs["default/job"]
    for i in range(2, 10):
        job.tasks[f"default/x-{i}"] = job.tasks["default/job-0"].clone()
    scores = ssn.hypernode_order_map(job, {"tor-1": ssn.nodes_in("tor-1")})
    assert scores["tor-1"] == 0.0


def test_node_score_follows_lca_tier_of_allocated_hypernode() -> None:
    ssn = session(_job_cluster(1, mode="hard", highest_tier=2))
    job = ssn.jobs["default/job"]
    job.allocated_hypernode = "tor-1"
    task = job.pending_tasks()[0]
    nodes = [ssn.nodes[n] for n in ("node-1", "node-3", "node-5")]
    scores = _plugin(ssn).batch_node_order_fn(task, nodes)
    # tiers 1..3: same ToR -> 1, LCA spine (tier 2) -> 0.5, LCA top (tier 3) -> 0; x100.
    assert scores == {"node-1": 100.0, "node-3": 50.0, "node-5": 0.0}


def test_normal_pod_score_fades_by_tier() -> None:
    objects = gpu_cluster()
    objects.append(podgroup("plain", 1))
    objects.append(pod("plain-0", "plain", {"nvidia.com/gpu": 2}))
    objects.append(pod("busy", None, {"nvidia.com/gpu": 4}, node_name="node-1", phase="Running"))
    ssn = session(objects, GPU_CONF)
    task = ssn.jobs["default/plain"].pending_tasks()[0]
    scores = _plugin(ssn).batch_node_order_fn(task, [ssn.nodes["node-2"], ssn.nodes["node-5"]])
    # fading 0.8: weights 1, 0.8, 0.64 for tiers 1..3 (top holds all 32 GPUs, 4 used).
    w = 1 + 0.8 + 0.64
    node2 = (1 * 6 / 8 + 0.8 * 6 / 16 + 0.64 * 6 / 32) / w
    node5 = (1 * 2 / 8 + 0.8 * 2 / 16 + 0.64 * 6 / 32) / w
    assert scores["node-2"] == pytest.approx(100 * node2)
    assert scores["node-5"] == pytest.approx(100 * node5)


def _plain_pod_session(spine_tier: int) -> object:
    objects = [o for o in gpu_cluster() if o["metadata"]["name"] not in ("spine-1", "spine-2")]
    objects.append(hypernode("spine-1", spine_tier, children=["tor-1", "tor-2"]))
    objects.append(hypernode("spine-2", spine_tier, children=["tor-3", "tor-4"]))
    objects.append(podgroup("plain", 1))
    objects.append(pod("plain-0", "plain", {"nvidia.com/gpu": 2}))
    objects.append(pod("busy", None, {"nvidia.com/gpu": 4}, node_name="node-1", phase="Running"))
    return session(objects, GPU_CONF)


def test_normal_pod_score_counts_a_missing_tier_as_full_like_volcano() -> None:
    ssn = _plain_pod_session(spine_tier=4)  # tiers 1, 4 and the virtual top 5
    task = ssn.jobs["default/plain"].pending_tasks()[0]  # type: ignore[attr-defined]
    scores = _plugin(ssn).batch_node_order_fn(task, [ssn.nodes["node-2"]])  # type: ignore[attr-defined]
    # Volcano loops tiers 1..5: tiers 2 and 3 hold nothing and score 1.
    weights = {t: 0.8 ** (t - 1) for t in range(1, 6)}
    per_tier = {1: 6 / 8, 2: 1.0, 3: 1.0, 4: 6 / 16, 5: 6 / 32}
    expected = sum(weights[t] * per_tier[t] for t in weights) / sum(weights.values())
    assert scores["node-2"] == pytest.approx(100 * expected)


@pytest.mark.parametrize(("low", "high"), [(1, 10**9), (0, 2**63 - 1)], ids=["1e9", "int64"])
def test_normal_pod_score_cost_does_not_grow_with_the_distance_between_tiers(
    low: int, high: int
) -> None:
    # The tree quarantines such tiers; the plugin must cope anyway (Volcano's loop over every
    # integer between them would not finish within the unit timeout).
    ssn = _plain_pod_session(spine_tier=2)
    plugin = _plugin(ssn)
    task = ssn.jobs["default/plain"].pending_tasks()[0]  # type: ignore[attr-defined]
    near = plugin.batch_node_order_fn(task, [ssn.nodes["node-2"]])  # type: ignore[attr-defined]
    plugin.min_tier, plugin.max_tier = low, high
    far = plugin.batch_node_order_fn(task, [ssn.nodes["node-2"]])  # type: ignore[attr-defined]
    total = (0.8 ** (low - 1) - 0.8**high) / 0.2
    changed = 1 * (6 / 8 - 1) + 0.8 * (6 / 16 - 1) + 0.64 * (6 / 32 - 1)
    assert far["node-2"] == pytest.approx(100 * (total + changed) / total)
    assert near != far


@pytest.mark.parametrize(
    ("fading", "low", "high", "expected"),
    [(0.8, 1, 3, 2.44), (1.0, 2, 5, 4.0), (0.0, 0, 3, 1.0), (2.0, 1, 3, 7.0), (0.5, 3, 2, 0.0)],
    ids=["fading", "one", "zero-skips-negative-powers", "growing", "empty"],
)
def test_tier_weight_sum_is_the_geometric_series(
    fading: float, low: int, high: int, expected: float
) -> None:
    assert _tier_weight_sum(fading, low, high) == pytest.approx(expected)


def test_resource_cache_follows_allocate_and_discard_exactly() -> None:
    ssn = session(_job_cluster(1, mode="hard", highest_tier=2))
    plugin = _plugin(ssn)
    before = {hn: s.used.clone() for hn, s in plugin.resource_cache.items()}
    task = ssn.jobs["default/job"].pending_tasks()[0]
    stmt = ssn.statement()
    stmt.allocate(task, "node-3")
    assert plugin.resource_cache["tor-2"].used == Resource(scalars={"nvidia.com/gpu": 1000})
    assert plugin.resource_cache["spine-1"].used == Resource(scalars={"nvidia.com/gpu": 1000})
    assert plugin.resource_cache["tor-1"].used == Resource()
    stmt.discard()
    assert {hn: s.used for hn, s in plugin.resource_cache.items()} == before


def test_a_podgroup_with_negative_min_resources_is_an_invalid_job_naming_the_field() -> None:
    objects = gpu_cluster()
    objects.append(podgroup("neg", 1, min_resources={"nvidia.com/gpu": -3}))
    objects.append(pod("neg-0", "neg", {"nvidia.com/gpu": 1}))
    ssn = session(objects, GPU_CONF)
    job = ssn.jobs["default/neg"]
    assert job.invalid == 'spec.minResources[nvidia.com/gpu]: Invalid value: "-3": must be >= 0'
