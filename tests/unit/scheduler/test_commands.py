"""simulate / explain / tree on the example snapshot: exit codes and JSON shapes."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from volcano_py.cli import main

CLUSTER = "examples/scheduler/cluster.yaml"
CONF = "examples/scheduler/volcano-scheduler.conf"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_simulate_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "simulate", "--cluster", CLUSTER, "--scheduler-conf", CONF)
    data = json.loads(out)
    assert code == 0
    assert set(data) == {"bindings", "podGroups", "evictions"}
    assert data["evictions"] == {}
    assert len([p for p in data["bindings"] if p.startswith("team-a/")]) == 8
    train = data["podGroups"]["team-a/llm-train"]
    assert set(train) == {"phase", "allocatedHyperNode", "conditions"}
    assert train["phase"] == "Running"
    assert train["allocatedHyperNode"] == "tor-2"
    pretrain = data["podGroups"]["team-c/pretrain"]
    assert "tier 1: 0/4 fit (nvidia.com/gpu short by 12)" in pretrain["conditions"][0]["message"]


@pytest.mark.parametrize("output", ["yaml", "table"])
def test_simulate_other_outputs(capsys: pytest.CaptureFixture[str], output: str) -> None:
    code, out, _ = _run(capsys, "simulate", "--cluster", CLUSTER, "-o", output)
    assert code == 0
    assert "team-a/llm-train" in out


def test_simulate_bad_file_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: object) -> None:
    code, _, err = _run(capsys, "simulate", "--cluster", "/nonexistent.yaml")
    assert code == 2
    assert "/nonexistent.yaml" in err


def test_simulate_bad_conf_names_key(capsys: pytest.CaptureFixture[str], tmp_path: object) -> None:
    import pathlib

    conf = pathlib.Path(str(tmp_path)) / "conf"
    conf.write_text('actions: "allocate, backfil"\n')
    code, _, err = _run(capsys, "simulate", "--cluster", CLUSTER, "--scheduler-conf", str(conf))
    assert code == 2
    assert "unknown action 'backfil'" in err


@pytest.mark.parametrize("name", ["CHART_CONF", "CHART_CI_CONF"])
def test_simulate_loads_volcano_chart_confs_unchanged(
    capsys: pytest.CaptureFixture[str], tmp_path: object, name: str
) -> None:
    import pathlib

    from tests.unit.scheduler import test_volcano_conf

    conf = pathlib.Path(str(tmp_path)) / "conf"
    conf.write_text(getattr(test_volcano_conf, name))
    code, out, _ = _run(
        capsys, "simulate", "--cluster", CLUSTER, "--scheduler-conf", str(conf), "-o", "json"
    )
    assert code == 0
    data = json.loads(out)
    _, default_out, _ = _run(capsys, "simulate", "--cluster", CLUSTER, "-o", "json")
    default = json.loads(default_out)
    assert len(data["bindings"]) == len(default["bindings"]) > 0
    phases = {k: pg["phase"] for k, pg in data["podGroups"].items()}
    assert phases == {k: pg["phase"] for k, pg in default["podGroups"].items()}


def test_explain_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "explain", "--cluster", CLUSTER, "--job", "team-a/llm-train")
    data = json.loads(out)
    assert code == 0
    assert data["tiers"] == [1, 2]  # the virtual cluster top is no tier of the cluster
    assert data["highestTierAllowed"] == 2
    assert data["allocatedHyperNode"] == ""
    assert data["gradients"] == [
        {"tier": 1, "hyperNodes": ["tor-2", "tor-3", "tor-4"]},
        {"tier": 2, "hyperNodes": ["spine-1", "spine-2"]},
    ]
    assert set(data["hyperNodeScores"]) == {"tor-2", "tor-3", "tor-4", "spine-1", "spine-2"}
    task = data["tasks"]["team-a/llm-train-0"]["nodes"]
    assert set(task) == {f"node-{i}" for i in range(1, 9)}
    entry = task["node-2"]
    assert entry["feasible"]
    assert entry["reason"] == ""
    assert set(entry["scores"]) == {"nodeorder", "network-topology-aware"}
    assert entry["scores"]["nodeorder"] > 0  # its per-node score, not only its batch one
    assert entry["total"] == pytest.approx(sum(entry["scores"].values()))


def test_explain_unknown_job_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "explain", "--cluster", CLUSTER, "--job", "x/y")
    assert code == 1
    assert "namespaces with PodGroups: serving, team-a, team-b, team-c" in err
    code, _, err = _run(capsys, "explain", "team-a/nope", "--cluster", CLUSTER)
    assert code == 1
    assert "PodGroups in team-a: team-a/llm-train" in err


def test_tree_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "tree", "--cluster", CLUSTER, "-o", "json")
    data = json.loads(out)
    assert code == 0
    assert data["ready"]
    assert data["errors"] == []
    tor1 = data["hyperNodes"]["tor-1"]
    assert tor1["tier"] == 1
    assert tor1["tierName"] == "tor"
    assert tor1["parent"] == "spine-1"
    assert tor1["nodes"] == ["node-1", "node-2"]
    assert tor1["nodeCount"] == 2
    assert tor1["free"]["gpu"] == "6"
    assert tor1["allocatable"]["gpu"] == "8"
    assert data["hyperNodes"]["spine-1"]["children"] == ["tor-1", "tor-2"]


def test_tree_svg_is_well_formed(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "tree", "--cluster", CLUSTER, "-o", "svg")
    root = ET.fromstring(out)
    assert code == 0
    assert root.tag.endswith("svg")
    assert "tor-1" in out
    assert "spine-2" in out


def test_simulate_queue_in_snapshot_caps_what_is_bound(
    capsys: pytest.CaptureFixture[str], tmp_path: object
) -> None:
    import pathlib

    import yaml

    from tests.unit.scheduler.objects import node, pod, podgroup, queue

    objects = [node("n1", {"cpu": 4}), node("n2", {"cpu": 4})]
    objects.append(queue("capped", weight=1, capability={"cpu": 2}))
    objects.append(podgroup("elastic", 1, queue="capped"))
    objects += [pod(f"p{i}", "elastic", {"cpu": "300m"}) for i in range(10)]
    cluster = pathlib.Path(str(tmp_path)) / "cluster.yaml"
    cluster.write_text(yaml.safe_dump_all(objects))
    chart = "examples/scheduler/volcano-chart-topology.conf"
    code, out, _ = _run(
        capsys, "simulate", "--cluster", str(cluster), "--scheduler-conf", chart, "-o", "json"
    )
    assert code == 0
    assert len(json.loads(out)["bindings"]) == 6  # 6 x 300m <= 2 cpu < 7 x 300m


def test_manager_refuses_bad_scheduler_conf_with_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: object
) -> None:
    import pathlib

    conf = pathlib.Path(str(tmp_path)) / "conf"
    conf.write_text("tiers: [{plugins: [{name: gang, enableJobStarving: maybe}]}]\n")
    code, _, err = _run(capsys, "manager", "--scheduler-conf", str(conf))
    assert code == 2
    assert err.count("\n") == 1
    assert "enableJobStarving: expected a boolean" in err


def _partitioned_cluster(tmp_path: object) -> str:
    import pathlib

    import yaml

    from tests.unit.scheduler.objects import expand

    here = pathlib.Path(__file__).parent / "scenarios" / "subjob_partitions_one_rack_each.yaml"
    objects = expand(yaml.safe_load(here.read_text())["cluster"])
    path = pathlib.Path(str(tmp_path)) / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(objects))
    return str(path)


def test_simulate_json_lists_sub_jobs(capsys: pytest.CaptureFixture[str], tmp_path: object) -> None:
    code, out, _ = _run(capsys, "simulate", "--cluster", _partitioned_cluster(tmp_path))
    assert code == 0
    sub_jobs = json.loads(out)["podGroups"]["default/job"]["subJobs"]
    assert sub_jobs["tp/0"] == {
        "allocatedHyperNode": "tor-1",
        "pods": ["job-0", "job-1", "job-2", "job-3"],
    }
    assert {k: v["allocatedHyperNode"] for k, v in sub_jobs.items()} == {
        "tp/0": "tor-1",
        "tp/1": "tor-1",
        "tp/2": "tor-2",
        "tp/3": "tor-2",
    }


def test_explain_shows_sub_jobs(capsys: pytest.CaptureFixture[str], tmp_path: object) -> None:
    cluster = _partitioned_cluster(tmp_path)
    code, out, _ = _run(capsys, "explain", "--cluster", cluster, "--job", "default/job")
    assert code == 0
    report = json.loads(out)["subJobs"]
    assert report["domain"] == "spine-1"
    assert list(report["subJobs"]) == ["tp/0", "tp/1", "tp/2", "tp/3"]
    tp0 = report["subJobs"]["tp/0"]
    assert tp0["pods"] == ["job-0", "job-1", "job-2", "job-3"]
    assert tp0["gradients"] == [{"tier": 1, "hyperNodes": ["tor-1", "tor-2"]}]
    assert set(tp0["hyperNodeScores"]) == {"tor-1", "tor-2"}
    code, out, _ = _run(
        capsys, "explain", "--cluster", cluster, "--job", "default/job", "-o", "text"
    )
    assert "SubJobs (gradients inside domain spine-1):" in out
    assert "  tp/0: 4 pods (needs 4), allocatedHyperNode=-: job-0, job-1, job-2, job-3" in out


@pytest.mark.parametrize("implicit", ["true", "false"])
def test_simulate_schedules_bare_pods_unless_implicit_podgroups_is_off(
    capsys: pytest.CaptureFixture[str], tmp_path: object, implicit: str
) -> None:
    import pathlib

    import yaml

    from tests.unit.scheduler.objects import node, pod

    objects = [node("n1", {"cpu": 4}), pod("bare", requests={"cpu": 1})]
    cluster = pathlib.Path(str(tmp_path)) / "cluster.yaml"
    cluster.write_text(yaml.safe_dump_all(objects))
    argv = ["simulate", "--cluster", str(cluster), f"--implicit-podgroups={implicit}"]
    code, out, _ = _run(capsys, *argv, "-o", "json")
    assert code == 0
    bindings = json.loads(out)["bindings"]
    assert bindings == ({"default/bare": "n1"} if implicit == "true" else {})
