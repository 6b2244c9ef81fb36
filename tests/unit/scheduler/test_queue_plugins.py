"""Plugins of Volcano's chart config: binpack, drf, conformance, overcommit, proportion.

Expectations ported from Volcano's tests where it has them (binpack_test.go ``TestNode``;
proportion's weight split), each re-derived by hand in the comments.
"""

from __future__ import annotations

import pytest

from tests.unit.scheduler.helpers import session
from tests.unit.scheduler.objects import node, pod, podgroup, queue
from volcano_py.api.queue import Queue
from volcano_py.scheduler.api.queue_info import QueueInfo
from volcano_py.scheduler.framework.arguments import Arguments, ConfError
from volcano_py.scheduler.plugins.binpack import BinpackPlugin
from volcano_py.scheduler.plugins.conformance import victims
from volcano_py.scheduler.plugins.overcommit import OvercommitPlugin
from volcano_py.scheduler.plugins.proportion import deal_by_weight
from volcano_py.scheduler.plugins.support.queue_attr import QueueAttr

BINPACK_ARGS = {
    "binpack.weight": 10,
    "binpack.cpu": 2,
    "binpack.memory": 3,
    "binpack.resources": "nvidia.com/gpu, example.com/foo",
    "binpack.resources.nvidia.com/gpu": 7,
    "binpack.resources.example.com/foo": 8,
}


def test_binpack_scores_match_volcano_test_node() -> None:
    objects = [
        node("n1", {"cpu": 2, "memory": "4Gi"}),
        node("n2", {"cpu": 4, "memory": "16Gi", "nvidia.com/gpu": 4}),
        node("n3", {"cpu": 2, "memory": "4Gi", "example.com/foo": 16}),
        podgroup("pg1", 0, namespace="c1"),
        pod(
            "p1",
            "pg1",
            {"cpu": 1, "memory": "1Gi"},
            namespace="c1",
            node_name="n1",
            phase="Running",
        ),
        pod("p2", "pg1", {"cpu": "1.5"}, namespace="c1", node_name="n3", phase="Running"),
        pod("p3", "pg1", {"cpu": 2, "memory": "10Gi", "nvidia.com/gpu": 2}, namespace="c1"),
        pod("p4", "pg1", {"cpu": 3, "memory": "4Gi", "example.com/foo": 3}, namespace="c1"),
    ]
    ssn = session(objects)
    plugin = BinpackPlugin(Arguments("binpack", BINPACK_ARGS))
    tasks = ssn.jobs["c1/pg1"].tasks
    expected = {
        # (1+1)/2*2 + (1+1)/4*3 = 3.5 over weight 5, x 100 x 10
        "c1/p1": {"n1": 700, "n2": 137.5, "n3": 0},
        "c1/p2": {"n1": 0, "n2": 375, "n3": 0},
        # 2/4*2 + 10/16*3 + 2/4*7 = 6.375 over 12
        "c1/p3": {"n1": 0, "n2": 531.25, "n3": 0},
        # n2 has no example.com/foo: 0 for it, its weight 8 still counts: 2.25 over 13
        "c1/p4": {"n1": 0, "n2": 173.076923076, "n3": 0},
    }
    for uid, scores in expected.items():
        for name, score in scores.items():
            got = plugin.score(tasks[uid], ssn.nodes[name])
            assert got == pytest.approx(score, abs=1e-6), (uid, name, got)


def test_binpack_rejects_negative_weight() -> None:
    with pytest.raises(ConfError, match=r"arguments\[binpack.cpu\]: must not be negative"):
        BinpackPlugin(Arguments("binpack", {"binpack.cpu": -1}))


def test_overcommit_factor_below_one_is_refused() -> None:
    with pytest.raises(ConfError, match="overcommit-factor"):
        OvercommitPlugin(Arguments("overcommit", {"overcommit-factor": 0.5}))


def test_conformance_keeps_critical_pods_out_of_evictions() -> None:
    objects = [
        node("n1", {"cpu": 8}),
        podgroup("pg", 1),
        pod("sys", "pg", {"cpu": 1}, namespace="kube-system", node_name="n1", phase="Running"),
        pod("user", "pg", {"cpu": 1}, node_name="n1", phase="Running"),
        pod("crit", "pg", {"cpu": 1}, node_name="n1", phase="Running"),
    ]
    objects[-1]["spec"]["priorityClassName"] = "system-node-critical"
    objects.append(podgroup("pg", 1, namespace="kube-system"))
    ssn = session(objects, "tiers: [{plugins: [{name: gang}, {name: conformance}]}]")
    tasks = sorted((t for job in ssn.jobs.values() for t in job.tasks.values()), key=str)
    assert len(tasks) == 3
    assert [t.name for t in victims(tasks)] == ["user"]
    assert [t.name for t in ssn.evictable(tasks)] == ["user"]


def test_drf_orders_the_job_with_the_smaller_dominant_share_first() -> None:
    objects = [
        node("n1", {"cpu": 10, "memory": "10Gi"}),
        podgroup("big", 1, created="2026-01-01T00:00:00Z"),
        podgroup("small", 1, created="2026-01-02T00:00:00Z"),
        pod("b0", "big", {"cpu": 5}, node_name="n1", phase="Running"),
        pod("b1", "big", {"cpu": 1}),
        pod("s0", "small", {"memory": "1Gi"}, node_name="n1", phase="Running"),
        pod("s1", "small", {"cpu": 1}),
    ]
    ssn = session(objects, "tiers: [{plugins: [{name: drf}, {name: gang}]}]")
    jobs = sorted(ssn.jobs.values(), key=ssn.job_order_key())
    # big holds 5/10 cpu (0.5), small 1/10 memory (0.1): small first despite being younger
    assert [j.name for j in jobs] == ["small", "big"]


def _attr(
    name: str, weight: int, request_cpu: float, capability: dict[str, str] | None = None
) -> QueueAttr:
    spec: dict[str, object] = {"weight": weight}
    if capability:
        spec["capability"] = capability
    attr = QueueAttr(QueueInfo(Queue.from_dict({"metadata": {"name": name}, "spec": spec})))
    attr.request = {"cpu": request_cpu}
    if attr.capability is not None:
        attr.real_capability = dict(attr.capability)
    return attr


@pytest.mark.parametrize(
    ("queues", "deserved"),
    [
        # weights 1:3 over 8 cpu, both asking for everything: 2 and 6
        ([("q1", 1, 8000.0, None), ("q2", 3, 8000.0, None)], {"q1": 2000, "q2": 6000}),
        # q1 asks for only 1 cpu: it is met in round one; the rest flows to q2 (capped by request)
        ([("q1", 1, 1000.0, None), ("q2", 1, 8000.0, None)], {"q1": 1000, "q2": 7000}),
        # q2 capped at 3 cpu by capability: q1 gets the remainder in later rounds
        ([("q1", 1, 8000.0, None), ("q2", 1, 8000.0, {"cpu": "3"})], {"q1": 5000, "q2": 3000}),
    ],
    ids=["weights-1-3", "small-request-frees-share", "capability-caps"],
)
def test_proportion_water_fills_by_weight(
    queues: list[tuple[str, int, float, dict[str, str] | None]], deserved: dict[str, float]
) -> None:
    attrs = [_attr(*q) for q in queues]
    deal_by_weight(attrs, {"cpu": 8000.0})
    assert {a.name: a.deserved.get("cpu", 0.0) for a in attrs} == pytest.approx(deserved)


def test_queue_status_counts_and_allocated() -> None:
    objects = [
        node("n1", {"cpu": 8}),
        queue("q", weight=2),
        podgroup("run", 1, queue="q", phase="Running"),
        podgroup("wait", 1, queue="q"),
        pod("r", "run", {"cpu": 2}, node_name="n1", phase="Running"),
        pod("w", "wait", {"cpu": 1}),
    ]
    ssn = session(objects)
    status = ssn.queues["q"].status()
    assert status == {
        "pending": 1,
        "running": 1,
        "inqueue": 0,
        "unknown": 0,
        "completed": 0,
        "allocated": {"cpu": "2"},
    }
    assert ssn.queues["default"].status()["running"] == 0


@pytest.mark.parametrize(
    ("min_resources", "enqueueable"),
    [
        # 2 cpu/2G, Inqueue (counted once at open) and announced again: 4 + 2 <= 6 x 1.2
        ({"cpu": "2000m", "memory": "2G"}, True),
        # 20 cpu > 7.2
        ({"cpu": "20000m", "memory": "20G"}, False),
        # no minResources: best effort, always
        (None, True),
    ],
    ids=["normal", "too-large", "no-min-resources"],
)
def test_overcommit_gate_ported_from_volcano(
    min_resources: dict[str, str] | None, enqueueable: bool
) -> None:
    from volcano_py.scheduler.plugins.overcommit import OvercommitGate

    objects = [
        node("n1", {"cpu": 2, "memory": "4Gi"}),
        node("n2", {"cpu": 4, "memory": "16Gi"}),
        podgroup("pg", 2, namespace="test-namespace", phase="Inqueue", min_resources=min_resources),
    ]
    ssn = session(objects)
    gate = OvercommitGate(ssn, 1.2)
    job = ssn.jobs["test-namespace/pg"]
    gate.enqueued(job)
    assert (gate.reject(job) is None) is enqueueable
