"""Volcano's per-job and per-stage scheduler metrics: job share, retries, stage durations.

The drf plugin exports ``volcano_job_share``, the gang plugin ``volcano_job_retry_counts`` and
``volcano_unschedule_task_count`` at session close; ``allocate`` records the ``Predicate`` and
``Scoring`` stages. Each cycle runs in process (the ``Simulator``); values are read from the
registry ``/metrics`` renders.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from prometheus_client import generate_latest

from tests.builders import pod_body, podgroup_body
from tests.dashboards import sampled_names
from volcano_py.metrics import REGISTRY, PlainCounter
from volcano_py.scheduler.cycle_metrics import forget_jobs
from volcano_py.scheduler.framework.registry import load_conf
from volcano_py.scheduler.simulator import Simulator

JSON = dict[str, Any]
GPU = "nvidia.com/gpu"
CONF = Path("examples/scheduler/volcano-chart-topology.conf").read_text()


def _cluster(name: str, min_member: int, pods: int) -> list[JSON]:
    """Two nodes of 2 GPUs; one gang of ``pods`` pods asking 2 GPUs each."""
    nodes = [
        {
            "kind": "Node",
            "metadata": {"name": n, "labels": {}},
            "status": {
                "allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110", GPU: "2"},
                "conditions": [{"type": "Ready", "status": "True"}],
            },
        }
        for n in ("n1", "n2")
    ]
    pg = podgroup_body(name, "jm", min_member)
    pg["kind"] = "PodGroup"
    members = []
    for i in range(pods):
        pod = pod_body(
            f"{name}-{i}",
            "jm",
            requests={GPU: "2", "cpu": "1"},
            annotations={"scheduling.k8s.io/group-name": name},
        )
        pod["kind"] = "Pod"
        members.append(pod)
    return [*nodes, pg, *members]


def _sim(name: str, min_member: int, pods: int) -> Simulator:
    sim = Simulator(_cluster(name, min_member, pods))
    sim.conf = load_conf(CONF, sim.plugins, sim.actions)
    return sim


def _value(name: str, **labels: str) -> float | None:
    return REGISTRY.get_sample_value(name, labels)


def test_a_placed_gang_exports_its_dominant_share_and_no_retry() -> None:
    sim = _sim("jm-fits", 2, 2)
    assert len(sim.run().bindings) == 2
    # the gang holds all 4 GPUs of the cluster: its dominant share is 1
    assert _value("volcano_job_share", job_ns="jm", job_id="jm-fits") == 1.0
    assert _value("volcano_unschedule_task_count", job_id="jm-fits") == 0
    assert _value("volcano_job_retry_counts", job_id="jm-fits") is None


def test_a_gang_that_cannot_fit_counts_a_retry_per_cycle_and_its_share_stays_0() -> None:
    sim = _sim("jm-short", 3, 3)  # 3 pods of 2 GPUs, 4 GPUs in all
    sim.cycle()
    assert _value("volcano_job_retry_counts", job_id="jm-short") == 1
    sim.cycle()
    assert _value("volcano_job_retry_counts", job_id="jm-short") == 2
    assert _value("volcano_unschedule_task_count", job_id="jm-short") == 3
    # nothing placed: the share series is there, at 0
    assert _value("volcano_job_share", job_ns="jm", job_id="jm-short") == 0.0
    text = generate_latest(REGISTRY).decode()
    # Volcano's exact sample name: no _total suffix
    assert 'volcano_job_retry_counts{job_id="jm-short"} 2.0' in text
    assert "volcano_job_retry_counts_total" not in sampled_names(text)


def test_a_deleted_podgroup_loses_its_job_series() -> None:
    _sim("jm-gone", 3, 3).cycle()
    assert _value("volcano_job_retry_counts", job_id="jm-gone") == 1
    forget_jobs(set())
    assert _value("volcano_job_retry_counts", job_id="jm-gone") is None
    assert _value("volcano_job_share", job_ns="jm", job_id="jm-gone") is None
    assert _value("volcano_unschedule_task_count", job_id="jm-gone") is None


def test_allocate_records_the_predicate_and_scoring_stages_once_per_trial() -> None:
    def count(stage: str) -> float:
        value = _value("volcano_scheduling_stage_duration_milliseconds_count", stage=stage)
        assert value is not None  # exported from the start, at 0
        return value

    before = {stage: count(stage) for stage in ("Predicate", "Scoring")}
    sim = _sim("jm-stages", 2, 2)
    sim.cycle()
    # one trial placed the gang: two tasks, two candidate nodes for the first -> one
    # observation per stage, not one per task or per node
    assert count("Predicate") == before["Predicate"] + 1
    assert count("Scoring") == before["Scoring"] + 1
    total = _value("volcano_scheduling_stage_duration_milliseconds_sum", stage="Predicate")
    assert total is not None
    assert total > 0


def test_a_labelled_plain_counter_refuses_the_wrong_labels_naming_itself() -> None:
    from prometheus_client import CollectorRegistry

    counter = PlainCounter("x_counts", "doc", CollectorRegistry(), ("job_id",))
    with pytest.raises(ValueError, match="volcano_x_counts"):
        counter.inc(1.0, ())
    counter.inc(2.0, ("a",))
    counter.remove(("a",))
    counter.remove(("a",))  # twice: nothing to remove, no error
    assert [s.value for m in counter.collect() for s in m.samples] == []
