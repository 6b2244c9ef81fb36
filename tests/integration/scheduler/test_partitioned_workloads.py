"""Partitions for plain workloads on the real control plane: pg-controller + the scheduler.

Four racks of two nodes under two spines, each node 2 GPUs (a rack holds 4). A 16-pod indexed
Job annotated ``volcano.sh/partition-size: "4"`` (partitions hard within a rack) gets a
partitioned PodGroup from pg-controller, which labels each pod with its partition
(``index // 4``); the scheduler lands every partition in one rack. A killed pod is recreated
by the Job controller with the same index and rejoins its partition's rack, also when the
scheduler was restarted in between; no placed pod moves.
"""

from __future__ import annotations

from collections.abc import Callable

from tests.builders import delete_pod
from tests.integration.podgroup.conftest import RunningController
from tests.integration.scheduler.conftest import Topology, two_spines_of_two_racks, wait_for
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.scheduler.scheduler import Scheduler

PARTITION = "volcano.sh/partition-id"
INDEX = "batch.kubernetes.io/job-completion-index"


def _indexed_job(client: KubeClient, ns: str, topo: Topology, name: str) -> None:
    client.create(
        R.JOBS,
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": name,
                "namespace": ns,
                "annotations": {
                    "scheduling.volcano.sh/group-min-member": "16",
                    "volcano.sh/partition-size": "4",
                    "volcano.sh/partition-network-topology-mode": "hard",
                    "volcano.sh/partition-network-topology-highest-tier": "1",
                },
            },
            "spec": {
                "completionMode": "Indexed",
                "completions": 16,
                "parallelism": 16,
                "backoffLimit": 100,
                "template": {
                    "spec": {
                        "schedulerName": "volcano",
                        "restartPolicy": "Never",
                        "containers": [
                            {
                                "name": "main",
                                "image": "registry.k8s.io/pause:3.10",
                                "resources": {
                                    "requests": {topo.gpu: "1", "cpu": "100m"},
                                    "limits": {topo.gpu: "1"},
                                },
                            }
                        ],
                    }
                },
            },
        },
        ns,
    )


def _placement(client: KubeClient, ns: str, job: str) -> dict[str, tuple[str, str]]:
    """Live pods of the Job: name -> (completion index, node)."""
    pods = client.list_all(R.PODS, ns, label_selector=f"job-name={job}")
    return {
        p["metadata"]["name"]: (p["metadata"]["labels"].get(INDEX, ""), p["spec"].get("nodeName"))
        for p in pods
        if not p["metadata"].get("deletionTimestamp")
    }


def _all_bound(client: KubeClient, ns: str, job: str) -> dict[str, tuple[str, str]] | None:
    placed = _placement(client, ns, job)
    return placed if len(placed) == 16 and all(node for _, node in placed.values()) else None


def test_indexed_job_partitions_land_in_one_rack_and_replacements_rejoin_it(
    client: KubeClient,
    namespace: str,
    topology: Topology,
    run_scheduler: Callable[[], Callable[[], Scheduler]],
) -> None:
    racks = two_spines_of_two_racks(topology)
    rack_of = {node: rack for rack, nodes in racks.items() for node in nodes}
    controller = RunningController(client)
    try:
        stop = run_scheduler()
        _indexed_job(client, namespace, topology, "train")
        placed = wait_for(lambda: _all_bound(client, namespace, "train"), timeout=60)
        home: dict[int, set[str]] = {}
        for name, (index, node) in placed.items():
            labels = client.get(R.PODS, name, namespace)["metadata"]["labels"]
            assert labels[PARTITION] == str(int(index) // 4), name
            home.setdefault(int(index) // 4, set()).add(rack_of[node])
        assert all(len(r) == 1 for r in home.values()), home
        assert len({next(iter(r)) for r in home.values()}) == 4  # one rack per partition
        home_rack = {p: next(iter(r)) for p, r in home.items()}

        # kill the pod with index 5 (partition 1); the Job controller recreates index 5
        victim = next(n for n, (index, _) in placed.items() if index == "5")
        delete_pod(client, victim, namespace)
        again = wait_for(lambda: _all_bound(client, namespace, "train"), timeout=60)
        replacement = next(n for n, (index, _) in again.items() if index == "5")
        assert replacement != victim
        assert rack_of[again[replacement][1]] == home_rack[1]

        # restart the scheduler, kill index 10 (partition 2) while none runs: the new
        # scheduler recovers the partition's rack from its pods; nothing placed moves
        stop()
        victim = next(n for n, (index, _) in again.items() if index == "10")
        delete_pod(client, victim, namespace)
        run_scheduler()
        final = wait_for(lambda: _all_bound(client, namespace, "train"), timeout=60)
        replacement = next(n for n, (index, _) in final.items() if index == "10")
        assert rack_of[final[replacement][1]] == home_rack[2]
        kept = {n: v for n, v in again.items() if n != victim}
        assert {n: final[n] for n in kept} == kept
    finally:
        controller.stop()
