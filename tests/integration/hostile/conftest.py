"""The hostile-input suite's cluster: one ``volcano-py manager`` (gunicorn + TLS webhook +
controllers + scheduler) whose webhook the API server calls, two kwok nodes, and the probes
each test ends with: a small gang still binds (its bind time printed: the 2 s goal is a figure
read from ``-s`` output, not a verdict, so a loaded machine cannot fail the suite), and the
worker's RSS stays under the Deployment's memory limit.

The manager's processes run under an address-space limit (``RLIMIT_AS``, set with
``prlimit`` on the running master and worker: their size at start plus ``AS_HEADROOM``), so
an input that made the worker allocate without bound would kill that worker, not the shared
machine.
"""

from __future__ import annotations

import contextlib
import re
import resource
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from devcluster.harness import ControlPlane
from devcluster.manager import (
    ManagerProcess,
    deployment_memory_limit,
    install_webhook,
    start_manager,
    stop_manager,
    uninstall_webhook,
)
from tests.builders import create_node, pod_body, podgroup_body
from tests.fixtures import client, control_plane, namespace
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import AlreadyExists, NotFound

__all__ = ["client", "control_plane", "namespace"]

WEBHOOK_NAME = "volcano-py-hostile"
SYSTEM_NS = "volcano-system"
AS_HEADROOM = 1536 << 20
# How long a probe gang may take before the test calls it stuck: a hang guard, not a speed
# verdict (the 2 s goal is read from the printed bind times).
GANG_HANG_GUARD_S = 120.0
# gunicorn's access line: ... "POST /jobs/mutate?timeout=10s HTTP/1.1" 200 ...
ACCESS_STATUS = re.compile(r'gunicorn\.access: .*"[A-Z]+ \S+ HTTP/[0-9.]+" (\d{3}) ')


def memory_limit() -> int:
    """The Deployment's container memory limit, in bytes (``manifests/base``)."""
    return deployment_memory_limit()


def _status_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} for pid {pid}")


@dataclass
class Hostile:
    """The suite's manager, admin client and nodes."""

    manager: ManagerProcess
    client: KubeClient
    nodes: list[str]

    def worker_rss(self) -> int:
        """The largest worker RSS, in bytes."""
        return max(_status_kib(pid, "VmRSS") * 1024 for pid in self.manager.worker_pids())

    def webhook_answers(self) -> list[tuple[int, str]]:
        """Every webhook request's status and access-log line, in the order answered."""
        return [
            (int(match.group(1)), line)
            for line in self.manager.log().splitlines()
            if (match := ACCESS_STATUS.search(line))
        ]

    def gang_bind_seconds(self, namespace: str) -> float:
        """Create a 2-pod gang and return how long until both pods are bound (or fail)."""
        tag = uuid.uuid4().hex[:6]
        group = f"g-{tag}"
        self.client.create(R.PODGROUPS, podgroup_body(group, namespace, 2))
        started = time.monotonic()
        names = [f"{group}-{i}" for i in range(2)]
        for name in names:
            body = pod_body(
                name,
                namespace,
                requests={"cpu": "100m"},
                annotations={"scheduling.k8s.io/group-name": group},
            )
            self.client.create(R.PODS, body)
        deadline = started + GANG_HANG_GUARD_S
        while time.monotonic() < deadline:
            pods = [self.client.get(R.PODS, n, namespace) for n in names]
            if all(p["spec"].get("nodeName") for p in pods):
                return time.monotonic() - started
            time.sleep(0.05)
        raise AssertionError(f"gang {namespace}/{group} not bound within {GANG_HANG_GUARD_S:.0f} s")

    def assert_still_serving(self, namespace: str) -> float:
        """The two promises every hostile input must keep; returns the bind time."""
        seconds = self.gang_bind_seconds(namespace)
        rss = self.worker_rss()
        print(f"hostile: gang bound in {seconds:.2f} s, worker RSS {rss / 2**20:.0f} MiB")
        assert rss < memory_limit(), f"worker RSS {rss / 2**20:.0f} MiB"
        assert self.manager.proc.poll() is None, self.manager.log()[-3000:]
        return seconds


def _limit_address_space(manager: ManagerProcess) -> None:
    for pid in [manager.proc.pid, *manager.worker_pids()]:
        size = _status_kib(pid, "VmSize") * 1024
        limit = size + AS_HEADROOM
        resource.prlimit(pid, resource.RLIMIT_AS, (limit, limit))


@pytest.fixture(scope="module")
def hostile(
    control_plane: ControlPlane, client: KubeClient, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Hostile]:
    with contextlib.suppress(AlreadyExists):
        client.create(R.NAMESPACES, {"metadata": {"name": SYSTEM_NS}})
    work = tmp_path_factory.mktemp("hostile")
    manager = start_manager(control_plane, work, "--webhook-access-log=true")  # 5xx are seen
    install_webhook(client, work / "certs", manager.webhook_port, WEBHOOK_NAME)
    _limit_address_space(manager)
    nodes = [f"hostile-{i}" for i in range(2)]
    for name in nodes:
        with contextlib.suppress(AlreadyExists):
            create_node(client, name, allocatable={"cpu": "8", "memory": "16Gi", "pods": "110"})
    try:
        yield Hostile(manager, client, nodes)
    finally:
        uninstall_webhook(client, WEBHOOK_NAME)
        for name in nodes:
            with contextlib.suppress(NotFound):
                client.delete(R.NODES, name)
        code = stop_manager(manager)
        assert code == 0, manager.log()[-4000:]
