"""Restarts racing pod deletions converge: every Job ends in its phase with exactly its pods.

The shape of jobseq's "Restart job when job is unschedulable" (a restart while pods are
being deleted under it), as a fault test: three Jobs whose policy restarts them when a pod
is evicted; for several rounds one pod of each Job is deleted while the restarts that the
previous deletions caused are running. Then the deleting stops and each Job must come back
Running with exactly its two pods, of its current version, counted as such in its status.
No verdict depends on time: the waits are generous and only bound a failure.
"""

from __future__ import annotations

import random
import time
from typing import Any

import pytest

from tests.integration.job.conftest import job_pods, phase, vcjob
from tests.integration.scheduler.conftest import Topology, wait_for
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import NotFound

JOBS = ("race-a", "race-b", "race-c")
ROUNDS = 6

# a hang guard only: the waits inside are generous and bound a failure, not the verdict
pytestmark = [pytest.mark.timeout(900), pytest.mark.usefixtures("job_cluster")]


def _settled(client: KubeClient, ns: str, name: str) -> Any:
    """True when the Job is Running with exactly pods t0-0 and t0-1 of its version, or why not."""
    job = client.get(R.VCJOBS, name, ns)
    status = job.get("status") or {}
    version = str(status.get("version", 0))
    pods = job_pods(client, ns, name)
    live = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
    names = sorted(p["metadata"]["name"] for p in live)
    versions = {p["metadata"]["annotations"]["volcano.sh/job-version"] for p in live}
    ok = (
        phase(client, ns, name) == "Running"
        and len(pods) == 2
        and names == [f"{name}-t0-0", f"{name}-t0-1"]
        and versions == {version}
        and all(p["status"].get("phase") == "Running" for p in live)
        and status.get("running") == 2
        and not status.get("pending")
    )
    return ok or (name, phase(client, ns, name), names, versions, version, status)


def test_restarts_racing_pod_deletions_converge_to_exactly_each_jobs_pods(
    client: KubeClient, namespace: str, topology: Topology
) -> None:
    policies = [{"event": "PodEvicted", "action": "RestartJob"}]
    for name in JOBS:
        body = vcjob(name, namespace, topology, replicas=2, min_available=2, tier=2,
                     policies=policies, maxRetry=1000)  # fmt: skip
        client.create(R.VCJOBS, body)
    for name in JOBS:
        wait_for(lambda name=name: phase(client, namespace, name) == "Running", timeout=120)
    pick = random.Random(42)
    deleted = 0
    for _ in range(ROUNDS):
        for name in JOBS:
            pods = [p for p in job_pods(client, namespace, name)
                    if not p["metadata"].get("deletionTimestamp")]  # fmt: skip
            if not pods:
                continue
            victim = pick.choice(pods)["metadata"]["name"]
            try:
                client.delete(R.PODS, victim, namespace)
                deleted += 1
            except NotFound:
                pass
        time.sleep(0.5)  # pacing only: let restarts start, so the next deletes race them
    assert deleted >= len(JOBS)  # the fault really happened
    for name in JOBS:
        try:
            wait_for(lambda name=name: _settled(client, namespace, name) is True, timeout=240,
                     interval=0.5)  # fmt: skip
        except AssertionError as e:
            raise AssertionError(f"{_settled(client, namespace, name)!r}") from e
    for name in JOBS:
        status = client.get(R.VCJOBS, name, namespace).get("status") or {}
        assert status.get("retryCount", 0) >= 1  # the deletions did restart it
