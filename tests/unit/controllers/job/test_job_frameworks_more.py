"""The ray and hcclrank plugins: what they do to pods, and ray's head Service."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.controllers.job.jobfakes import RecordingClient, load_job
from volcano_py.api.vcjob import JobView
from volcano_py.controllers.job.builder import build_pod
from volcano_py.controllers.job.frameworks_more import HcclRankPlugin, RayPlugin
from volcano_py.controllers.job.plugins import PluginError

JOB = load_job("""
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: rc}
spec:
  minAvailable: 3
  plugins: {ray: [], svc: []}
  tasks:
    - name: head
      replicas: 1
      template: {spec: {containers: [{name: head, image: rayproject/ray}]}}
    - name: worker
      replicas: 2
      template: {spec: {containers: [{name: worker, image: rayproject/ray}]}}
""")
VIEW = JobView.from_dict(JOB)


def pod(task: int, ix: int) -> dict[str, Any]:
    return build_pod(JOB, VIEW, VIEW.tasks[task], ix)


def test_ray_head_gets_its_ports_and_ray_start_head() -> None:
    p = pod(0, 0)
    RayPlugin().on_pod_create(p, VIEW)
    (container,) = p["spec"]["containers"]
    assert container["command"] == ["sh", "-c",
        "ray start --head --block --dashboard-host=0.0.0.0 --port=6379 --dashboard-port=8265 "
        "--ray-client-server-port=10001"]  # fmt: skip
    assert [(x["name"], x["containerPort"]) for x in container["ports"]] == [
        ("gcs", 6379), ("dashboard", 8265), ("client-server", 10001)
    ]  # fmt: skip


def test_ray_worker_joins_the_head_pod_by_its_hostname() -> None:
    p = pod(1, 1)
    RayPlugin(("--port=7000",)).on_pod_create(p, VIEW)
    assert p["spec"]["containers"][0]["command"] == [
        "sh", "-c", "ray start --block --address=rc-head-0.rc:7000"
    ]  # fmt: skip


@pytest.mark.parametrize("args", [("--head=boss",), ("--port=http",)], ids=["no-head", "port"])
def test_ray_bad_arguments_are_a_plugin_error_naming_them(args: tuple[str, ...]) -> None:
    with pytest.raises(PluginError, match=r"boss|--port=http"):
        RayPlugin(args).on_pod_create(pod(1, 0), VIEW)


def test_ray_creates_the_head_service_owned_by_the_job_and_deletes_only_its_own() -> None:
    client = RecordingClient()
    RayPlugin().on_job_add(JOB, VIEW, client)
    (create,) = client.of("create", "services")
    service = create.body
    assert service["metadata"]["name"] == "rc-head-svc"
    assert service["metadata"]["ownerReferences"][0]["uid"] == "uid-1"
    assert service["spec"]["selector"] == {
        "volcano.sh/job-name": "rc", "volcano.sh/job-namespace": "ns",
        "volcano.sh/task-spec": "head",
    }  # fmt: skip
    assert [(x["name"], x["port"], x["targetPort"]) for x in service["spec"]["ports"]] == [
        ("gcs", 6379, "gcs"), ("dashboard", 8265, "dashboard"),
        ("client-server", 10001, "client-server"),
    ]  # fmt: skip
    RayPlugin().on_job_delete(JOB, VIEW, client)
    assert [c.name for c in client.of("delete", "services")] == ["rc-head-svc"]


@pytest.mark.parametrize(
    ("task", "ix", "env", "rank"),
    [(0, 0, None, "0"), (1, 1, None, "2"), (1, 0, "7", "7")],
    ids=["master", "worker-after-masters", "rank-env"],
)
def test_hcclrank_annotates_the_rank(task: int, ix: int, env: str | None, rank: str) -> None:
    view = JobView.from_dict(
        {**JOB, "spec": {**JOB["spec"], "tasks": [
            {**JOB["spec"]["tasks"][0], "name": "master"}, JOB["spec"]["tasks"][1]]}}
    )  # fmt: skip
    p = build_pod(JOB, view, view.tasks[task], ix)
    if env is not None:
        p["spec"]["containers"][0]["env"] = [{"name": "RANK", "value": env}]
    HcclRankPlugin().on_pod_create(p, view)
    assert p["metadata"]["annotations"]["hccl/rankIndex"] == rank
