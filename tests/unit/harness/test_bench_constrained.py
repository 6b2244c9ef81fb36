"""bench_vs_kube_scheduler's ``constrained`` workload (issue 40) has the shape its doc gives."""

from __future__ import annotations

from bench.bench_vs_kube_scheduler import GANG_LABEL, RACK_LABEL, constrained_objects


def test_gangs_repel_other_gangs_only_and_plain_pods_spread_over_labelled_racks() -> None:
    nodes, extra, pods = constrained_objects(60)
    racks = {n["metadata"]["labels"][RACK_LABEL] for n in nodes}
    assert len(nodes) == 60
    assert len(racks) == 6
    assert all(
        n["metadata"]["labels"]["kubernetes.io/hostname"] == n["metadata"]["name"] for n in nodes
    )
    gang_pods = [p for p in pods if GANG_LABEL in p["metadata"]["labels"]]
    plain = [p for p in pods if GANG_LABEL not in p["metadata"]["labels"]]
    assert len(gang_pods) == 5 * 50
    assert len({p["metadata"]["name"] for p in pods}) == len(pods)
    for pod in gang_pods:
        own = pod["metadata"]["labels"][GANG_LABEL]
        (term,) = pod["spec"]["affinity"]["podAntiAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"
        ]
        assert term["topologyKey"] == "kubernetes.io/hostname"
        assert {"key": GANG_LABEL, "operator": "NotIn", "values": [own]} in term["labelSelector"][
            "matchExpressions"
        ]
    assert plain
    assert all(
        p["spec"]["topologySpreadConstraints"][0]["topologyKey"] == RACK_LABEL
        and p["spec"]["topologySpreadConstraints"][0]["whenUnsatisfiable"] == "ScheduleAnyway"
        for p in plain
    )
    assert sum(1 for o in extra if o["kind"] == "PodGroup") == 5
