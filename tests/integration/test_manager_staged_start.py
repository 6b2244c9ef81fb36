"""The manager's staged start on the real control plane: the scheduler first, the controllers
after its first cycle placed what it could and its binds are done (``volcano_py/manager.py``,
step 5).

A node offering a resource only this module's pods ask for, a bare pod (an implicit job: the
scheduler alone binds it) and a one-replica Deployment (its pod waits for the PodGroup the
pg-controller creates). The leader builds its controllers only once the first cycle decided
and its binds (slowed here) are done, and they then run: the Deployment's pod gets its
PodGroup and is bound. A standby builds them too (warm caches for a takeover) but runs none.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.builders import create_node, deployment_body, pod_body
from tests.integration.scheduler.conftest import wait_for
from volcano_py import manager as manager_module
from volcano_py.api import resources as R
from volcano_py.controllers.framework import Controller, ControllerSet
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import NotFound
from volcano_py.kube.leaderelection import LeaderElector
from volcano_py.manager import Manager, ManagerOptions

JSON = dict[str, Any]
CONTROLLERS = ["hyperNode-controller", "job-controller", "pg-controller", "queue-controller"]


@pytest.fixture
def resource(client: KubeClient) -> Iterator[str]:
    """An extended resource one fresh node offers: only this test's pods can land there."""
    name = f"test.volcano.sh/staged-{uuid.uuid4().hex[:6]}"
    node = f"staged-{uuid.uuid4().hex[:6]}"
    create_node(client, node, allocatable={"cpu": "8", "memory": "16Gi", "pods": "20", name: "4"})
    yield name
    with contextlib.suppress(NotFound):
        client.delete(R.NODES, node)


def options(namespace: str, **overrides: Any) -> ManagerOptions:
    values: dict[str, Any] = {
        "schedule_period": 0.2,
        "leader_elect": False,
        "metrics_host": "127.0.0.1",
        "metrics_port": 0,
        "namespace": namespace,
        "ui_enabled": False,
    }
    values.update(overrides)
    return ManagerOptions(**values)


def workloads(client: KubeClient, namespace: str, resource: str) -> None:
    client.create(R.PODS, pod_body("bare", namespace, requests={resource: "1"}), namespace)
    client.create(
        R.DEPLOYMENTS, deployment_body("web", namespace, 1, requests={resource: "1"}), namespace
    )


def pods(client: KubeClient, namespace: str) -> list[JSON]:
    return client.list_all(R.PODS, namespace)


def deployment_pod_bound(client: KubeClient, namespace: str) -> bool:
    return any(
        p["metadata"]["name"].startswith("web-") and p["spec"].get("nodeName")
        for p in pods(client, namespace)
    )


def test_the_leader_builds_its_controllers_after_the_first_cycle_decided_and_runs_them(
    client: KubeClient, namespace: str, resource: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    workloads(client, namespace, resource)
    # per build() call: had the first cycle decided, and were its binds done?
    at_build: list[tuple[bool, bool]] = []
    manager: Manager | None = None
    original = ControllerSet.build
    create = KubeClient.create

    def spying_build(self: ControllerSet) -> list[Controller]:
        assert manager is not None
        assert manager.scheduler is not None
        binds_done = manager.client.foreground.pause(0)
        at_build.append((manager.scheduler.first_decisions.is_set(), binds_done))
        return original(self)

    def slow_bind(self: KubeClient, *args: Any, **kwargs: Any) -> JSON:
        if kwargs.get("subresource") == "binding":
            time.sleep(0.5)  # a bind the controllers' start must wait for, not race
        return create(self, *args, **kwargs)

    monkeypatch.setattr(ControllerSet, "build", spying_build)
    monkeypatch.setattr(KubeClient, "create", slow_bind)
    fatal: list[str] = []
    manager = Manager(options(namespace), client=client, on_fatal=fatal.append)
    assert manager.controllers.built() == []  # construction builds none
    manager.start()
    try:
        assert wait_for(
            lambda: any(
                p["metadata"]["name"] == "bare" and p["spec"].get("nodeName")
                for p in pods(client, namespace)
            ),
            timeout=60,
        )
        # the Deployment's pod binds only once the pg-controller gave it a PodGroup
        assert wait_for(lambda: deployment_pod_bound(client, namespace), timeout=60)
        assert client.list_all(R.PODGROUPS, namespace), "the pg-controller created no PodGroup"
        assert sorted(c.name for c in manager.controllers.built()) == CONTROLLERS
        assert at_build, "the controllers were never built"
        assert all(decided and binds_done for decided, binds_done in at_build), at_build
        running = {t.name for t in threading.enumerate()}
        assert {f"controller:{name}" for name in CONTROLLERS} <= running
        # the controllers' informers started once each, though four threads asked at once
        reflectors = [t.name for t in threading.enumerate() if t.name.startswith("informer:")]
        reflectors = [n for n in reflectors if ":handler-" not in n]
        assert sorted(reflectors) == sorted(set(reflectors)), reflectors
    finally:
        manager.stop()
    assert not fatal, fatal


def test_a_standby_builds_its_controllers_for_a_takeover_but_runs_none(
    client: KubeClient, namespace: str, resource: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(manager_module, "WARM_AFTER_S", 0.5)
    holder = LeaderElector(
        client,
        namespace,
        "volcano-py",
        "the-other-replica",
        lease_duration=15,
        renew_deadline=10,
        retry_period=2,
        on_started_leading=lambda stop: None,
    )
    assert holder.try_acquire_or_renew()  # held for 15 s: this manager stays a standby
    workloads(client, namespace, resource)
    fatal: list[str] = []
    manager = Manager(
        options(namespace, leader_elect=True, lease_namespace=namespace, retry_period=2),
        client=client,
        on_fatal=fatal.append,
    )
    manager.start()
    try:
        assert wait_for(lambda: len(manager.controllers.built()) == len(CONTROLLERS), timeout=20)
        # their informers were started and synced, so a takeover finds warm caches
        assert wait_for(manager.informers.has_synced, timeout=20)
        assert not manager.is_leader()
        running = {t.name for t in threading.enumerate()}
        assert not {n for n in running if n.startswith(("controller:", "scheduler:loop"))}
        assert client.list_all(R.PODGROUPS, namespace) == []
        assert not any(p["spec"].get("nodeName") for p in pods(client, namespace))
    finally:
        manager.stop()
    assert not fatal, fatal
