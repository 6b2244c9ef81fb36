"""The pytorch, mpi and tensorflow job plugins: the environment and ports they give pods."""

from __future__ import annotations

import json
from typing import Any

from tests.unit.controllers.job.jobfakes import load_job
from volcano_py.api.vcjob import JobView
from volcano_py.controllers.job.builder import build_pod
from volcano_py.controllers.job.frameworks import MpiPlugin, PytorchPlugin, TensorflowPlugin
from volcano_py.controllers.job.plugin_registry import plugins_of

JOB = load_job("""
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: train}
spec:
  minAvailable: 3
  tasks:
    - {name: master, replicas: 1, template: {spec: {containers: [{name: m}]}}}
    - {name: worker, replicas: 2, template: {spec: {containers: [{name: w}]}}}
""")
VIEW = JobView.from_dict(JOB)


def pod(task: int, ix: int) -> dict[str, Any]:
    return build_pod(JOB, VIEW, VIEW.tasks[task], ix)


def env(p: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e["value"] for e in p["spec"]["containers"][0].get("env", [])}


def test_pytorch_gives_master_address_world_size_and_ranks() -> None:
    master, worker = pod(0, 0), pod(1, 1)
    for p in (master, worker):
        PytorchPlugin(()).on_pod_create(p, VIEW)
    assert env(master) == {"MASTER_ADDR": "train-master-0.train", "MASTER_PORT": "23456",
                           "WORLD_SIZE": "3", "RANK": "0"}  # fmt: skip
    assert env(worker)["RANK"] == "2"
    assert worker["spec"]["containers"][0]["ports"] == [
        {"name": "pytorchjob-port", "containerPort": 23456}
    ]
    assert "initContainers" not in worker["spec"]


def test_pytorch_waits_for_the_master_when_asked() -> None:
    worker = pod(1, 0)
    PytorchPlugin(("--wait-master-enabled", "--port=29500")).on_pod_create(worker, VIEW)
    (init,) = worker["spec"]["initContainers"]
    assert init["name"] == "wait-for-master"
    assert "train-master-0.train 29500" in init["command"][2]


def test_mpi_opens_the_port_and_gives_the_master_the_workers() -> None:
    master, worker = pod(0, 0), pod(1, 0)
    for p in (master, worker):
        MpiPlugin(()).on_pod_create(p, VIEW)
    assert env(master) == {"MPI_HOST": "train-worker-0.train,train-worker-1.train"}
    assert env(worker) == {}
    assert worker["spec"]["containers"][0]["ports"] == [
        {"name": "mpijob-port", "containerPort": 22}
    ]


def test_tensorflow_tf_config_names_the_cluster_and_the_task() -> None:
    worker = pod(1, 1)
    TensorflowPlugin(("--chief=master",)).on_pod_create(worker, VIEW)
    config = json.loads(env(worker)["TF_CONFIG"])
    assert config == {
        "cluster": {"chief": ["train-master-0.train:2222"],
                    "worker": ["train-worker-0.train:2222", "train-worker-1.train:2222"]},
        "task": {"type": "worker", "index": 1},
    }  # fmt: skip


def test_registry_builds_known_plugins_in_name_order_and_names_the_rest() -> None:
    job = dict(JOB, spec={**JOB["spec"], "plugins": {"svc": [], "pytorch": [], "nope": []}})
    plugins, unknown = plugins_of(JobView.from_dict(job))
    assert [p.name for p in plugins] == ["pytorch", "svc"]
    assert unknown == ["nope"]
