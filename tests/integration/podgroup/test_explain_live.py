"""``volcano-py explain NS/NAME`` on the live cluster, by each kind of owner.

One rack of two 4-GPU nodes; every workload is a gang of three 4-GPU pods that must stay in
one rack (hard, tier 1), so each is short of 4 GPUs there. The workloads are made as their
controllers make them: Deployments, StatefulSets and batch Jobs by kube-controller-manager
with pg-controller writing the PodGroup; a Volcano Job's PodGroup ``<job>-<uid>`` owned by the
Job (as job-controller writes it); KubeRay's ``ray-<name>-pg`` and the training operator's
PodGroup owned by their custom kinds; an LWS group's PodGroup owned by its leader pod, whose
StatefulSet the LWS owns. ``explain`` gets only the name the user applied.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from devcluster.harness import ControlPlane
from tests.builders import exact, pod_body
from tests.integration.operators.common import owner
from tests.integration.podgroup.conftest import RunningController, wait_until
from tests.integration.scheduler.conftest import Topology
from volcano_py.api import resources as R
from volcano_py.cli import main
from volcano_py.kube.client import KubeClient

JSON = dict[str, Any]
GANG = 3
GPUS_EACH = 4
TOPOLOGY = {
    "volcano.sh/network-topology-mode": "hard",
    "volcano.sh/network-topology-highest-tier": "1",
}


@pytest.fixture
def rack(client: KubeClient) -> Any:
    topo = Topology(client)
    nodes = [topo.node("n1", GPUS_EACH), topo.node("n2", GPUS_EACH)]
    topo.hypernode("rack", 1, [exact(n) for n in nodes])
    yield topo
    topo.cleanup()


def _template(topo: Topology, labels: dict[str, str], annotations: dict[str, str]) -> JSON:
    body = pod_body("x", "x", requests={topo.gpu: str(GPUS_EACH)}, annotations=annotations)
    body["metadata"] = {"labels": labels, "annotations": annotations}
    body["spec"]["containers"][0]["resources"]["limits"] = {topo.gpu: str(GPUS_EACH)}
    return body


def _workload(kind: str, name: str, template: JSON) -> tuple[Any, JSON]:
    meta = {"name": name, "annotations": {"scheduling.volcano.sh/group-min-member": str(GANG)}}
    selector = {"matchLabels": template["metadata"]["labels"]}
    if kind == "Deployment":
        spec = {"replicas": GANG, "selector": selector, "template": template}
        return R.DEPLOYMENTS, {"metadata": meta, "spec": spec}
    if kind == "StatefulSet":
        spec = {
            "replicas": GANG,
            "selector": selector,
            "template": template,
            "serviceName": name,
            "podManagementPolicy": "Parallel",
        }
        return R.STATEFULSETS, {"metadata": meta, "spec": spec}
    template["spec"]["restartPolicy"] = "Never"
    spec = {"parallelism": GANG, "completions": GANG, "template": template}
    return R.JOBS, {"metadata": meta, "spec": spec}


def _by_pg_controller(kind: str) -> Callable[[KubeClient, str, Topology], str]:
    """A Deployment, StatefulSet or Job run by kube-controller-manager; pg-controller's PodGroup."""

    def make(client: KubeClient, ns: str, topo: Topology) -> str:
        name = f"{kind.lower()}-gang"
        template = _template(topo, {"app": name}, dict(TOPOLOGY))
        resource, body = _workload(kind, name, template)
        client.create(resource, body, ns)
        return name

    return make


def _podgroup(name: str, owners: list[JSON], topo: Topology) -> JSON:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "ownerReferences": owners},
        "spec": {
            "minMember": GANG,
            "minResources": {topo.gpu: str(GANG * GPUS_EACH)},
            "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
        },
    }


def _pods(
    client: KubeClient, ns: str, topo: Topology, prefix: str, group: str, owners: list[JSON]
) -> None:
    for i in range(GANG):
        body = pod_body(
            f"{prefix}-{i}",
            ns,
            requests={topo.gpu: str(GPUS_EACH)},
            annotations={"scheduling.k8s.io/group-name": group},
        )
        body["metadata"]["ownerReferences"] = owners
        client.create(R.PODS, body, ns)


def _vcjob(client: KubeClient, ns: str, topo: Topology) -> str:
    template = _template(topo, {"app": "train"}, {})
    task = {"name": "worker", "replicas": GANG, "template": template}
    body = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "train"},
        "spec": {"minAvailable": GANG, "schedulerName": "volcano", "tasks": [task]},
    }
    job = client.create(R.VCJOBS, body, ns)
    uid = job["metadata"]["uid"]
    owners = [owner("batch.volcano.sh/v1alpha1", "Job", "train", uid)]
    client.create(R.PODGROUPS, _podgroup(f"train-{uid}", owners, topo), ns)
    _pods(client, ns, topo, "train-worker", f"train-{uid}", owners)
    return "train"


def _operator(api_version: str, kind: str, name: str, group: str) -> Callable[..., str]:
    """An operator's custom kind owning the PodGroup and the pods (its CRD not installed)."""

    def make(client: KubeClient, ns: str, topo: Topology) -> str:
        owners = [owner(api_version, kind, name)]
        client.create(R.PODGROUPS, _podgroup(group, owners, topo), ns)
        _pods(client, ns, topo, name, group, owners)
        return name

    return make


def _lws(client: KubeClient, ns: str, topo: Topology) -> str:
    group = "vllm-0-5d8f7c9b4"
    annotations = {"scheduling.k8s.io/group-name": group}
    template = _template(topo, {"app": "vllm"}, annotations)
    _, body = _workload("StatefulSet", "vllm", template)
    body["metadata"]["ownerReferences"] = [
        owner("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", "vllm")
    ]
    client.create(R.STATEFULSETS, body, ns)
    leader = wait_until(lambda: _get_pod(client, ns, "vllm-0"), what="the LWS leader pod")
    pod_owner = owner("v1", "Pod", "vllm-0", leader["metadata"]["uid"])
    client.create(R.PODGROUPS, _podgroup(group, [pod_owner], topo), ns)
    return "vllm"


def _get_pod(client: KubeClient, ns: str, name: str) -> JSON | None:
    items = client.list_all(R.PODS, ns, field_selector=f"metadata.name={name}")
    return items[0] if items else None


KINDS: dict[str, tuple[Callable[..., str], str]] = {
    "deployment": (_by_pg_controller("Deployment"), "Deployment deployment-gang -> ReplicaSet "),
    "statefulset": (_by_pg_controller("StatefulSet"), "StatefulSet statefulset-gang -> PodGroup "),
    "batch-job": (_by_pg_controller("Job"), "Job job-gang -> PodGroup "),
    "vcjob": (_vcjob, "Job train -> PodGroup train-"),
    "raycluster": (
        _operator("ray.io/v1", "RayCluster", "gpu", "ray-gpu-pg"),
        "RayCluster gpu -> PodGroup ray-gpu-pg",
    ),
    "pytorchjob": (
        _operator("kubeflow.org/v1", "PyTorchJob", "bert", "bert"),
        "PodGroup bert",
    ),
    "lws": (_lws, "LeaderWorkerSet vllm -> StatefulSet vllm -> Pod vllm-0 -> PodGroup vllm-0-"),
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_explain_finds_the_gang_by_the_workloads_name_and_says_what_it_waits_for(
    kind: str,
    client: KubeClient,
    control_plane: ControlPlane,
    namespace: str,
    rack: Topology,
    pg_controller: RunningController,
    capsys: pytest.CaptureFixture[str],
) -> None:
    make, via = KINDS[kind]
    name = make(client, namespace, rack)

    def explained() -> JSON | None:
        capsys.readouterr()
        code = main(
            ["explain", f"{namespace}/{name}", "--kubeconfig", str(control_plane.kubeconfig)]
        )
        out = capsys.readouterr().out
        report = json.loads(out) if code == 0 else None
        # the gang is complete once every pod exists (controllers create them a little later)
        return report if report and len(report["tasks"]) == GANG else None

    report = wait_until(explained, what=f"explain {namespace}/{name} sees the whole gang")
    assert report["via"].startswith(via)
    assert report["summary"] == (
        f"{report['job']}: waits for {rack.gpu} short by {GANG * GPUS_EACH - 2 * GPUS_EACH} "
        "(in the roomiest tier-1 HyperNode it may use)"
    )
    assert 1 in report["tiers"]


@pytest.fixture
def raycluster(client: KubeClient, namespace: str, rack: Topology) -> str:
    """KubeRay's gang in ``namespace``: ``ns/gpu``, its PodGroup ``ray-gpu-pg``."""
    _operator("ray.io/v1", "RayCluster", "gpu", "ray-gpu-pg")(client, namespace, rack)
    return f"{namespace}/gpu"


def test_explain_text_starts_with_the_summary_and_an_unknown_name_is_refused(
    raycluster: str, control_plane: ControlPlane, rack: Topology, capsys: pytest.CaptureFixture[str]
) -> None:
    namespace = raycluster.split("/")[0]
    kubeconfig = str(control_plane.kubeconfig)
    code = main(["explain", raycluster, "--kubeconfig", kubeconfig, "-o", "text"])
    lines = capsys.readouterr().out.splitlines()
    assert code == 0
    assert lines[0] == (
        f"{namespace}/ray-gpu-pg: waits for {rack.gpu} short by 4 "
        "(in the roomiest tier-1 HyperNode it may use)"
    )
    assert lines[1] == f"{raycluster}: RayCluster gpu -> PodGroup ray-gpu-pg"
    code = main(["explain", f"{namespace}/nothing", "--kubeconfig", kubeconfig])
    assert code == 1
    assert f"PodGroups in {namespace}: {namespace}/ray-gpu-pg" in capsys.readouterr().err


def test_explain_reads_the_schedulers_conf_from_its_configmap(
    raycluster: str,
    client: KubeClient,
    control_plane: ControlPlane,
    capsys: pytest.CaptureFixture[str],
) -> None:
    namespace = raycluster.split("/")[0]
    configmap = {
        "metadata": {"name": "volcano-scheduler-configmap"},
        "data": {"volcano-scheduler.conf": 'actions: "enqueue, allocate, nosuchaction"\n'},
    }
    client.create(R.CONFIGMAPS, configmap, namespace)
    argv = ["explain", raycluster, "--kubeconfig", str(control_plane.kubeconfig)]
    assert main([*argv, "--scheduler-namespace", namespace]) == 2
    assert "nosuchaction" in capsys.readouterr().err
    # a file given wins over the ConfigMap, as for the manager
    conf = "examples/scheduler/volcano-scheduler.conf"
    assert main([*argv, "--scheduler-namespace", namespace, "--scheduler-conf", conf]) == 0
