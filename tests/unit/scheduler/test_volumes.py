"""Persistent volumes (``api/volumes.py``, ``support/volume_nodes.py``, ``actions/volume_claims``).

kube-scheduler v1.37's VolumeBinding cases about claims that exist, are bound, lost or
missing (``TestVolumeBinding``: inputs and outcomes), its VolumeZone and VolumeRestrictions
(ReadWriteOncePod) rules, through the real cycle. volcano-py binds and provisions nothing: an
unbound ``WaitForFirstConsumer`` claim leaves the pod waiting with a condition naming it
(where kube-scheduler would look for a volume to bind).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.scheduler.objects import node, pod, podgroup
from volcano_py.scheduler.simulator import Simulator

JSON = dict[str, Any]
WAIT, IMMEDIATE = "wait-sc", "immediate-sc"
CLASSES = [
    {
        "kind": "StorageClass",
        "metadata": {"name": WAIT},
        "volumeBindingMode": "WaitForFirstConsumer",
    },
    {"kind": "StorageClass", "metadata": {"name": IMMEDIATE}, "volumeBindingMode": "Immediate"},
]


def pvc(name: str, sc: str = WAIT, *, bound_to: str = "", phase: str = "", **spec: Any) -> JSON:
    meta: JSON = {"name": name, "namespace": "default", "annotations": {}}
    body: JSON = {"storageClassName": sc, **spec}
    if bound_to:
        body["volumeName"] = bound_to
        meta["annotations"]["pv.kubernetes.io/bind-completed"] = "true"
    obj: JSON = {"kind": "PersistentVolumeClaim", "metadata": meta, "spec": body}
    if phase:
        obj["status"] = {"phase": phase}
    return obj


def pv(
    name: str, *, affinity: dict[str, list[str]] | None = None, labels: JSON | None = None
) -> JSON:
    spec: JSON = {"storageClassName": WAIT}
    if affinity:
        expressions = [{"key": k, "operator": "In", "values": v} for k, v in affinity.items()]
        spec["nodeAffinity"] = {
            "required": {"nodeSelectorTerms": [{"matchExpressions": expressions}]}
        }
    return {
        "kind": "PersistentVolume",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": spec,
    }


def claiming(name: str, *claims: str, group: str = "pg", **kw: Any) -> JSON:
    volumes = [
        {"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)
    ]
    return pod(name, group, {"cpu": 1}, spec={"volumes": volumes}, **kw)


def run(*objects: JSON, nodes: list[JSON] | None = None) -> tuple[dict[str, str], list[str]]:
    cluster = [*(nodes or [node("node-a")]), *CLASSES, podgroup("pg", 1), *objects]
    result = Simulator(cluster).run()
    messages = [c["message"] for c in result.podgroups["default/pg"]["conditions"]]
    return result.bindings, messages


# (id, claims the pod names, objects, the node's labels, kube-scheduler's reason or None)
BINDING = [
    ("all-bound", ("pvc-a",), [pvc("pvc-a", bound_to="pv-a"), pv("pv-a")], {}, None),
    ("pvc-does-not-exist", ("pvc-a",), [], {}, 'persistentvolumeclaim "pvc-a" not found'),
    (
        "part-of-pvcs-do-not-exist",
        ("pvc-a", "pvc-b"),
        [pvc("pvc-a", bound_to="pv-a"), pv("pv-a")],
        {},
        'persistentvolumeclaim "pvc-b" not found',
    ),
    (
        "immediate-claims-not-bound",
        ("pvc-a",),
        [pvc("pvc-a", IMMEDIATE)],
        {},
        "pod has unbound immediate PersistentVolumeClaims",
    ),
    (
        "pv-not-found",
        ("pvc-a",),
        [pvc("pvc-a", bound_to="pv-a")],
        {},
        "0/1 nodes are available: 1 node(s) unavailable due to one or more pvc(s) bound to "
        "non-existent pv(s).",
    ),
    (
        "pv-not-found-claim-lost",
        ("pvc-a",),
        [pvc("pvc-a", bound_to="pv-a", phase="Lost")],
        {},
        'persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-a"',
    ),
    (
        "bound-pv-node-affinity-conflict",
        ("pvc-a",),
        [pvc("pvc-a", bound_to="pv-a"), pv("pv-a", affinity={"foo": ["bar"]})],
        {"foo": "barbar"},
        "0/1 nodes are available: 1 node(s) didn't match PersistentVolume's node affinity.",
    ),
    (
        "bound-pv-node-affinity-matches",
        ("pvc-a",),
        [pvc("pvc-a", bound_to="pv-a"), pv("pv-a", affinity={"foo": ["bar"]})],
        {"foo": "bar"},
        None,
    ),
    (
        "unbound-wait-for-first-consumer-waits",
        ("pvc-a",),
        [pvc("pvc-a")],
        {},
        'persistentvolumeclaim "pvc-a" is not bound and its StorageClass "wait-sc" binds '
        "WaitForFirstConsumer",
    ),
    (
        "storage-class-not-found",
        ("pvc-a",),
        [pvc("pvc-a", "gone-sc")],
        {},
        'storageclass.storage.k8s.io "gone-sc" not found',
    ),
]


@pytest.mark.parametrize(
    ("claims", "objects", "labels", "reason"), [pytest.param(*c[1:], id=c[0]) for c in BINDING]
)
def test_kube_scheduler_volume_binding_cases(
    claims: tuple[str, ...], objects: list[JSON], labels: JSON, reason: str | None
) -> None:
    bindings, messages = run(
        *objects, claiming("pod-a", *claims), nodes=[node("node-a", labels=labels)]
    )
    if reason is None:
        assert bindings == {"default/pod-a": "node-a"}
        return
    assert bindings == {}
    assert any(reason in m for m in messages), messages


def test_a_bound_volume_with_node_affinity_picks_its_node() -> None:
    nodes = [node(f"node-{z}", labels={"zone": z}) for z in ("a", "b", "c")]
    objects = [pvc("data", bound_to="pv-1"), pv("pv-1", affinity={"zone": ["c"]})]
    bindings, _ = run(*objects, claiming("p", "data"), nodes=nodes)
    assert bindings == {"default/p": "node-c"}


@pytest.mark.parametrize(
    ("volume_zone", "node_zone", "fits"),
    [
        pytest.param("us-east-1a", "us-east-1a", True, id="same-zone"),
        pytest.param("us-east-1a", "us-east-1b", False, id="other-zone"),
        pytest.param("us-east-1a__us-east-1b", "us-east-1b", True, id="one-of-several-zones"),
        pytest.param("us-east-1a", None, True, id="node-without-zone-labels"),
    ],
)
def test_kube_scheduler_volume_zone_rules(
    volume_zone: str, node_zone: str | None, fits: bool
) -> None:
    labels = {"topology.kubernetes.io/zone": node_zone} if node_zone else {}
    volume = pv("pv-1", labels={"topology.kubernetes.io/zone": volume_zone})
    bindings, messages = run(
        pvc("data", bound_to="pv-1"),
        volume,
        claiming("p", "data"),
        nodes=[node("n", labels=labels)],
    )
    assert ("default/p" in bindings) is fits
    if not fits:
        assert any("1 node(s) had no available volume zone" in m for m in messages), messages


def test_a_read_write_once_pod_claim_in_use_keeps_the_second_pod_waiting() -> None:
    claim = pvc("solo", bound_to="pv-1", accessModes=["ReadWriteOncePod"])
    user = claiming("user", "solo", group=None, node_name="node-a", phase="Running")
    user["spec"]["schedulerName"] = "default-scheduler"
    bindings, messages = run(claim, pv("pv-1"), user, claiming("p", "solo"))
    assert bindings == {}
    assert any(
        "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod" in m
        for m in messages
    ), messages


def test_two_pods_of_one_gang_cannot_share_a_read_write_once_pod_claim() -> None:
    claim = pvc("solo", bound_to="pv-1", accessModes=["ReadWriteOncePod"])
    cluster = [node("node-a"), *CLASSES, claim, pv("pv-1"), podgroup("pg", 2)]
    cluster += [claiming(f"p-{i}", "solo") for i in range(2)]
    result = Simulator(cluster).run()
    assert result.bindings == {}


def test_a_claim_bound_later_lets_the_waiting_pod_place() -> None:
    sim = Simulator(
        [node("node-a"), *CLASSES, podgroup("pg", 1), pvc("data"), claiming("p", "data")]
    )
    for _ in range(3):
        assert sim.cycle().binds == {}
    assert sim.cache.is_parked("default/pg")
    sim.cache.update_volume("PersistentVolume", pv("pv-1"))
    sim.cache.update_volume("PersistentVolumeClaim", pvc("data", bound_to="pv-1"))
    assert sim.cycle().binds == {"default/p": "node-a"}


def test_a_claim_status_heartbeat_wakes_no_parked_job() -> None:
    sim = Simulator(
        [node("node-a"), *CLASSES, podgroup("pg", 1), pvc("data"), claiming("p", "data")]
    )
    for _ in range(3):
        sim.cycle()
    assert sim.cache.is_parked("default/pg")
    resized = pvc("data")
    resized["status"] = {"capacity": {"storage": "2Gi"}}  # nothing a check reads
    sim.cache.update_volume("PersistentVolumeClaim", resized)
    assert "default/pg" not in sim.cache.snapshot(active_only=True).jobs
    sim.cache.update_volume("PersistentVolumeClaim", pvc("data", bound_to="pv-1"))
    assert "default/pg" in sim.cache.snapshot(active_only=True).jobs
