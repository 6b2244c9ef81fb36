"""``/metrics`` after a real scheduling run carries every name Volcano's dashboards query.

The scheduler runs Volcano's chart conf against the control plane; a gang is placed in a
Queue with a capability; then the ops server's ``/metrics`` is scraped over a socket and
every name of ``tests/data/volcano_dashboard_metrics.txt`` (extracted from Volcano's chart
``grafana.yaml``) and every name our own dashboard (``manifests/monitoring/``) queries must
have at least one sample. Free resources all taken are exported as 0. The run's job carries
drf's share and gang's unscheduled-task count; the Predicate, Scoring and Bind stages were
observed.
"""

from __future__ import annotations

import re
import urllib.request
import uuid
from collections.abc import Callable
from pathlib import Path

from tests.dashboards import dashboard_metric_names, sampled_names
from tests.integration.scheduler.conftest import Topology, two_spines_of_two_racks, wait_for
from tests.integration.scheduler.test_queues import CHART_CONF, _job, queues  # noqa: F401
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.ops import OpsServer

DASHBOARD_NAMES = Path("tests/data/volcano_dashboard_metrics.txt")
OUR_DASHBOARD = Path("manifests/monitoring/volcano-py-dashboard.json")


def test_metrics_after_a_scheduling_run_cover_volcanos_dashboards(
    client: KubeClient,
    namespace: str,
    topology: Topology,
    run_scheduler: Callable[..., Callable[[], object]],
    queues: Callable[..., str],  # noqa: F811
) -> None:
    two_spines_of_two_racks(topology)
    queue = queues("metrics", weight=1, capability={topology.gpu: "16", "cpu": "8"})
    run_scheduler(CHART_CONF)
    name = f"m-{uuid.uuid4().hex[:5]}"
    _job(client, namespace, topology, name, queue, 16)  # 16 x 1 GPU: every rack full

    def bound() -> bool:
        pods = client.list(R.PODS, namespace)["items"]
        return sum(1 for p in pods if p["spec"].get("nodeName")) == 16

    wait_for(bound, timeout=60)
    ops = OpsServer("127.0.0.1", 0, healthy=lambda: [], ready=lambda: [])
    ops.start()
    try:
        zero_gpu = re.compile(  # labels in any order
            r"^volcano_hypernode_free_resource\{"
            rf'(?=[^}}]*hypernode="{topology.prefix}-rack-)(?=[^}}]*tier="1")'
            rf'(?=[^}}]*resource="{re.escape(topology.gpu)}")[^}}]*\}} 0\.0$',
            re.MULTILINE,
        )

        last: dict[str, str] = {"text": ""}

        def scraped() -> str | None:
            url = f"http://127.0.0.1:{ops.port}/metrics"
            with urllib.request.urlopen(url, timeout=5) as r:
                last["text"] = r.read().decode()
            # queue series follow each cycle; the capacity gauges every EXPORT_INTERVAL_S
            queue_line = f'volcano_queue_pod_group_running_count{{queue_name="{queue}"}} 1.0'
            text = last["text"]
            return text if queue_line in text and zero_gpu.search(text) else None

        # a rack whose GPUs are all taken exports its free GPUs as 0 (it used to be dropped)
        try:
            text = wait_for(scraped, timeout=40)
        except AssertionError:
            mine = [
                line
                for line in last["text"].splitlines()
                if queue in line or topology.prefix in line
            ]
            raise AssertionError("\n".join(mine)) from None
    finally:
        ops.stop()
    names = sampled_names(text)
    wanted = [
        line.strip()
        for line in DASHBOARD_NAMES.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert len(wanted) > 20
    assert [n for n in wanted if n not in names] == []
    ours = dashboard_metric_names(OUR_DASHBOARD)
    assert [n for n in sorted(ours) if n not in names] == []
    # this run's series carry the job and queue
    assert re.search(  # labels in any order
        r"^volcano_e2e_job_scheduling_duration\{"
        rf'(?=[^}}]*job_name="{name}")(?=[^}}]*queue="{queue}")'
        rf'(?=[^}}]*job_namespace="{namespace}")[^}}]*\}} \d',
        text,
        re.MULTILINE,
    )
    assert any(
        line.startswith("volcano_queue_capacity_scalar") and f'queue_name="{queue}"' in line
        for line in text.splitlines()
    )
    share = re.search(  # labels in any order
        rf'^volcano_job_share\{{(?=[^}}]*job_ns="{namespace}")(?=[^}}]*job_id="{name}")'
        r"[^}]*\} (\S+)$",
        text,
        re.MULTILINE,
    )
    assert share is not None
    assert float(share.group(1)) > 0  # 16 GPUs held
    assert f'volcano_unschedule_task_count{{job_id="{name}"}} 0.0' in text
    for stage in ("Predicate", "Scoring", "Bind"):
        count = re.search(
            rf'^volcano_scheduling_stage_duration_milliseconds_count\{{stage="{stage}"\}} (\S+)$',
            text,
            re.MULTILINE,
        )
        assert count is not None, stage
        assert float(count.group(1)) >= 1, stage
