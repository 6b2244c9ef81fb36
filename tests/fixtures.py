"""Shared pytest fixtures for tests that run against the real control plane.

Imported by ``tests/integration/conftest.py`` and ``tests/e2e/conftest.py``: a session-scoped
control plane (with the CRDs from ``manifests/crds`` installed and Established), an admin
client, and a fresh namespace per test. ``RunningController`` runs one controller on a thread
the way the manager runs it, for the controllers' integration fixtures; ``audited_control_plane``
and ``audit_writes`` count writes in a private control plane's audit log.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Generic, TypeVar

import pytest

from devcluster.crds import CRD_DIR as CRD_DIR
from devcluster.crds import install_crds as install_crds
from devcluster.harness import ControlPlane
from volcano_py.api import resources as R
from volcano_py.controllers.framework import Controller, ControllerOptions
from volcano_py.kube.client import KubeClient
from volcano_py.kube.config import load_config
from volcano_py.kube.errors import NotFound
from volcano_py.kube.events import EventRecorder
from volcano_py.kube.informer import SharedInformerFactory

ROOT = Path(__file__).resolve().parents[1]

C = TypeVar("C", bound=Controller)


class RunningController(Generic[C]):
    """A controller on a thread, with its own informers and event recorder.

    ``make()`` builds the controller, ``options`` go into its ``ControllerOptions`` and the
    events come from ``component``. ``restart()`` stops it and starts a fresh one (new caches,
    new queue), as a restarted manager would.
    """

    join_s = 15.0  # how long ``stop`` waits for the controller's thread

    def __init__(
        self,
        client: KubeClient,
        make: Callable[[], C],
        thread_name: str,
        component: str = "vc-controller-manager",
        **options: Any,
    ) -> None:
        self.client = client
        self._make = make
        self._thread_name = thread_name
        self._component = component
        self._options = options
        self._start()

    def _start(self) -> None:
        self.factory = SharedInformerFactory(self.client)
        self.recorder = EventRecorder(self.client, self._component)
        self.recorder.start()
        self.controller = self._make()
        self.controller.initialize(
            ControllerOptions(
                client=self.client, informers=self.factory, recorder=self.recorder, **self._options
            )
        )
        self.stop_event = threading.Event()
        self.thread = threading.Thread(
            target=self.controller.run,
            args=(self.stop_event,),
            name=self._thread_name,
            daemon=True,
        )
        self.thread.start()

    def stop(self) -> None:
        self.stop_event.set()
        self.thread.join(self.join_s)
        self.factory.shutdown()
        self.recorder.stop()

    def restart(self) -> None:
        self.stop()
        self._start()


@contextmanager
def plane_with_crds(**options: Any) -> Iterator[ControlPlane]:
    """A control plane started with ``options``, CRDs installed; stopped after the block."""
    cp = ControlPlane(**options).start()
    try:
        install_crds(KubeClient(load_config(str(cp.kubeconfig))))
        yield cp
    finally:
        cp.stop()


@pytest.fixture(scope="session")
def control_plane() -> Iterator[ControlPlane]:
    """One control plane for the whole session, CRDs installed."""
    with plane_with_crds() as cp:
        os.environ["VOLCANO_PY_TEST_KUBECONFIG"] = str(cp.kubeconfig)
        yield cp


@pytest.fixture(scope="session")
def client(control_plane: ControlPlane) -> KubeClient:
    """An admin client (system:masters) for the session's control plane."""
    return KubeClient(load_config(str(control_plane.kubeconfig)))


@pytest.fixture
def namespace(client: KubeClient) -> Iterator[str]:
    """A fresh namespace for one test, deleted afterwards (without waiting)."""
    name = f"t-{uuid.uuid4().hex[:10]}"
    client.create(
        R.NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    )
    yield name
    with contextlib.suppress(NotFound):
        client.delete(R.NAMESPACES, name)


@contextmanager
def audited_control_plane(namespace: str) -> Iterator[tuple[ControlPlane, KubeClient]]:
    """A private control plane with an audit log (no kube-controller-manager), CRDs installed,
    ``namespace`` created; with its admin client."""
    with ControlPlane(controller_manager=False, audit=True) as cp:
        admin = KubeClient(cp.admin_config())
        install_crds(admin)
        admin.create(R.NAMESPACES, {"metadata": {"name": namespace}})
        yield cp, admin
        admin.close()


def audit_writes(
    cp: ControlPlane,
    resource: str,
    verbs: tuple[str, ...],
    subresource: str | None = None,
    name: str | None = None,
) -> list[dict[str, Any]]:
    """The audit log's completed ``verbs`` on ``resource`` (its ``subresource`` when given),
    on the object ``name`` when given."""
    return [
        e
        for e in cp.audit_events()
        if (ref := e.get("objectRef") or {}).get("resource") == resource
        and ref.get("subresource") == subresource
        and (name is None or ref.get("name") == name)
        and e.get("verb") in verbs
        and e.get("stage") == "ResponseComplete"
    ]


@pytest.fixture
def taken() -> Iterator[int]:
    """A loopback port something listens on, for the tests of a taken port."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        yield int(sock.getsockname()[1])
