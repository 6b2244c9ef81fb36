"""A vcjob whose pods keep apart by required anti-affinity, on the real control plane.

Volcano's "Predicates E2E Test Pod Anti-Affinity" as a user writes it: two pods of one job,
each refusing a node that runs a pod of the job (``kubernetes.io/hostname``). Both prefer the
same node (a preferred node affinity of weight 100), which would put the two on it had the
scheduler not counted the first pod, placed earlier in the same cycle, against the second.
"""

from __future__ import annotations

from collections.abc import Callable

from tests.integration.job.conftest import RunningJobController, job_pods, vcjob
from tests.integration.scheduler.conftest import Topology, wait_for
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.scheduler.scheduler import Scheduler

HOSTNAME = "kubernetes.io/hostname"


def test_two_pods_with_required_anti_affinity_are_bound_to_two_nodes(
    client: KubeClient,
    namespace: str,
    topology: Topology,
    run_scheduler: Callable[..., Callable[[], Scheduler]],
    job_controller: RunningJobController,
) -> None:
    nodes = [topology.node(f"n{i}", 2) for i in range(1, 4)]
    for name in nodes:
        client.patch(R.NODES, name, {"metadata": {"labels": {HOSTNAME: name}}})
    run_scheduler()
    job = vcjob("apart", namespace, topology, replicas=2, min_available=2, tier=1)
    del job["spec"]["networkTopology"]
    job["spec"]["tasks"][0]["template"]["metadata"] = {"labels": {"app": "apart"}}
    job["spec"]["tasks"][0]["template"]["spec"]["affinity"] = {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 100,
                    "preference": {
                        "matchExpressions": [
                            {"key": HOSTNAME, "operator": "In", "values": [nodes[0]]}
                        ]
                    },
                }
            ]
        },
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "apart"}}, "topologyKey": HOSTNAME}
            ]
        },
    }
    client.create(R.VCJOBS, job)

    def both_bound() -> list[str] | None:
        pods = job_pods(client, namespace, "apart")
        placed = [p["spec"].get("nodeName", "") for p in pods]
        return placed if len(placed) == 2 and all(placed) else None

    placed = wait_for(both_bound, timeout=90)
    assert len(set(placed)) == 2, placed
    assert nodes[0] in placed, placed  # the preferred node took one of them
