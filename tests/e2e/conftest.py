"""Fixtures for end-to-end tests: the whole ``volcano-py manager`` process (gunicorn, TLS)
against the real control plane, with the API server calling its webhook.

Starting and stopping the process lives in ``devcluster.manager`` (re-exported here)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from devcluster.harness import ControlPlane
from devcluster.manager import (
    ROOT,
    ManagerProcess,
    install_webhook,
    manager_certs,
    start_manager,
    stop_manager,
    uninstall_webhook,
)
from tests.fixtures import client, control_plane, namespace, taken
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import AlreadyExists

__all__ = [
    "ROOT",
    "ManagerProcess",
    "client",
    "control_plane",
    "install_webhook",
    "manager",
    "manager_certs",
    "namespace",
    "start_manager",
    "stop_manager",
    "taken",
    "uninstall_webhook",
]


@pytest.fixture(scope="session")
def e2e_plane(control_plane: ControlPlane) -> ControlPlane:
    admin = KubeClient(control_plane.admin_config())
    with contextlib.suppress(AlreadyExists):
        admin.create(R.NAMESPACES, {"metadata": {"name": "volcano-system"}})
    return control_plane


@pytest.fixture(scope="session")
def manager(
    e2e_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ManagerProcess]:
    """One manager for the session, its webhook registered with the API server."""
    work = tmp_path_factory.mktemp("manager")
    process = start_manager(e2e_plane, work)
    install_webhook(
        KubeClient(e2e_plane.admin_config()), work / "certs", process.webhook_port, "volcano-py-e2e"
    )
    yield process
    uninstall_webhook(KubeClient(e2e_plane.admin_config()), "volcano-py-e2e")
    assert stop_manager(process) == 0, process.log()[-4000:]


@pytest.fixture
def replicas() -> Iterator[list[ManagerProcess]]:
    """Managers a test starts; whatever is still running is stopped afterwards."""
    started: list[ManagerProcess] = []
    yield started
    for process in started:
        stop_manager(process)


@pytest.fixture(scope="module")
def plane() -> Iterator[ControlPlane]:
    """A test module's own control plane (for scenarios that kill or restart parts of it)."""
    from tests.e2e.faults import own_plane

    with own_plane() as cp:
        yield cp


@pytest.fixture(scope="module")
def admin(plane: ControlPlane) -> KubeClient:
    """An admin client for the module's own ``plane``."""
    return KubeClient(plane.admin_config())
