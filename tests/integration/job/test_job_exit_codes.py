"""Exit-code policies through the real Pod cache (the shared informer and its transform).

jobseq's "job level LifecyclePolicy, error code: 3; Action: RestartJob": a pod that ends
Failed with exit code 3 restarts the Job. The job controller reads the exit code from
``status.containerStatuses``, which the Pod transform used to drop, so on a real cluster the
Job stayed Running; unit tests, which build pods without the transform, passed.
"""

from __future__ import annotations

import pytest

from tests.integration.job.conftest import job_pods, phase, vcjob
from tests.integration.scheduler.conftest import Topology, wait_for
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient

# a hang guard only: the waits inside are generous and bound a failure, not the verdict
pytestmark = [pytest.mark.timeout(900), pytest.mark.usefixtures("job_cluster")]


def test_exit_code_policy_restarts_the_job_through_the_shared_pod_cache(
    client: KubeClient, namespace: str, topology: Topology
) -> None:
    policies = [{"exitCode": 3, "action": "RestartJob"}]
    body = vcjob("code-job", namespace, topology, replicas=2, min_available=2, tier=1,
                 policies=policies, maxRetry=3)  # fmt: skip
    client.create(R.VCJOBS, body)
    wait_for(lambda: phase(client, namespace, "code-job") == "Running", timeout=90)
    first = job_pods(client, namespace, "code-job")[0]
    terminated = {"exitCode": 3, "reason": "Error"}
    status = {
        "phase": "Failed",
        "containerStatuses": [{"name": "c0", "ready": False, "restartCount": 0, "image": "nginx",
                               "imageID": "", "state": {"terminated": terminated}}],
    }  # fmt: skip
    client.patch(R.PODS, first["metadata"]["name"], {"status": status}, namespace,
                 subresource="status")  # fmt: skip

    def restarted() -> bool:
        job_status = client.get(R.VCJOBS, "code-job", namespace).get("status") or {}
        return bool(job_status.get("retryCount") == 1)

    wait_for(restarted, timeout=90)
