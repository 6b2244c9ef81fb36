"""Volcano's metric names, units and buckets, and the dashboards' names, without a socket.

The integration test ``tests/integration/scheduler/test_metrics_scrape.py`` scrapes ``/metrics``
of a real scheduler; this one runs the same cycle in process (the ``Simulator``) and renders
the registry the ops server serves.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from tests.builders import exact, hypernode_body, pod_body, podgroup_body
from tests.dashboards import dashboard_metric_names, sampled_names
from volcano_py.metrics import REGISTRY, exponential_range, render
from volcano_py.scheduler.capacity_metrics import export_capacity
from volcano_py.scheduler.framework.registry import load_conf
from volcano_py.scheduler.plugins.support.queue_metrics import (
    export_queue_infos,
    set_queue_resource,
)
from volcano_py.scheduler.simulator import Simulator

JSON = dict[str, Any]
GPU = "nvidia.com/gpu"
CONF = Path("examples/scheduler/volcano-chart-topology.conf").read_text()


def _node(name: str, rack: str) -> JSON:
    return {
        "kind": "Node",
        "metadata": {"name": name, "labels": {"rack": rack}},
        "status": {
            "allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110", GPU: "2"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def _cluster() -> list[JSON]:
    queue = {
        "kind": "Queue",
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "metadata": {"name": "mq"},
        "spec": {"weight": 2, "capability": {"cpu": "8", GPU: "4"}},
    }
    pg = podgroup_body("gang", "ns", 2, queue="mq", min_resources={GPU: "4"})
    pg["kind"] = "PodGroup"
    pg["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    pods = []
    for i in range(2):
        pod = pod_body(
            f"gang-{i}",
            "ns",
            requests={GPU: "2", "cpu": "1"},
            annotations={"scheduling.k8s.io/group-name": "gang"},
        )
        pod["kind"] = "Pod"
        pod["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
        pods.append(pod)
    nodes = [_node("n1", "a"), _node("n2", "b")]
    racks = [hypernode_body(f"mq-rack-{r}", 1, [exact(n)]) for r, n in (("a", "n1"), ("b", "n2"))]
    return [*nodes, *racks, queue, pg, *pods]


def _scheduled() -> tuple[Simulator, str]:
    sim = Simulator(_cluster())
    sim.conf = load_conf(CONF, sim.plugins, sim.actions)
    result = sim.run()
    assert len(result.bindings) == 2
    export_queue_infos(sim.cache.queue_infos())
    export_capacity(sim.cache.snapshot(), set())
    return sim, render(REGISTRY).decode()


def test_a_cycle_exports_every_name_volcanos_dashboards_and_ours_query() -> None:
    _, text = _scheduled()
    names = sampled_names(text)
    wanted = [
        line.strip()
        for line in Path("tests/data/volcano_dashboard_metrics.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert [n for n in wanted if n not in names] == []
    ours = dashboard_metric_names(Path("manifests/monitoring/volcano-py-dashboard.json"))
    assert len(ours) > 15
    assert [n for n in sorted(ours) if n not in names] == []
    # the old microsecond names are gone; a plain counter keeps Volcano's exact name
    assert "volcano_action_scheduling_latency_microseconds_bucket" not in names
    assert "volcano_total_preemption_attempts" in names
    assert "volcano_total_preemption_attempts_total" not in names


def test_queue_series_are_volcanos_units_and_the_job_series_carry_its_labels() -> None:
    _scheduled()

    def value(name: str, **labels: str) -> float | None:
        return REGISTRY.get_sample_value(name, labels)

    assert value("volcano_queue_allocated_milli_cpu", queue_name="mq") == 2000
    assert value("volcano_queue_allocated_scalar_resources", queue_name="mq", resource=GPU) == 4000
    assert value("volcano_queue_capacity_scalar_resources", queue_name="mq", resource=GPU) == 4000
    assert value("volcano_queue_weight", queue_name="mq") == 2
    assert value("volcano_queue_pod_group_running_count", queue_name="mq") is not None
    assert value("volcano_queue_share", queue_name="mq") is not None
    # ours: the queue's state, 1 for the one it is in
    assert value("volcano_queue_state", queue_name="mq", state="Open") == 1
    assert value("volcano_queue_state", queue_name="mq", state="Closed") == 0
    # an empty queue is there at 0, not missing
    assert value("volcano_queue_allocated_milli_cpu", queue_name="default") == 0
    duration = value(
        "volcano_e2e_job_scheduling_duration", job_name="gang", queue="mq", job_namespace="ns"
    )
    assert duration is not None
    assert duration > 1000 * 3600  # created 2026-01-01
    # both racks are full of GPUs: their free GPU series exist, at 0
    for rack in ("mq-rack-a", "mq-rack-b"):
        free = value("volcano_hypernode_free_resource", hypernode=rack, tier="1", resource=GPU)
        assert free == 0


def test_a_scalar_a_queue_stops_reporting_drops_to_zero_and_a_deleted_queue_disappears() -> None:
    set_queue_resource("request", "gone-q", {"cpu": 500.0, "example.com/fpga": 2000.0})
    set_queue_resource("request", "gone-q", {"cpu": 500.0})
    labels = {"queue_name": "gone-q", "resource": "example.com/fpga"}
    assert REGISTRY.get_sample_value("volcano_queue_request_scalar_resources", labels) == 0
    export_queue_infos({})
    assert REGISTRY.get_sample_value("volcano_queue_request_scalar_resources", labels) is None
    assert (
        REGISTRY.get_sample_value("volcano_queue_request_milli_cpu", {"queue_name": "gone-q"})
        is None
    )


def test_every_sample_is_under_a_type_line_of_its_own_family() -> None:
    _, text = _scheduled()
    typed = {
        line.split()[2]: line.split()[3] for line in text.splitlines() if line.startswith("# TYPE")
    }
    suffixes = ("", "_bucket", "_sum", "_count", "_created")
    untyped = sorted(
        {
            name
            for name in sampled_names(text)
            if not any(name.endswith(s) and name[: len(name) - len(s)] in typed for s in suffixes)
        }
    )
    assert untyped == []
    assert typed["volcano_total_preemption_attempts"] == "counter"
    assert typed["volcano_job_retry_counts"] == "counter"


def test_exponential_range_matches_prometheus_go_bounds() -> None:
    buckets = exponential_range(1, 2000, 20)
    assert len(buckets) == 20
    assert buckets[0] == 1
    assert math.isclose(buckets[-1], 2000)
    assert math.isclose(buckets[1], 2000 ** (1 / 19))
