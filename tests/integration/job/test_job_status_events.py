"""What the user sees on a Job (real control plane): why it waits, its hosts after a scale.

- A Job whose gang cannot fit gets Volcano's Warning ``PodGroupPending`` with the
  scheduler's reason (``kubectl describe vcjob`` shows why it waits), and its status carries
  ``runningDuration``.
- An elastic Job with the ``svc`` plugin: after a scale up, its hosts ConfigMap lists the
  new pods.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.job.conftest import phase, vcjob
from tests.integration.scheduler.conftest import Topology, wait_for
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient

# a hang guard only: the waits inside are generous and bound a failure, not the verdict
pytestmark = [pytest.mark.timeout(900), pytest.mark.usefixtures("job_cluster")]


def test_an_unschedulable_gang_says_why_on_the_job(
    client: KubeClient, namespace: str, topology: Topology
) -> None:
    # 12 one-GPU pods within one rack of 4 GPUs: never fits
    client.create(R.VCJOBS, vcjob("wide", namespace, topology, replicas=12, min_available=12,
                                  tier=1))  # fmt: skip

    def pending_warning() -> list[dict[str, Any]]:
        events = client.list(R.EVENTS, namespace, field_selector="involvedObject.name=wide")
        return [e for e in events["items"] if e["reason"] == "PodGroupPending"]

    (warning, *_) = wait_for(pending_warning, timeout=120, interval=0.5)
    assert warning["type"] == "Warning"
    assert warning["message"].startswith(f"PodGroup {namespace}:wide unschedulable, reason: ")
    status = client.get(R.VCJOBS, "wide", namespace)["status"]
    assert status["state"]["phase"] == "Pending"
    assert status["runningDuration"].endswith("s")


def test_the_svc_hosts_configmap_follows_a_scale_up(
    client: KubeClient, namespace: str, topology: Topology
) -> None:
    body = vcjob("elastic", namespace, topology, replicas=2, min_available=2, tier=2,
                 plugins={"svc": ["--disable-network-policy"]})  # fmt: skip
    client.create(R.VCJOBS, body)
    wait_for(lambda: phase(client, namespace, "elastic") == "Running", timeout=120)

    def hosts() -> str:
        data = client.get(R.CONFIGMAPS, "elastic-svc", namespace).get("data") or {}
        return str(data.get("VC_T0_HOSTS", ""))

    assert hosts() == "elastic-t0-0.elastic,elastic-t0-1.elastic"
    job = client.get(R.VCJOBS, "elastic", namespace)
    job["spec"]["tasks"][0]["replicas"] = 3
    client.update(R.VCJOBS, job)
    wait_for(lambda: hosts().endswith("elastic-t0-2.elastic"), timeout=120, interval=0.5)
    data = client.get(R.CONFIGMAPS, "elastic-svc", namespace)["data"]
    assert data["VC_T0_NUM"] == "3"
