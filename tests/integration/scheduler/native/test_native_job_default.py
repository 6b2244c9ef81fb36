"""A ``batch/v1`` Job that asks for nothing, on a cluster with ``WorkloadWithJob`` on.

The Job controller makes a ``basic`` native PodGroup for it and names it in the pods; as
Volcano would, the pods get a Volcano PodGroup (of the native group's name) from
pg-controller, are placed by it, and it goes ``Completed`` when the Job's pod is done:
schedulingbase's "PodGroup's Phase with k8s Job in Completed" lists Volcano PodGroups.
"""

from __future__ import annotations

from typing import Any

from tests.builders import pod_body
from tests.integration.podgroup.conftest import RunningController
from tests.integration.scheduler.conftest import Topology, wait_for
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient


def test_job_without_spec_scheduling_gets_a_volcano_podgroup_that_completes(
    client: KubeClient, namespace: str, topology: Topology, run_scheduler: Any
) -> None:
    topology.node("n1", 4)
    run_scheduler()
    controller = RunningController(client)
    try:
        template = pod_body("x", namespace, requests={"cpu": "1"})
        template["spec"]["restartPolicy"] = "Never"
        job = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "job1", "namespace": namespace},
            "spec": {"template": {"metadata": {}, "spec": template["spec"]}},
        }
        client.create(R.JOBS, job, namespace)
        native = wait_for(lambda: client.list(R.NATIVE_PODGROUPS, namespace)["items"])
        groups = wait_for(lambda: client.list(R.PODGROUPS, namespace)["items"])
        assert [g["metadata"]["name"] for g in groups] == [native[0]["metadata"]["name"]]
        pod = wait_for(
            lambda: [
                p for p in client.list(R.PODS, namespace)["items"] if p["spec"].get("nodeName")
            ]
        )[0]
        name = pod["metadata"]["name"]
        client.patch(
            R.PODS, name, {"status": {"phase": "Succeeded"}}, namespace, subresource="status"
        )

        def phase() -> str:
            got = client.list(R.PODGROUPS, namespace)["items"]
            return str((got[0].get("status") or {}).get("phase", "")) if got else ""

        wait_for(lambda: phase() == "Completed")
    finally:
        controller.stop()
