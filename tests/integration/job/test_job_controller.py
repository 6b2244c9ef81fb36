"""job-controller + the scheduler on the real control plane, kwok as kubelets.

Four racks of two 2-GPU nodes under two spines (a rack holds four one-GPU pods). The network
topology guide's vcjobs, applied as a Volcano user writes them (only the GPU request is the
test's own resource, so nodes of other tests never fit): the job's PodGroup goes Inqueue
without pods, then the controller creates ``<job>-<task>-<index>`` pods, the scheduler binds
them, kwok runs them and the Job turns Running. Pod phases set through the status
subresource drive completion and policies; deleting the Job removes its pods and PodGroup.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.job.conftest import job_pods, phase, vcjob
from tests.integration.scheduler.conftest import Topology, wait_for
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import NotFound

JSON = dict[str, Any]


def rack_of(racks: dict[str, list[str]], node: str) -> str:
    return next(rack for rack, nodes in racks.items() if node in nodes)


def test_guides_hard_tier1_vcjob_runs_inside_one_rack(
    client: KubeClient, namespace: str, topology: Topology, job_cluster: dict[str, list[str]]
) -> None:
    racks = job_cluster
    client.create(R.VCJOBS, vcjob("nt-job", namespace, topology, replicas=4, min_available=4,
                                   tier=1))  # fmt: skip

    def four_running() -> bool:
        pods = job_pods(client, namespace, "nt-job")
        return len(pods) == 4 and all(p["status"].get("phase") == "Running" for p in pods)

    wait_for(four_running, timeout=90)
    pods = job_pods(client, namespace, "nt-job")
    assert [p["metadata"]["name"] for p in pods] == [f"nt-job-t0-{i}" for i in range(4)]
    assert len({rack_of(racks, p["spec"]["nodeName"]) for p in pods}) == 1
    uid = client.get(R.VCJOBS, "nt-job", namespace)["metadata"]["uid"]
    pod = pods[0]
    assert pod["metadata"]["annotations"]["scheduling.k8s.io/group-name"] == f"nt-job-{uid}"
    assert pod["metadata"]["labels"]["volcano.sh/task-spec"] == "t0"
    assert pod["metadata"]["ownerReferences"][0]["uid"] == uid
    wait_for(lambda: phase(client, namespace, "nt-job") == "Running", timeout=60)
    wait_for(lambda: client.get(R.VCJOBS, "nt-job", namespace)["status"].get("running") == 4)
    assert client.get(R.VCJOBS, "nt-job", namespace)["status"]["minAvailable"] == 4
    pg = client.get(R.PODGROUPS, f"nt-job-{uid}", namespace)
    assert pg["spec"]["networkTopology"] == {"mode": "hard", "highestTierAllowed": 1}

    # Every pod succeeds (as a kubelet would report it): the Job completes and its
    # PodGroup is removed; the succeeded pods stay.
    for p in pods:
        client.patch(R.PODS, p["metadata"]["name"], {"status": {"phase": "Succeeded"}},
                     namespace, subresource="status")  # fmt: skip
    wait_for(lambda: phase(client, namespace, "nt-job") == "Completed", timeout=60)
    wait_for(lambda: _gone(client, R.PODGROUPS, f"nt-job-{uid}", namespace), timeout=30)
    assert len(job_pods(client, namespace, "nt-job")) == 4


def test_guides_partitioned_vcjob_puts_each_partition_in_one_rack(
    client: KubeClient, namespace: str, topology: Topology, job_cluster: dict[str, list[str]]
) -> None:
    racks = job_cluster
    partition = {"totalPartitions": 2, "partitionSize": 4,
                 "networkTopology": {"mode": "hard", "highestTierAllowed": 1}}  # fmt: skip
    client.create(R.VCJOBS, vcjob("part-job", namespace, topology, replicas=8, min_available=8,
                                   tier=2, partition=partition))  # fmt: skip
    wait_for(lambda: phase(client, namespace, "part-job") == "Running", timeout=120)
    pods = job_pods(client, namespace, "part-job")
    assert len(pods) == 8
    by_partition: dict[str, set[str]] = {}
    for p in pods:
        part = p["metadata"]["labels"]["volcano.sh/partition-id"]
        by_partition.setdefault(part, set()).add(rack_of(racks, p["spec"]["nodeName"]))
    assert sorted(by_partition) == ["0", "1"]
    assert all(len(r) == 1 for r in by_partition.values()), by_partition

    # Deleting the Job removes its pods and PodGroup (owner references, the garbage collector).
    uid = client.get(R.VCJOBS, "part-job", namespace)["metadata"]["uid"]
    client.delete(R.VCJOBS, "part-job", namespace)
    wait_for(lambda: not job_pods(client, namespace, "part-job"), timeout=90)
    wait_for(lambda: _gone(client, R.PODGROUPS, f"part-job-{uid}", namespace), timeout=60)


@pytest.mark.usefixtures("job_cluster")
def test_pod_failed_policy_restarts_the_job_with_a_new_version(
    client: KubeClient, namespace: str, topology: Topology
) -> None:
    body = vcjob("pol-job", namespace, topology, replicas=2, min_available=2, tier=1,
                 policies=[{"event": "PodFailed", "action": "RestartJob"}], maxRetry=3)  # fmt: skip
    client.create(R.VCJOBS, body)
    wait_for(lambda: phase(client, namespace, "pol-job") == "Running", timeout=90)
    first = job_pods(client, namespace, "pol-job")[0]
    client.patch(R.PODS, first["metadata"]["name"], {"status": {"phase": "Failed"}}, namespace,
                 subresource="status")  # fmt: skip

    def restarted() -> bool:
        status = client.get(R.VCJOBS, "pol-job", namespace).get("status") or {}
        return bool(status.get("retryCount") == 1 and status.get("version", 0) >= 1)

    wait_for(restarted, timeout=60)
    # The job comes back: new pods (job-version 1) run again.
    wait_for(lambda: phase(client, namespace, "pol-job") == "Running"
             and all(p["metadata"]["annotations"]["volcano.sh/job-version"] == "1"
                     and p["status"].get("phase") == "Running"
                     for p in job_pods(client, namespace, "pol-job"))
             and len(job_pods(client, namespace, "pol-job")) == 2, timeout=120)  # fmt: skip
    events = client.list(R.EVENTS, namespace,
                         field_selector="involvedObject.name=pol-job")["items"]  # fmt: skip
    reasons = {e["reason"] for e in events}
    assert {"ExecuteAction", "JobPhaseChanged"} <= reasons


def _gone(client: KubeClient, resource: R.APIResource, name: str, ns: str) -> bool:
    try:
        client.get(resource, name, ns)
    except NotFound:
        return True
    return False


def command(ns: str, name: str, job: JSON, action: str) -> JSON:
    """What ``vcctl job suspend`` / ``resume`` create."""
    meta = job["metadata"]
    return {
        "apiVersion": "bus.volcano.sh/v1alpha1",
        "kind": "Command",
        "metadata": {"name": name, "namespace": ns},
        "action": action,
        "target": {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                   "name": meta["name"], "uid": meta["uid"], "controller": True},
    }  # fmt: skip


@pytest.mark.usefixtures("job_cluster")
def test_suspend_and_resume_commands(
    client: KubeClient, namespace: str, topology: Topology
) -> None:
    client.create(R.VCJOBS, vcjob("cmd-job", namespace, topology, replicas=2, min_available=2,
                                   tier=1))  # fmt: skip
    wait_for(lambda: phase(client, namespace, "cmd-job") == "Running", timeout=90)
    job = client.get(R.VCJOBS, "cmd-job", namespace)
    client.create(R.COMMANDS, command(namespace, "suspend", job, "AbortJob"))
    wait_for(lambda: phase(client, namespace, "cmd-job") == "Aborted", timeout=90)
    assert job_pods(client, namespace, "cmd-job") == []
    assert _gone(client, R.COMMANDS, "suspend", namespace)
    client.create(R.COMMANDS, command(namespace, "resume", job, "ResumeJob"))
    wait_for(lambda: phase(client, namespace, "cmd-job") == "Running"
             and len(job_pods(client, namespace, "cmd-job")) == 2, timeout=120)  # fmt: skip
    assert client.get(R.VCJOBS, "cmd-job", namespace)["status"]["retryCount"] == 1
