"""The pieces of ``make run`` that need no cluster: the fleet's shape and the run record."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest

from devcluster import devstate, fleet, kwok
from tests.builders import node_body, node_is_up


def test_the_default_fleet_is_8_gpu_nodes_in_2_spines_of_2_racks() -> None:
    nodes = fleet.fleet(8)
    assert len(nodes) == 8
    racks = Counter(n["metadata"]["labels"][fleet.RACK_LABEL] for n in nodes)
    assert racks == {"rack-0": 2, "rack-1": 2, "rack-2": 2, "rack-3": 2}
    spine_of = {
        n["metadata"]["labels"][fleet.RACK_LABEL]: n["metadata"]["labels"][fleet.SPINE_LABEL]
        for n in nodes
    }
    assert spine_of == {
        "rack-0": "spine-0",
        "rack-1": "spine-0",
        "rack-2": "spine-1",
        "rack-3": "spine-1",
    }
    for node in nodes:
        meta = node["metadata"]
        assert meta["annotations"] == {kwok.ANNOTATION: kwok.VALUE}
        assert meta["labels"]["kubernetes.io/hostname"] == meta["name"]
        assert node["status"]["allocatable"]["nvidia.com/gpu"] == "8"
        assert "conditions" not in node["status"]  # kwok reports them


def test_other_fleet_sizes_fill_rack_by_rack_and_zero_is_empty() -> None:
    assert fleet.fleet(0) == []
    racks = Counter(n["metadata"]["labels"][fleet.RACK_LABEL] for n in fleet.fleet(5))
    assert racks == {"rack-0": 2, "rack-1": 2, "rack-2": 1}
    assert len({n["metadata"]["name"] for n in fleet.fleet(13)}) == 13


def test_a_node_without_kubelet_is_not_handed_to_kwok_and_is_not_up() -> None:
    body = node_body("dead", ready=False)
    assert kwok.ANNOTATION not in body["metadata"].get("annotations", {})
    assert not node_is_up(body)
    tainted = {
        "spec": {"taints": [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]},
    }
    assert not node_is_up(tainted)
    tainted["spec"]["taints"] = [{"key": "example.com/gpu", "effect": "NoSchedule"}]
    assert node_is_up(tainted)  # a user's taint is not about readiness


@pytest.fixture
def run_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("VOLCANO_PY_RUN_DIR", str(tmp_path / "state"))
    return tmp_path


def test_a_stale_record_is_cleaned_and_its_folder_removed(run_dir: Path) -> None:
    folder = run_dir / f"{devstate.RUN_PREFIX}stale"
    (folder / "etcd").mkdir(parents=True)
    state = devstate.state_file()
    state.parent.mkdir()
    state.write_text(json.dumps({"pid": 2**22 + 7, "dir": str(folder)}))  # no such pid
    said = devstate.clean_stale()
    assert said is not None
    assert "stopped 0 leftover process(es)" in said
    assert not folder.exists()
    assert not state.exists()
    assert devstate.clean_stale() is None


def test_a_record_never_removes_a_folder_that_is_not_a_run_folder(run_dir: Path) -> None:
    precious = run_dir / "home"
    precious.mkdir()
    state = devstate.state_file()
    state.parent.mkdir()
    state.write_text(json.dumps({"pid": 2**22 + 7, "dir": str(precious)}))
    devstate.clean_stale()
    assert precious.exists()


def test_a_live_run_is_refused_not_killed(run_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    state = devstate.state_file()
    state.parent.mkdir()
    folder = run_dir / f"{devstate.RUN_PREFIX}live"
    folder.mkdir()
    parent = os.getppid()
    state.write_text(json.dumps({"pid": parent, "dir": str(folder)}))
    monkeypatch.setattr(devstate, "OWNER_MARK", "")  # our parent stands in for a live devrun
    with pytest.raises(devstate.AlreadyRunning, match=f"pid {parent}"):
        devstate.clean_stale()
    assert folder.exists()
    assert state.exists()


def test_record_and_forget_are_ours_only(run_dir: Path) -> None:
    folder = run_dir / f"{devstate.RUN_PREFIX}mine"
    devstate.record(folder)
    assert json.loads(devstate.state_file().read_text())["pid"] == os.getpid()
    devstate.forget()
    assert not devstate.state_file().exists()
    devstate.state_file().write_text(json.dumps({"pid": 1, "dir": str(folder)}))
    devstate.forget()  # another run's record stays
    assert devstate.state_file().exists()
