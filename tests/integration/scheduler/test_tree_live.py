"""``volcano-py tree`` against the live cluster."""

from __future__ import annotations

import json

import pytest

from devcluster.harness import ControlPlane
from tests.builders import exact
from tests.integration.scheduler.conftest import Topology
from volcano_py.cli import main


def test_tree_reads_the_live_cluster(
    control_plane: ControlPlane, topology: Topology, capsys: pytest.CaptureFixture[str]
) -> None:
    n1, n2 = topology.node("n1", 4), topology.node("n2", 4)
    tor = topology.hypernode("tor", 1, [exact(n1), exact(n2)])
    spine = topology.hypernode("spine", 2, [exact(tor, "HyperNode")])
    code = main(["tree", "--kubeconfig", str(control_plane.kubeconfig), "-o", "json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert data["hyperNodes"][tor]["nodes"] == [n1, n2]
    assert data["hyperNodes"][tor]["parent"] == spine
    assert data["hyperNodes"][spine]["nodeCount"] == 2
