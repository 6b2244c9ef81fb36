"""Partitioned gangs (PodGroup ``subGroupPolicy``) on the real control plane.

Two spines of two racks, each node 2 GPUs (a rack holds 4, a spine 8). A gang of 6 pods in
two partitions of 3, each partition hard within a rack, the job within a spine: every
partition lands in one rack; a killed pod's replacement rejoins its partition's rack (the
other rack of the spine has room too); after a scheduler restart the same holds and no
placed pod moves.
"""

from __future__ import annotations

from collections.abc import Callable

from tests.builders import force_delete_pod
from tests.integration.scheduler.conftest import (
    Topology,
    gang_pod,
    two_spines_of_two_racks,
    wait_for,
)
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.scheduler.scheduler import Scheduler

PARTITION = "volcano.sh/partition-id"


def _partitioned_gang(client: KubeClient, ns: str, name: str) -> None:
    client.create(
        R.PODGROUPS,
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": name, "namespace": ns},
            "spec": {
                "minMember": 6,
                "queue": "default",
                "networkTopology": {"mode": "hard", "highestTierAllowed": 2},
                "subGroupPolicy": [
                    {
                        "name": "tp",
                        "subGroupSize": 3,
                        "matchLabelKeys": [PARTITION],
                        "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
                    }
                ],
            },
        },
    )


def _pod(client: KubeClient, ns: str, topo: Topology, name: str, group: str, part: int) -> str:
    return gang_pod(client, ns, topo, name, group, {PARTITION: str(part)})


def _node_of(client: KubeClient, ns: str, name: str) -> str:
    return str(client.get(R.PODS, name, ns)["spec"].get("nodeName") or "")


def _rack_of(racks: dict[str, list[str]], node: str) -> str:
    return next(rack for rack, nodes in racks.items() if node in nodes)


def _bound(client: KubeClient, ns: str, names: list[str]) -> dict[str, str] | None:
    placement = {n: _node_of(client, ns, n) for n in names}
    return placement if all(placement.values()) else None


def test_partitions_land_in_one_rack_and_replacements_rejoin_across_a_restart(
    client: KubeClient,
    namespace: str,
    topology: Topology,
    run_scheduler: Callable[[], Callable[[], Scheduler]],
) -> None:
    racks = two_spines_of_two_racks(topology)
    stop = run_scheduler()
    _partitioned_gang(client, namespace, "train")
    parts = {
        p: [_pod(client, namespace, topology, f"train-{p}-{i}", "train", p) for i in range(3)]
        for p in (0, 1)
    }
    placed = wait_for(lambda: _bound(client, namespace, parts[0] + parts[1]))
    rack = {p: {_rack_of(racks, placed[n]) for n in parts[p]} for p in (0, 1)}
    assert len(rack[0]) == 1, placed
    assert len(rack[1]) == 1, placed
    assert rack[0] != rack[1]
    home = {p: next(iter(rack[p])) for p in (0, 1)}

    # a pod of partition 0 dies: its replacement goes back to partition 0's rack, although
    # partition 1's rack (same spine) has a free GPU as well
    force_delete_pod(client, parts[0][0], namespace)
    _pod(client, namespace, topology, "train-0-r", "train", 0)
    node = wait_for(lambda: _node_of(client, namespace, "train-0-r"))
    assert _rack_of(racks, node) == home[0]
    stop()

    # while no scheduler runs, one pod of each partition dies and is replaced (each rack then
    # has one free GPU); the new scheduler recovers each partition's rack from its pods
    force_delete_pod(client, parts[0][1], namespace)
    force_delete_pod(client, parts[1][0], namespace)
    _pod(client, namespace, topology, "train-1-r", "train", 1)
    _pod(client, namespace, topology, "train-0-s", "train", 0)
    run_scheduler()
    new = wait_for(lambda: _bound(client, namespace, ["train-1-r", "train-0-s"]))
    assert _rack_of(racks, new["train-1-r"]) == home[1], new
    assert _rack_of(racks, new["train-0-s"]) == home[0], new
    survivors = parts[0][2:] + parts[1][1:]
    assert {n: _node_of(client, namespace, n) for n in survivors} == {
        n: placed[n] for n in survivors
    }
