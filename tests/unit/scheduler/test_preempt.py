"""preempt/reclaim: the tiered victim vote, each plugin's victim rule, the writer's eviction.

Topology cases (cheapest rack, non-preemptable, PodDisruptionBudget, fewest pods) are YAML
scenarios (``scenarios/preempt_*.yaml``); these pin the pieces they are built from.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.unit.scheduler.helpers import session
from tests.unit.scheduler.objects import hypernode, node, pod, podgroup, queue
from volcano_py.kube.errors import TooManyRequests
from volcano_py.kube.events import FakeRecorder
from volcano_py.metrics import REGISTRY
from volcano_py.scheduler.api.task_info import TaskInfo
from volcano_py.scheduler.framework.arguments import Arguments
from volcano_py.scheduler.framework.registry import load_conf
from volcano_py.scheduler.plugins.gang import gang_victims
from volcano_py.scheduler.plugins.network_topology_aware import NetworkTopologyAwarePlugin
from volcano_py.scheduler.scheduler import builtin_registries
from volcano_py.scheduler.simulator import Simulator
from volcano_py.scheduler.writer import KubeWriter, eviction_body

GPU = "nvidia.com/gpu"
REPO = Path(__file__).resolve().parents[3]


def _running(name: str, group: str, node_name: str, priority: int, **kw: Any) -> dict[str, Any]:
    return pod(name, group, {GPU: 1}, node_name=node_name, phase="Running", priority=priority, **kw)


def _tasks(ssn: Any, job: str) -> list[TaskInfo]:
    return sorted(ssn.jobs[job].tasks.values(), key=lambda t: t.key)


def _cluster() -> list[dict[str, Any]]:
    objects = [node("n1", {GPU: 8}), podgroup("low", 2, phase="Running"), podgroup("high", 1)]
    objects += [_running(f"low-{i}", "low", "n1", 10) for i in range(4)]
    objects.append(pod("high-0", "high", {GPU: 1}, priority=100))
    return objects


def test_gang_victims_keep_min_member_or_take_the_whole_gang() -> None:
    ssn = session(_cluster())
    low = _tasks(ssn, "default/low")
    # 4 ready, minMember 2: only 2 of 3 offered pods may go
    assert len(gang_victims(ssn.jobs, low[:3])) == 2
    # every ready pod offered: the whole gang may go
    assert len(gang_victims(ssn.jobs, low)) == 4


def test_tiered_vote_intersects_plugins_and_falls_through_an_empty_tier() -> None:
    conf = "tiers: [{plugins: [{name: priority}, {name: gang}]}, {plugins: [{name: conformance}]}]"
    ssn = session(_cluster(), conf)
    preemptor = _tasks(ssn, "default/high")[0]
    low = _tasks(ssn, "default/low")
    # priority permits all 4, gang 2 of 3 offered: the intersection is 2
    assert len(ssn.preemptable(preemptor, low[:3])) == 2
    # a lower-priority preemptor: priority answers nothing, so the tier ends without victims
    # and the next tier (conformance) decides alone
    assert len(ssn.preemptable(low[0], _tasks(ssn, "default/high") + low[1:2])) == 2


def test_priority_permits_only_lower_priority_victims() -> None:
    ssn = session(_cluster(), "tiers: [{plugins: [{name: priority}]}]")
    high = _tasks(ssn, "default/high")[0]
    low = _tasks(ssn, "default/low")
    assert ssn.preemptable(high, low) == low
    assert ssn.preemptable(low[0], [high]) == []
    # no vote in reclaim (Volcano's priority registers a preemptable function only)
    assert ssn.reclaimable(high, low) == []


def test_enable_preemptable_false_switches_a_plugin_off() -> None:
    conf = "tiers: [{plugins: [{name: priority, enablePreemptable: false}]}]"
    ssn = session(_cluster(), conf)
    assert ssn.preemptable(_tasks(ssn, "default/high")[0], _tasks(ssn, "default/low")) == []


def test_proportion_reclaims_only_from_a_queue_over_its_share() -> None:
    objects = [
        node("n1", {"cpu": 4}),
        queue("a", weight=1),
        queue("b", weight=1),
        podgroup("hog", 1, queue="a", phase="Running"),
        podgroup("want", 1, queue="b"),
    ]
    objects += [
        pod(f"hog-{i}", "hog", {"cpu": 1}, node_name="n1", phase="Running") for i in range(4)
    ]
    objects += [pod(f"want-{i}", "want", {"cpu": 1}) for i in range(2)]
    ssn = session(objects, "tiers: [{plugins: [{name: proportion}]}]")
    want = _tasks(ssn, "default/want")[0]
    hog = _tasks(ssn, "default/hog")
    # queue a holds 4 cpu, deserves 2: two pods may go, not more
    assert len(ssn.reclaimable(want, hog)) == 2
    # a pod of the reclaimer's own queue is never a reclaim victim
    assert ssn.reclaimable(hog[0], hog) == []


CONF = """
actions: "enqueue, allocate, {action}, backfill"
tiers:
- plugins: [{{name: priority}}, {{name: gang}}, {{name: conformance}}]
- plugins: [{{name: predicates}}, {{name: proportion}}]
"""


def _sim(objects: list[dict[str, Any]], action: str) -> Simulator:
    plugins, actions = builtin_registries()
    return Simulator(objects, load_conf(CONF.format(action=action), plugins, actions))


def _full_node_two_queues() -> list[dict[str, Any]]:
    objects = [
        node("n1", {GPU: 4}),
        queue("a", weight=1),
        queue("b", weight=1),
        podgroup("low-a", 1, queue="a", phase="Running"),
        podgroup("high-a", 2, queue="a", created="2026-01-02T00:00:00Z"),
    ]
    objects += [_running(f"low-a-{i}", "low-a", "n1", 10) for i in range(4)]
    objects += [pod(f"high-a-{i}", "high-a", {GPU: 1}, priority=100) for i in range(2)]
    return objects


@pytest.mark.parametrize("action", ["preempt", "gangpreempt"])
def test_classic_preempt_evicts_just_enough_lower_priority_pods_in_the_queue(action: str) -> None:
    result = _sim(_full_node_two_queues(), action).run()
    assert len(result.evictions) == 2
    assert set(result.evictions.values()) == {"default/high-a"}
    assert sorted(result.bindings) == ["default/high-a-0", "default/high-a-1"]


def test_preempt_never_crosses_queues_and_reclaim_does() -> None:
    objects = _full_node_two_queues()
    for o in objects:  # move the victims to queue b, over its share (deserved 2 of 4)
        if o["kind"] == "PodGroup" and o["metadata"]["name"] == "low-a":
            o["spec"]["queue"] = "b"
    assert _sim(objects, "preempt").run().evictions == {}
    result = _sim(objects, "reclaim").run()
    assert len(result.evictions) == 2
    assert sorted(result.bindings) == ["default/high-a-0", "default/high-a-1"]


def test_reclaim_never_takes_from_a_queue_that_is_not_reclaimable() -> None:
    objects = _full_node_two_queues()
    for o in objects:  # victims in queue b, over its share, but b says reclaimable: false
        if o["kind"] == "PodGroup" and o["metadata"]["name"] == "low-a":
            o["spec"]["queue"] = "b"
        if o["kind"] == "Queue" and o["metadata"]["name"] == "b":
            o["spec"]["reclaimable"] = False
    result = _sim(objects, "reclaim").run()
    assert result.evictions == {}
    assert result.bindings == {}


def test_preemptable_false_annotation_on_the_podgroup_protects_every_pod() -> None:
    objects = _full_node_two_queues()
    objects[3]["metadata"]["annotations"]["volcano.sh/preemptable"] = "false"
    result = _sim(objects, "preempt").run()
    assert result.evictions == {}
    assert result.bindings == {}


def test_nominated_hypernode_is_written_on_the_preemptor_podgroup() -> None:
    sim = _sim(_full_node_two_queues(), "preempt")
    cycle = sim.cycle()
    assert len(cycle.evictions) == 2
    pg = sim.cache.podgroup("default/high-a")
    assert pg is not None
    assert pg["metadata"]["annotations"]["volcano.sh/nominated-hypernode"] == "<cluster>"
    assert set(sim.writer.nominated) == {"default/high-a-0", "default/high-a-1"}


def test_evict_max_hypernodes_must_be_positive() -> None:
    args = Arguments("network-topology-aware", {"hypernode.gradient.evict.max-hypernodes": 0})
    with pytest.raises(ValueError, match="max-hypernodes"):
        NetworkTopologyAwarePlugin(args)


class _Client:
    def __init__(self, error: Exception | None = None) -> None:
        self.error = error
        self.calls: list[tuple[Any, ...]] = []

    def create(self, resource: Any, body: Any, namespace: Any = None, **kw: Any) -> Any:
        self.calls.append((body, namespace, kw))
        if self.error is not None:
            raise self.error
        return {}


def test_kube_writer_evicts_through_the_eviction_subresource_with_an_event() -> None:
    client, recorder = _Client(), FakeRecorder()
    writer = KubeWriter(client, recorder, workers=1)  # type: ignore[arg-type]
    try:
        victim = pod("v", "g", node_name="n1")
        assert writer.evict(victim, "preempt: evicted for PodGroup default/high") is None
    finally:
        writer.close()
    body, namespace, kw = client.calls[0]
    assert body == eviction_body(victim)
    assert body["apiVersion"] == "policy/v1"
    assert body["kind"] == "Eviction"
    assert kw == {"subresource_of": "v", "subresource": "eviction", "retry_throttled": False}
    assert namespace == "default"
    assert recorder.events == [
        ("Normal", "Preempted", "preempt: evicted for PodGroup default/high")
    ]


def test_kube_writer_reports_a_disruption_budget_refusal() -> None:
    client = _Client(TooManyRequests(429, "TooManyRequests", "Cannot evict pod"))
    recorder = FakeRecorder()
    writer = KubeWriter(client, recorder, workers=1)  # type: ignore[arg-type]
    try:
        error = writer.evict(pod("v", "g", node_name="n1"), "why")
    finally:
        writer.close()
    assert error is not None
    assert "TooManyRequests" in error
    assert recorder.events == []


def test_cluster_role_may_create_evictions() -> None:
    docs = list(yaml.safe_load_all((REPO / "manifests/base/rbac.yaml").read_text()))
    role = next(d for d in docs if d and d.get("kind") == "ClusterRole")
    rules = [r for r in role["rules"] if "pods/eviction" in r.get("resources", ())]
    assert rules
    assert "create" in rules[0]["verbs"]


def _scenario_files(tmp_path: Path, name: str) -> tuple[str, str]:
    from tests.unit.scheduler.objects import expand

    scenario = yaml.safe_load((Path(__file__).parent / "scenarios" / name).read_text())
    cluster, conf = tmp_path / "cluster.yaml", tmp_path / "conf.yaml"
    cluster.write_text(yaml.safe_dump_all(expand(scenario["cluster"])))
    conf.write_text(scenario["conf"])
    return str(cluster), str(conf)


def test_explain_lists_each_candidate_domain_with_victims_and_cost(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from volcano_py.cli import main

    cluster, conf = _scenario_files(tmp_path, "preempt_rack_cheapest.yaml")
    argv = ["explain", "--cluster", cluster, "--scheduler-conf", conf, "--job", "default/high"]
    assert main(argv) == 0
    domains = json.loads(capsys.readouterr().out)["evictions"]["preempt"]
    by_name = {d["hyperNode"]: d for d in domains}
    assert set(by_name) == {"rack-a", "rack-b"}
    assert by_name["rack-a"]["cost"] == {"pods": 8, "maxVictimPriority": 10, "gangs": 2}
    assert by_name["rack-b"]["cost"] == {"pods": 8, "maxVictimPriority": 20, "gangs": 1}
    assert len(by_name["rack-a"]["victims"]) == 8
    assert main([*argv, "-o", "text"]) == 0
    out = capsys.readouterr().out
    assert "preempt: 2 candidate domain(s)" in out
    assert "rack-a (tier 1, lower bound 8): feasible, evicts 8 pod(s) of 2 job(s)" in out


def test_simulate_json_lists_evictions_with_their_preemptor(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from volcano_py.cli import main

    cluster, conf = _scenario_files(tmp_path, "preempt_rack_cheapest.yaml")
    assert main(["simulate", "--cluster", cluster, "--scheduler-conf", conf]) == 0
    evictions = json.loads(capsys.readouterr().out)["evictions"]
    assert len(evictions) == 8
    assert set(evictions.values()) == {"default/high"}
    assert all(p.startswith(("default/l1-", "default/l2-")) for p in evictions)


def test_a_refused_eviction_stops_that_plan_and_the_next_cycle_picks_another_domain() -> None:
    from tests.unit.scheduler.objects import expand

    scenario = yaml.safe_load(
        (Path(__file__).parent / "scenarios" / "preempt_rack_cheapest.yaml").read_text()
    )
    plugins, actions = builtin_registries()
    sim = Simulator(expand(scenario["cluster"]), load_conf(scenario["conf"], plugins, actions))
    refused: list[str] = []

    def budget(victim: dict[str, Any]) -> str | None:
        """A PodDisruptionBudget over low-1 the planner cannot see (the API server's 429)."""
        if victim["metadata"]["name"].startswith("l1-"):
            refused.append(victim["metadata"]["name"])
            return (
                "TooManyRequests: Cannot evict pod as it would violate the pod's disruption budget"
            )
        return None

    sim.writer.refuse_eviction = budget
    result = sim.run()
    assert len(refused) == 1  # the first refusal stops that plan; the pod is then left out
    assert not any(p.startswith("default/l1-") for p in result.evictions)
    mid = {p for p in result.evictions if p.startswith("default/m-")}
    assert len(mid) == 8
    nodes = {n for p, n in result.bindings.items() if p.startswith("default/high-")}
    assert nodes == {"b-0", "b-1"}
    pg = sim.cache.podgroup("default/high")
    assert pg is not None
    assert "volcano.sh/nominated-hypernode" not in pg["metadata"]["annotations"]  # served


def test_a_new_leader_evicts_nothing_twice_while_victims_terminate() -> None:
    """A fresh scheduler (after a failover) sees the first leader's work in the API objects:
    victims terminating (``deletionTimestamp``) and the nominated HyperNode on the PodGroup.
    It evicts nothing more and places the gang once the victims are gone."""
    from tests.unit.scheduler.objects import expand

    scenario = yaml.safe_load(
        (Path(__file__).parent / "scenarios" / "preempt_rack_cheapest.yaml").read_text()
    )
    plugins, actions = builtin_registries()
    conf = load_conf(scenario["conf"], plugins, actions)
    objects = expand(scenario["cluster"])
    for obj in objects:
        meta = obj["metadata"]
        if obj["kind"] == "Pod" and meta["name"].startswith(("l1-", "l2-")):
            meta["deletionTimestamp"] = "2026-01-03T00:00:00Z"
        if obj["kind"] == "PodGroup" and meta["name"] == "high":
            meta["annotations"]["volcano.sh/nominated-hypernode"] = "rack-a"
            obj["status"] = {"phase": "Inqueue"}
    leader = Simulator(objects, conf)
    for _ in range(3):
        assert leader.cycle().evictions == {}
    assert not [p for p in leader.writer.bindings if p.startswith("default/high-")]
    for obj in objects:  # the kubelet finishes the terminations
        if obj["kind"] == "Pod" and "deletionTimestamp" in obj["metadata"]:
            leader.cache.delete_pod(obj)
    result = leader.run()
    assert result.evictions == {}
    nodes = {n for p, n in result.bindings.items() if p.startswith("default/high-")}
    assert nodes == {"a-0", "a-1"}
    pg = leader.cache.podgroup("default/high")
    assert pg is not None
    assert "volcano.sh/nominated-hypernode" not in pg["metadata"]["annotations"]


NOMINATED = "volcano.sh/nominated-hypernode"


def test_the_nomination_stays_until_the_gang_is_placed_then_is_dropped() -> None:
    sim = _sim(_full_node_two_queues(), "preempt")
    assert len(sim.cycle().evictions) == 2
    pg = sim.cache.podgroup("default/high-a")
    assert pg is not None
    assert pg["metadata"]["annotations"][NOMINATED] == "<cluster>"
    sim.run()
    assert {p for p, n in sim.writer.bindings.items() if p.startswith("default/high-a-")} == {
        "default/high-a-0",
        "default/high-a-1",
    }
    pg = sim.cache.podgroup("default/high-a")
    assert pg is not None
    assert NOMINATED not in pg["metadata"]["annotations"]


def _elastic_nominee(*, terminating: bool) -> list[dict[str, Any]]:
    """Job "el" (minMember 2, 3 pods) nominated rack-a: 2 of its pods run there, the third
    cannot fit anywhere; "old" in rack-a is terminating or already gone."""
    objects = [
        node("a-0", {GPU: 2}),
        node("b-0", {GPU: 1}),
        hypernode("rack-a", 1, nodes=["a-0"]),
        hypernode("rack-b", 1, nodes=["b-0"]),
        podgroup("el", 2, phase="Running", annotations={NOMINATED: "rack-a"}),
        podgroup("busy", 1, phase="Running"),
    ]
    objects += [_running(f"el-{i}", "el", "a-0", 100) for i in range(2)]
    objects.append(pod("el-2", "el", {GPU: 1}, priority=100))
    objects.append(_running("busy", "busy", "b-0", 100))
    if terminating:
        objects.append(podgroup("old", 1, phase="Running"))
        old = _running("old", "old", "a-0", 1)
        old["metadata"]["deletionTimestamp"] = "2026-01-03T00:00:00Z"
        objects.append(old)
    return objects


@pytest.mark.parametrize("terminating", [False, True])
def test_a_running_gang_drops_its_nomination_once_its_victims_are_gone(terminating: bool) -> None:
    """An elastic job whose extra pod fits nowhere must not hold rack-a for ever; while a
    victim there still terminates the nomination stays (nothing is evicted twice)."""
    sim = _sim(_elastic_nominee(terminating=terminating), "preempt")
    sim.cycle()
    pg = sim.cache.podgroup("default/el")
    assert pg is not None
    assert (NOMINATED in pg["metadata"]["annotations"]) is terminating


def test_a_nomination_of_a_hypernode_that_is_gone_is_dropped() -> None:
    objects = [
        node("n1", {GPU: 1}),
        podgroup("g", 2, phase="Inqueue", annotations={NOMINATED: "rack-gone"}),
        pod("g-0", "g", {GPU: 1}),
        pod("g-1", "g", {GPU: 1}),
    ]
    sim = _sim(objects, "preempt")
    sim.cycle()
    pg = sim.cache.podgroup("default/g")
    assert pg is not None
    assert NOMINATED not in pg["metadata"]["annotations"]


def test_capacity_reclaims_only_above_the_queue_deserved() -> None:
    objects = [
        node("n1", {"cpu": 4}),
        queue("a", deserved={"cpu": 1}),
        queue("b", deserved={"cpu": 3}),
        podgroup("hog", 1, queue="a", phase="Running"),
        podgroup("want", 1, queue="b"),
    ]
    objects += [
        pod(f"hog-{i}", "hog", {"cpu": 1}, node_name="n1", phase="Running") for i in range(4)
    ]
    objects.append(pod("want-0", "want", {"cpu": 1}))
    ssn = session(objects, "tiers: [{plugins: [{name: capacity}]}]")
    # queue a holds 4 cpu and deserves 1: three pods may go
    assert len(ssn.reclaimable(_tasks(ssn, "default/want")[0], _tasks(ssn, "default/hog"))) == 3


class _Patches:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def patch(self, *args: Any, **kw: Any) -> Any:
        self.calls.append((args, kw))
        return {}


def test_kube_writer_sets_nominated_node_name_on_the_status() -> None:
    client = _Patches()
    writer = KubeWriter(client, None, workers=1)  # type: ignore[arg-type]
    try:
        writer.nominate(pod("high-0", "high"), "n3")
    finally:
        writer.close()
    (args, kw) = client.calls[0]
    assert args[1:] == ("high-0", {"status": {"nominatedNodeName": "n3"}}, "default")
    assert kw["subresource"] == "status"


def test_preempt_records_volcanos_preemption_metrics() -> None:
    def value(name: str, labels: dict[str, str] | None = None) -> float:
        return REGISTRY.get_sample_value(name, labels or {}) or 0.0

    attempts = value("volcano_total_preemption_attempts")
    transactions = value("volcano_eviction_transactions_total", {"action": "preempt"})
    sim = _sim(_full_node_two_queues(), "preempt")
    sim.cycle()  # high-a starves; preempt picks its victims in this cycle
    assert value("volcano_total_preemption_attempts") == attempts + 1
    assert value("volcano_pod_preemption_victims") == 2
    assert value("volcano_eviction_transactions_total", {"action": "preempt"}) == transactions + 1
