"""Inter-pod affinity's wake-up hint: a placed pod brings back the jobs waiting for one.

kube-scheduler re-queues a pod its InterPodAffinity filter refused when a pod is added or
relabelled; here a job parked because some node refused it for pod affinity (or topology
spread) waits for ``POD_PLACED`` too, while a job parked for room does not: binds while the
cluster fills leave the gangs waiting for room parked.
"""

from __future__ import annotations

from tests.unit.scheduler.objects import node, pod, podgroup
from volcano_py.scheduler.simulator import Simulator

HOST = "kubernetes.io/hostname"


def _looked_at(sim: Simulator) -> set[str]:
    return set(sim.cache.snapshot(active_only=True).jobs)


def test_a_pod_placed_brings_back_a_job_waiting_for_it_but_not_one_waiting_for_room() -> None:
    nodes = [node(f"n{i}", labels={HOST: f"n{i}"}) for i in (1, 2)]
    near_db = {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": HOST}
            ]
        }
    }
    sim = Simulator(
        [
            *nodes,
            podgroup("web", 1),
            pod("web-0", "web", {"cpu": 1}, affinity=near_db),
            podgroup("big", 1),
            pod("big-0", "big", {"cpu": 64}),
        ]
    )
    for _ in range(3):
        sim.cycle()
    assert sim.cache.is_parked("default/web")
    assert sim.cache.is_parked("default/big")
    db = pod("db", requests={"cpu": 1}, node_name="n2", phase="Running", scheduler="other")
    db["metadata"]["labels"] = {"app": "db"}
    sim.cache.update_pod(db)
    looked_at = _looked_at(sim)
    assert "default/web" in looked_at
    assert "default/big" not in looked_at
    assert sim.cycle().binds == {"default/web-0": "n2"}
