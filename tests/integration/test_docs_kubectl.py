"""The ``kubectl`` lines of README.md and docs/*.md run against a real control plane.

``tests/unit/test_docs_commands.py`` checks every documented command offline; here the
cluster ones run: ``kubectl apply`` server-side as a dry run (the API server validates every
object against the installed CRDs and schemas, nothing is stored), ``kubectl get`` as
written. ``port-forward`` needs the installed process and stays with the offline checks.

The docs speak of ``make run``'s cluster, which serves Kubernetes' own Workload API
(``ControlPlane(workload_api=True)``: docs/native.md's ``scheduling.k8s.io`` PodGroups), so the
lines run on a control plane started the same way, with the CRDs installed.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator

import pytest

from devcluster.harness import ControlPlane
from tests.docblocks import ROOT, doc_commands, doc_files
from tests.fixtures import plane_with_crds
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.kube.config import load_config
from volcano_py.kube.errors import Conflict

KUBECTL = [
    (command.where, words)
    for path in doc_files()
    for command in doc_commands(path)
    if command.runnable
    for words in command.segments(optional=False)
    if words[0] == "kubectl" and ("apply" in words or "get" in words)
]


@pytest.fixture(scope="module")
def run_plane() -> Iterator[ControlPlane]:
    """A control plane like ``make run``'s (the Workload API on), CRDs installed."""
    with plane_with_crds(workload_api=True) as cp:
        yield cp


def test_the_docs_have_kubectl_lines_to_run() -> None:
    assert any("apply" in words for _, words in KUBECTL)


@pytest.mark.parametrize(("where", "words"), KUBECTL, ids=[w for w, _ in KUBECTL])
def test_a_documented_kubectl_line_runs_against_the_control_plane(
    where: str, words: list[str], run_plane: ControlPlane
) -> None:
    client = KubeClient(load_config(str(run_plane.kubeconfig)))
    with contextlib.suppress(Conflict):  # manifests/ install into it
        client.create(R.NAMESPACES, {"metadata": {"name": "volcano-system"}})
    argv = [str(run_plane.binaries["kubectl"]), "--kubeconfig", str(run_plane.kubeconfig)]
    argv += words[1:] + (["--dry-run=server"] if "apply" in words else [])
    done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=60, check=False)
    assert done.returncode == 0, f"{where}: {' '.join(words)}\n{done.stderr}"
