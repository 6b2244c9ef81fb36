"""Kubernetes' own PodGroups scheduled by volcano-py with the HyperNode tree (gates on).

A standalone gang PodGroup and a ``batch/v1`` Job with ``spec.scheduling`` land in one rack
(the rack HyperNodes' ``tierName`` is the groups' topology key); a gang too big for any rack
waits whole, with kube-scheduler's ``PodGroupInitiallyScheduled=False`` / ``Unschedulable``
condition carrying our per-tier shortfall, and an Event on the native PodGroup.
"""

from __future__ import annotations

from typing import Any

from tests.builders import exact, pod_body
from tests.integration.scheduler.conftest import Topology, wait_for
from volcano_py.api import resources as R
from volcano_py.api.native_groups import INITIALLY_SCHEDULED
from volcano_py.cli import main
from volcano_py.kube.client import KubeClient

RACK = "example.com/rack"
JSON = dict[str, Any]


def _two_racks(topo: Topology) -> dict[str, set[str]]:
    """Four 2-GPU nodes, two racks (tierName: the rack key) under one spine."""
    nodes = [topo.node(f"n{i}", 2) for i in range(4)]
    racks = {}
    for r in range(2):
        name = topo.hypernode(f"rack-{r}", 1, [exact(nodes[2 * r]), exact(nodes[2 * r + 1])])
        racks[name] = set(nodes[2 * r : 2 * r + 2])
    topo.hypernode("spine", 2, [exact(n, "HyperNode") for n in sorted(racks)])
    for name in [*racks, f"{topo.prefix}-spine"]:
        hn = topo.client.get(R.HYPERNODES, name)
        hn["spec"]["tierName"] = RACK if name in racks else "example.com/spine"
        topo.client.update(R.HYPERNODES, hn)
    return racks


def _native_podgroup(
    client: KubeClient, ns: str, name: str, min_count: int, workload_ref: JSON | None = None
) -> None:
    spec: JSON = {
        "schedulingPolicy": {"gang": {"minCount": min_count}},
        "schedulingConstraints": {"topology": [{"key": RACK}]},
    }
    if workload_ref is not None:
        spec["workloadRef"] = workload_ref
    client.create(
        R.NATIVE_PODGROUPS,
        {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": name, "namespace": ns},
            "spec": spec,
        },
        ns,
    )


def _member(client: KubeClient, ns: str, topo: Topology, name: str, group: str) -> None:
    body = pod_body(name, ns, requests={topo.gpu: "1", "cpu": "100m"})
    body["spec"]["schedulingGroup"] = {"podGroupName": group}
    client.create(R.PODS, body, ns)


def _nodes_of(client: KubeClient, ns: str, names: list[str]) -> dict[str, str]:
    pods = {p["metadata"]["name"]: p for p in client.list(R.PODS, ns)["items"]}
    return {n: pods[n]["spec"].get("nodeName", "") for n in names if n in pods}


def _condition(
    client: KubeClient, ns: str, name: str, resource: R.APIResource = R.NATIVE_PODGROUPS
) -> JSON | None:
    """The ``PodGroupInitiallyScheduled`` condition of a native PodGroup (or ``resource``)."""
    pg = client.get(resource, name, ns)
    for c in (pg.get("status") or {}).get("conditions") or []:
        if c["type"] == INITIALLY_SCHEDULED:
            return dict(c)
    return None


def _scheduled(
    client: KubeClient, ns: str, name: str, resource: R.APIResource = R.NATIVE_PODGROUPS
) -> JSON:
    """The group's condition once it says True (a False one may come first: pods arriving)."""
    condition: JSON = wait_for(
        lambda: (c := _condition(client, ns, name, resource)) and c["status"] == "True" and c
    )
    return condition


def test_standalone_native_gang_lands_in_one_rack_and_is_initially_scheduled(
    client: KubeClient, namespace: str, topology: Topology, run_scheduler: Any
) -> None:
    racks = _two_racks(topology)
    _native_podgroup(client, namespace, "train", 4)
    names = [f"train-{i}" for i in range(4)]
    for n in names:
        _member(client, namespace, topology, n, "train")
    run_scheduler()  # after the objects: they arrive by LIST (items without apiVersion/kind)
    placed = wait_for(lambda: (p := _nodes_of(client, namespace, names)) and all(p.values()) and p)
    assert any(set(placed.values()) <= nodes for nodes in racks.values()), placed
    assert _scheduled(client, namespace, "train")["reason"] == "Scheduled"
    # one gang object per pod: no Volcano PodGroup was made for them
    assert client.list(R.PODGROUPS, namespace)["items"] == []


def test_native_gang_too_big_for_any_rack_waits_with_its_reason(
    client: KubeClient, namespace: str, topology: Topology, run_scheduler: Any
) -> None:
    _two_racks(topology)
    run_scheduler()
    _native_podgroup(client, namespace, "big", 5)
    names = [f"big-{i}" for i in range(5)]
    for n in names:
        _member(client, namespace, topology, n, "big")
    # while its pods are still being created the gang lacks some; then no rack holds it
    condition = wait_for(
        lambda: (
            (c := _condition(client, namespace, "big")) and "tier 1: 0/2 fit" in c["message"] and c
        )
    )
    assert (condition["status"], condition["reason"]) == ("False", "Unschedulable")
    events = wait_for(
        lambda: [
            e
            for e in client.list(R.EVENTS, namespace)["items"]
            if e["involvedObject"].get("kind") == "PodGroup"
            and e["involvedObject"].get("apiVersion") == "scheduling.k8s.io/v1beta1"
            and e["involvedObject"].get("name") == "big"
        ]
    )
    assert any(e["reason"] == "Unschedulable" for e in events), events
    assert not any(_nodes_of(client, namespace, names).values())  # never partly bound


def test_job_with_spec_scheduling_runs_as_one_gang_in_one_rack(
    client: KubeClient, namespace: str, topology: Topology, run_scheduler: Any
) -> None:
    racks = _two_racks(topology)
    run_scheduler()
    template = pod_body("x", namespace, requests={topology.gpu: "1", "cpu": "100m"})
    template["spec"]["restartPolicy"] = "Never"
    client.create(
        R.JOBS,
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "trainer", "namespace": namespace},
            "spec": {
                "parallelism": 4,
                "completions": 4,
                "completionMode": "Indexed",
                "scheduling": {
                    "schedulingPolicy": {"gang": {"minCount": 4}},
                    "schedulingConstraints": {"topology": [{"key": RACK}]},
                },
                "template": {"metadata": {}, "spec": template["spec"]},
            },
        },
        namespace,
    )
    groups = wait_for(lambda: client.list(R.NATIVE_PODGROUPS, namespace)["items"])
    assert len(groups) == 1
    group = groups[0]["metadata"]["name"]

    def placed() -> dict[str, str] | None:
        pods = client.list(R.PODS, namespace)["items"]
        nodes = {p["metadata"]["name"]: p["spec"].get("nodeName", "") for p in pods}
        return nodes if len(nodes) == 4 and all(nodes.values()) else None

    nodes = wait_for(placed, timeout=60)
    assert any(set(nodes.values()) <= rack for rack in racks.values()), nodes
    assert _scheduled(client, namespace, group)["reason"] == "Scheduled"


def test_explain_finds_a_jobs_native_gang_by_the_job_name(
    client: KubeClient, namespace: str, topology: Topology, workload_plane: Any, capsys: Any
) -> None:
    _two_racks(topology)
    template = pod_body("x", namespace, requests={topology.gpu: "1", "cpu": "100m"})
    template["spec"]["restartPolicy"] = "Never"
    scheduling = {
        "schedulingPolicy": {"gang": {"minCount": 5}},
        "schedulingConstraints": {"topology": [{"key": RACK}]},
    }
    spec = {"parallelism": 5, "completions": 5, "completionMode": "Indexed"}
    body = {
        "metadata": {"name": "wide", "namespace": namespace},
        "spec": {**spec, "scheduling": scheduling, "template": {"spec": template["spec"]}},
    }
    client.create(R.JOBS, body, namespace)
    group = wait_for(lambda: client.list(R.NATIVE_PODGROUPS, namespace)["items"])[0]
    name = group["metadata"]["name"]
    wait_for(lambda: len(client.list(R.PODS, namespace)["items"]) == 5)
    argv = ["explain", f"{namespace}/wide", "--kubeconfig", str(workload_plane.kubeconfig)]
    assert main([*argv, "-o", "text"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"{namespace}/{name}: waits for {topology.gpu} short by"), lines
    assert lines[1] == f"{namespace}/wide: Job wide -> PodGroup {name}", lines


def test_a_podgroup_naming_a_missing_workload_waits_until_the_workload_is_created(
    client: KubeClient,
    namespace: str,
    topology: Topology,
    run_scheduler: Any,
    workload_plane: Any,
    capsys: Any,
) -> None:
    racks = _two_racks(topology)
    ref = {"workloadName": "train", "templateName": "worker"}
    _native_podgroup(client, namespace, "train", 4, ref)
    names = [f"train-{i}" for i in range(4)]
    for n in names:
        _member(client, namespace, topology, n, "train")
    said = f"Workload {namespace}/train (spec.workloadRef.workloadName) does not exist"
    argv = ["explain", f"{namespace}/train", "--kubeconfig", str(workload_plane.kubeconfig)]
    assert main([*argv, "-o", "text"]) == 0
    out = capsys.readouterr().out
    assert said in out, out
    run_scheduler()
    condition = wait_for(
        lambda: (c := _condition(client, namespace, "train")) and said in c["message"] and c
    )
    assert (condition["status"], condition["reason"]) == ("False", "Unschedulable")
    assert not any(_nodes_of(client, namespace, names).values())  # not one pod bound
    client.create(
        R.NATIVE_WORKLOADS,
        {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "Workload",
            "metadata": {"name": "train", "namespace": namespace},
            "spec": {
                "podGroupTemplates": [
                    {
                        "name": "worker",
                        "schedulingPolicy": {"gang": {"minCount": 4}},
                        "schedulingConstraints": {"topology": [{"key": RACK}]},
                    }
                ]
            },
        },
        namespace,
    )
    placed = wait_for(lambda: (p := _nodes_of(client, namespace, names)) and all(p.values()) and p)
    assert any(set(placed.values()) <= nodes for nodes in racks.values()), placed
    assert _scheduled(client, namespace, "train")["reason"] == "Scheduled"
