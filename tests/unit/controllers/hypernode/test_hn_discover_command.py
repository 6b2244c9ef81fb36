from __future__ import annotations

import json
from pathlib import Path

import pytest

from volcano_py.cli import main

ROOT = Path(__file__).resolve().parents[4]
EXAMPLE_CONF = ROOT / "examples" / "discovery" / "volcano-controller.conf"
EXAMPLE_OBJECTS = ROOT / "examples" / "discovery" / "objects.yaml"
SOURCE = "volcano.sh/network-topology-source"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict, str]:
    code = main(["discover", *args])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip().startswith("{") else {}), err


def test_discover_prints_the_label_hypernodes_of_the_example(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, listing, err = run(
        capsys, "--config", str(EXAMPLE_CONF), "--objects", str(EXAMPLE_OBJECTS), "-o", "json"
    )
    assert (code, err) == (0, "")
    assert listing["kind"] == "List"
    items = listing["items"]
    assert {i["metadata"]["labels"][SOURCE] for i in items} == {"label"}
    racks = [i for i in items if i["spec"]["tier"] == 1]
    rack3 = [i for i in racks if i["metadata"]["labels"]["example.com/rack"] == "rack-3"]
    assert len(rack3) == 2  # one per parent spine
    assert sorted(i["spec"]["tier"] for i in items).count(3) == 1


def test_discover_reuses_existing_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, first, _ = run(
        capsys, "--config", str(EXAMPLE_CONF), "--objects", str(EXAMPLE_OBJECTS), "-o", "json"
    )
    objects = tmp_path / "objects.yaml"
    objects.write_text(EXAMPLE_OBJECTS.read_text() + "\n---\n" + json.dumps(first))
    _, second, _ = run(
        capsys, "--config", str(EXAMPLE_CONF), "--objects", str(objects), "-o", "json"
    )
    assert sorted(i["metadata"]["name"] for i in second["items"]) == sorted(
        i["metadata"]["name"] for i in first["items"]
    )


def test_discover_names_the_failing_source_and_entry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    conf = tmp_path / "conf.yaml"
    conf.write_text(
        "networkTopologyDiscovery:\n"
        "  - {source: ufm, enabled: true, config: {endpoint: https://ufm.invalid}}\n"
        "  - {source: roce, enabled: true}\n"
    )
    code, listing, err = run(
        capsys, "--config", str(conf), "--objects", str(EXAMPLE_OBJECTS), "-o", "json"
    )
    assert code == 1
    assert listing["items"] == []
    assert 'networkTopologyDiscovery[0] (source "ufm"): ufm: credentials are not configured' in err
    assert "unknown discovery source 'roce'" in err


def test_discover_exits_2_on_an_unreadable_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(
        capsys, "--config", str(tmp_path / "missing.conf"), "--objects", str(EXAMPLE_OBJECTS)
    )
    assert code == 2
    assert "missing.conf" in err
