"""Shared pytest fixtures for tests that run against the real control plane.

Imported by ``tests/integration/conftest.py`` and ``tests/e2e/conftest.py``: a session-scoped
control plane (with the CRDs from ``manifests/crds`` installed and Established), an admin
client, and a fresh namespace per test.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from devcluster.crds import CRD_DIR as CRD_DIR
from devcluster.crds import install_crds as install_crds
from devcluster.harness import ControlPlane
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient, load_config
from volcano_py.kube.errors import NotFound

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def control_plane() -> Iterator[ControlPlane]:
    """One control plane for the whole session, CRDs installed."""
    cp = ControlPlane().start()
    try:
        install_crds(KubeClient(load_config(str(cp.kubeconfig))))
        os.environ["VOLCANO_PY_TEST_KUBECONFIG"] = str(cp.kubeconfig)
        yield cp
    finally:
        cp.stop()


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
