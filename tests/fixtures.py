"""Shared pytest fixtures for tests that run against the real control plane.

Imported by ``tests/integration/conftest.py`` and ``tests/e2e/conftest.py``: a session-scoped
control plane (with the CRDs from ``manifests/crds`` installed and Established), an admin
client, and a fresh namespace per test.
"""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.controlplane.harness import ControlPlane
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.kube.config import load_config
from volcano_py.kube.errors import AlreadyExists, NotFound

ROOT = Path(__file__).resolve().parents[1]
CRD_DIR = ROOT / "manifests" / "crds"


def install_crds(client: KubeClient, folder: Path = CRD_DIR, timeout: float = 30.0) -> list[str]:
    """Create (or replace) every CRD in ``folder`` and wait until each is Established."""
    names = []
    for path in sorted(folder.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if not doc or doc.get("kind") != "CustomResourceDefinition":
                continue
            name = doc["metadata"]["name"]
            try:
                client.create(R.CRDS, doc)
            except AlreadyExists:
                current = client.get(R.CRDS, name)
                doc["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
                client.update(R.CRDS, doc)
            names.append(name)
    deadline = time.monotonic() + timeout
    for name in names:
        while True:
            conditions = (client.get(R.CRDS, name).get("status") or {}).get("conditions") or []
            if any(c["type"] == "Established" and c["status"] == "True" for c in conditions):
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"CRD {name} not Established after {timeout}s")
            time.sleep(0.1)
    return names


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
