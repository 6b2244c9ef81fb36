"""Which bare pods the scheduler runs as implicit jobs, and that pg-controller leaves them alone.

A pod qualifies when its PodGroup would be a plain gang of one built from the pod alone: no
owners, no group name, no topology or partition annotations, nothing to warn about. The
body returned is the PodGroup pg-controller would have created (queue, priority class,
minResources), dated by the pod.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.controllers.podgroup.pgfakes import harness, pod, workload
from volcano_py.controllers.podgroup.builder import build_podgroup
from volcano_py.controllers.podgroup.implicit import implicit_podgroup, is_implicit

GROUP = "scheduling.k8s.io/group-name"
RS = workload("ReplicaSet", "web-abc", replicas=2)


def _bare(**kwargs: Any) -> dict[str, Any]:
    body = pod("p", requests={"cpu": "2", "memory": "1Gi"}, **kwargs)
    body["metadata"]["creationTimestamp"] = "2026-03-04T05:06:07Z"
    return body


def test_a_bare_pod_gets_the_podgroup_pg_controller_would_create() -> None:
    p = _bare(
        annotations={"scheduling.volcano.sh/queue-name": "research"},
        spec={"priorityClassName": "high"},
    )
    body = implicit_podgroup(p)
    assert body is not None
    expected = build_podgroup(p, {}).body
    assert body["spec"] == expected["spec"]
    assert body["spec"]["queue"] == "research"
    assert body["spec"]["priorityClassName"] == "high"
    assert body["spec"]["minMember"] == 1
    assert body["spec"]["minResources"]["cpu"] == "2"  # the pod's quota usage
    assert body["metadata"]["name"] == "podgroup-uid-p"
    assert body["metadata"]["creationTimestamp"] == "2026-03-04T05:06:07Z"


def test_the_pods_preemptable_annotation_is_carried() -> None:
    body = implicit_podgroup(_bare(annotations={"volcano.sh/preemptable": "true"}))
    assert body is not None
    assert body["metadata"]["annotations"] == {"volcano.sh/preemptable": "true"}


@pytest.mark.parametrize(
    "p",
    [
        _bare(owner=RS),
        _bare(annotations={GROUP: "mine"}),
        {
            **_bare(),
            "metadata": {**_bare()["metadata"], "deletionTimestamp": "2026-01-01T00:00:00Z"},
        },
        _bare(annotations={"volcano.sh/network-topology-mode": "hard"}),
        _bare(annotations={"volcano.sh/network-topology-mode": "sideways"}),
        _bare(
            annotations={"volcano.sh/partition-size": "2"},
            labels={"batch.kubernetes.io/job-completion-index": "0"},
        ),
        _bare(spec={"containers": [{"name": "c", "resources": {"requests": {"cpu": "lots"}}}]}),
    ],
    ids=[
        "owned",
        "grouped",
        "being-deleted",
        "topology",
        "bad-topology-warned",
        "partitions",
        "bad-quantity",
    ],
)
def test_pods_that_keep_their_podgroup_object(p: dict[str, Any]) -> None:
    assert implicit_podgroup(p) is None
    assert not is_implicit(p)


def test_pg_controller_leaves_implicit_pods_alone_and_takes_the_rest() -> None:
    owned = pod("web-abc-1", owner=RS)
    h = harness(pods=(_bare(), owned), replicasets=(RS,))
    h.sync.implicit = is_implicit
    assert not h.sync.takes(_bare())
    assert h.sync.takes(owned)
    h.sync.sync_pod("ns/p")
    h.sync.sync_pod("ns/web-abc-1")
    assert h.client.verbs() == [
        ("create", "podgroups", "podgroup-uid-web-abc"),
        ("patch", "pods", "web-abc-1"),
    ]
