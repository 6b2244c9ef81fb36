"""The hostile UFM body (issue 44) against the running manager, under its memory's address space.

47.7 MB of 15.9 M empty objects used to take the worker to 1.8 GB and ``MemoryError`` every
round: the parser built the whole body before counting. Here the manager's worker runs under
an address-space limit (``RLIMIT_AS``) of what the shipped Deployment's memory limit leaves it:
its address space now plus the memory limit less its resident set. UFM itself cannot run here,
so ``UFMStandIn`` serves the body over HTTPS. The round must be refused by its cap (the manager
logs why), the worker must be the same process afterwards (gunicorn did not have to restart
it), and a 2-pod gang created afterwards must bind. The bind time and the worker's peak RSS
are printed figures (``-s``), not verdicts.
"""

from __future__ import annotations

import contextlib
import resource
from collections.abc import Iterator

import pytest

from tests.integration.hostile.conftest import SYSTEM_NS, Hostile, _status_kib, memory_limit
from tests.integration.hostile.test_hostile_inputs import put_configmap, wait_for
from tests.ufm_standin import UFMStandIn
from volcano_py.api import resources as R
from volcano_py.kube.errors import NotFound

pytestmark = pytest.mark.timeout(300)

SECRET = "ufm-hostile-credentials"
CONFIGMAP = "volcano-controller-configmap"


@contextlib.contextmanager
def deployment_address_space(hostile: Hostile) -> Iterator[int]:
    """Lower the worker's soft ``RLIMIT_AS`` to what the memory limit leaves; restore after."""
    (pid,) = hostile.manager.worker_pids()
    size = _status_kib(pid, "VmSize") * 1024
    rss = _status_kib(pid, "VmRSS") * 1024
    soft, hard = resource.prlimit(pid, resource.RLIMIT_AS)
    limit = size + memory_limit() - rss
    resource.prlimit(pid, resource.RLIMIT_AS, (limit, hard))
    try:
        yield pid
    finally:
        resource.prlimit(pid, resource.RLIMIT_AS, (soft, hard))


def test_a_hostile_ufm_body_is_refused_by_its_cap_and_a_gang_binds_after(
    hostile: Hostile, namespace: str
) -> None:
    with UFMStandIn() as standin, deployment_address_space(hostile) as worker:
        standin.mode = "hostile"
        hostile.client.create(
            R.SECRETS,
            {
                "metadata": {"name": SECRET, "namespace": SYSTEM_NS},
                "stringData": {"username": standin.username, "password": standin.password},
            },
            SYSTEM_NS,
        )
        text = (
            "networkTopologyDiscovery:\n- source: ufm\n  enabled: true\n  interval: 2s\n"
            f"  credentials: {{secretRef: {{name: {SECRET}, namespace: {SYSTEM_NS}}}}}\n"
            f"  config: {{endpoint: '{standin.endpoint}', caFile: '{standin.ca_file}', "
            "timeout: 60s}\n"
        )
        try:
            put_configmap(hostile, CONFIGMAP, "volcano-controller.conf", text)
            refusal = "discovery source ufm: "
            wait_for(
                lambda: any(
                    refusal in line and "(size cap)" in line
                    for line in hostile.manager.log().splitlines()
                ),
                timeout=120,
            )
            rounds = standin.requests
            wait_for(lambda: standin.requests > rounds, timeout=60)  # and the next round too
            assert hostile.manager.worker_pids() == [worker], "the worker was restarted"
            assert "MemoryError" not in hostile.manager.log()
            seconds = hostile.gang_bind_seconds(namespace)
            peak = _status_kib(worker, "VmHWM") / 1024
            print(
                f"hostile UFM body: refused by its cap, worker peak RSS {peak:.0f} MiB "
                f"(memory limit {memory_limit() >> 20} MiB), a 2-pod gang bound in "
                f"{seconds:.2f} s afterwards"
            )
            assert hostile.manager.proc.poll() is None, hostile.manager.log()[-3000:]
        finally:
            put_configmap(
                hostile, CONFIGMAP, "volcano-controller.conf", "networkTopologyDiscovery: []\n"
            )
            with contextlib.suppress(NotFound):
                hostile.client.delete(R.SECRETS, SECRET, SYSTEM_NS)
