"""A control plane with Kubernetes' own Workload API on, for the tests of native PodGroups.

``client`` is overridden here: every fixture of ``tests/integration/scheduler`` that asks for
it (``namespace``, ``topology``, ``run_scheduler``) gets this module's gated control plane
(``ControlPlane(workload_api=True)``: the gates and ``scheduling.k8s.io`` versions on the API
server, kube-controller-manager's Job controller making Workloads and PodGroups). Other tests
keep the session's plane with today's defaults.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from devcluster.harness import ControlPlane
from tests.fixtures import plane_with_crds
from volcano_py.kube.client import KubeClient
from volcano_py.kube.config import load_config


@pytest.fixture(scope="module")
def workload_plane() -> Iterator[ControlPlane]:
    """A control plane with the Workload API's gates and versions on, CRDs installed."""
    with plane_with_crds(workload_api=True) as cp:
        yield cp


@pytest.fixture(scope="module")
def client(workload_plane: ControlPlane) -> KubeClient:
    """An admin client for the gated plane (overrides the session's)."""
    assert os.path.exists(workload_plane.kubeconfig)
    return KubeClient(load_config(str(workload_plane.kubeconfig)))
