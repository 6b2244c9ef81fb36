"""Volcano's example/hierarchical-jobs on a real control plane, under hierarchical DRF.

``examples/hierarchical-jobs`` (the example's four queues in ``root/{eng,sci}/{prod,dev}`` and
its four vcjobs of six 500m pods) applied with kubectl as docs/queues.md does, job-controller
and the scheduler running ``examples/scheduler/hdrf.conf``. Once the 24 pods exist, one node
of 10 cpu arrives: 20 pods fit, and each queue gets what Volcano gives (its own allocate and
drf, run on these objects): eng-prod 6, eng-dev 2, sci-prod 6, sci-dev 6
(``tests/unit/scheduler/scenarios/hdrf_hierarchical_jobs.yaml`` has the arithmetic).

The test has a control plane of its own: the node must be the only one, or the pods would
spread to nodes other tests left.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from devcluster.harness import ControlPlane
from tests.fixtures import plane_with_crds
from tests.integration.job.conftest import RunningJobController
from tests.integration.job.test_vcjob_examples import kubectl
from tests.integration.scheduler.conftest import wait_for
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.kube.config import load_config
from volcano_py.scheduler.scheduler import Scheduler

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "hierarchical-jobs"
VOLCANO_PODS = {"eng-prod-job": 6, "eng-dev-job": 2, "sci-prod-job": 6, "sci-dev-job": 6}
VOLCANO_CPU = {"root-eng-prod": "3", "root-eng-dev": "1", "root-sci-prod": "3", "root-sci-dev": "3"}


@pytest.fixture(scope="module")
def own_plane() -> Iterator[ControlPlane]:
    """A control plane for this module alone (no node but the example's)."""
    with plane_with_crds() as cp:
        yield cp


@pytest.fixture(scope="module")
def client(own_plane: ControlPlane) -> KubeClient:
    """The module's client: ``run_scheduler``, ``job_controller`` and ``namespace`` use it."""
    return KubeClient(load_config(str(own_plane.kubeconfig)))


def _bound(client: KubeClient, ns: str) -> Counter[str]:
    pods = client.list(R.PODS, namespace=ns)["items"]
    return Counter(
        p["metadata"]["labels"].get("volcano.sh/job-name", "")
        for p in pods
        if p["spec"].get("nodeName")
    )


def test_example_hierarchical_jobs_gets_volcanos_shares(
    client: KubeClient, own_plane: ControlPlane, namespace: str,
    run_scheduler: Callable[..., Callable[[], Scheduler]],
    job_controller: RunningJobController,
) -> None:  # fmt: skip
    run_scheduler(conf=(ROOT / "examples" / "scheduler" / "hdrf.conf").read_text())
    kubectl(own_plane, "apply", "-f", str(EXAMPLE / "queues.yaml"))
    kubectl(own_plane, "apply", "-n", namespace, "-f", str(EXAMPLE / "jobs.yaml"))
    wait_for(lambda: len(client.list(R.PODS, namespace=namespace)["items"]) == 24, timeout=120)
    assert not _bound(client, namespace)  # no node yet

    kubectl(own_plane, "apply", "-f", str(EXAMPLE / "node.yaml"))
    wait_for(lambda: sum(_bound(client, namespace).values()) == 20, timeout=120)
    assert dict(_bound(client, namespace)) == VOLCANO_PODS

    def allocated() -> dict[str, str]:
        return {
            name: (client.get(R.QUEUES, name).get("status") or {})
            .get("allocated", {})
            .get("cpu", "")
            for name in VOLCANO_CPU
        }

    wait_for(lambda: allocated() == VOLCANO_CPU, timeout=30)
