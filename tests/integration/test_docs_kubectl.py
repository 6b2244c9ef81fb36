"""The ``kubectl`` lines of README.md and docs/*.md run against a real control plane.

``tests/unit/test_docs_commands.py`` checks every documented command offline; here the
cluster ones run: ``kubectl apply`` server-side as a dry run (the API server validates every
object against the installed CRDs and schemas, nothing is stored), ``kubectl get`` as
written. ``port-forward`` needs the installed process and stays with the offline checks.
"""

from __future__ import annotations

import contextlib
import subprocess

import pytest

from devcluster.harness import ControlPlane
from tests.docblocks import ROOT, doc_commands, doc_files
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import Conflict

KUBECTL = [
    (command.where, words)
    for path in doc_files()
    for command in doc_commands(path)
    if command.runnable
    for words in command.segments(optional=False)
    if words[0] == "kubectl" and ("apply" in words or "get" in words)
]


def test_the_docs_have_kubectl_lines_to_run() -> None:
    assert any("apply" in words for _, words in KUBECTL)


@pytest.mark.parametrize(("where", "words"), KUBECTL, ids=[w for w, _ in KUBECTL])
def test_a_documented_kubectl_line_runs_against_the_control_plane(
    where: str, words: list[str], control_plane: ControlPlane, client: KubeClient
) -> None:
    with contextlib.suppress(Conflict):  # manifests/ install into it
        client.create(R.NAMESPACES, {"metadata": {"name": "volcano-system"}})
    argv = [str(control_plane.binaries["kubectl"]), "--kubeconfig", str(control_plane.kubeconfig)]
    argv += words[1:] + (["--dry-run=server"] if "apply" in words else [])
    done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=60, check=False)
    assert done.returncode == 0, f"{where}: {' '.join(words)}\n{done.stderr}"
