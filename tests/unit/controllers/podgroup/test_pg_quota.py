"""A pod's quota usage, key for key as Kubernetes' PodUsageFunc (+ Volcano's bare names)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from volcano_py.api.quantity import format_resource_list
from volcano_py.controllers.podgroup.quota import min_resources, pod_quota_usage

JSON = dict[str, Any]


def spec_pod(spec: JSON, *, phase: str = "Pending", meta: JSON | None = None) -> JSON:
    return {
        "metadata": {"name": "p", "namespace": "ns", **(meta or {})},
        "spec": spec,
        "status": {"phase": phase},
    }


def c(name: str = "c", *, req: JSON | None = None, lim: JSON | None = None, **extra: Any) -> JSON:
    resources: JSON = {}
    if req is not None:
        resources["requests"] = req
    if lim is not None:
        resources["limits"] = lim
    return {"name": name, "resources": resources, **extra}


CASES = [
    (
        "empty pod counts only the pod",
        {"containers": [c()]},
        {"count/pods": "1", "pods": "1"},
    ),
    (
        "cpu and memory requests and limits",
        {
            "containers": [
                c(req={"cpu": "500m", "memory": "1Gi"}, lim={"cpu": "1", "memory": "2Gi"})
            ]
        },
        {
            "count/pods": "1",
            "pods": "1",
            "cpu": "500m",
            "requests.cpu": "500m",
            "limits.cpu": "1",
            "memory": "1Gi",
            "requests.memory": "1Gi",
            "limits.memory": "2Gi",
        },
    ),
    (
        "containers are summed",
        {"containers": [c("a", req={"cpu": "250m"}), c("b", req={"cpu": "750m"})]},
        {"count/pods": "1", "pods": "1", "cpu": "1", "requests.cpu": "1"},
    ),
    (
        "an init container larger than the containers wins",
        {
            "containers": [c(req={"cpu": "1", "memory": "1Gi"})],
            "initContainers": [c("init", req={"cpu": "3", "memory": "512Mi"})],
        },
        {
            "count/pods": "1",
            "pods": "1",
            "cpu": "3",
            "requests.cpu": "3",
            "memory": "1Gi",
            "requests.memory": "1Gi",
        },
    ),
    (
        "sidecars add to the containers and to later init containers",
        {
            "containers": [c(req={"cpu": "1"})],
            "initContainers": [
                c("sidecar", req={"cpu": "500m"}, restartPolicy="Always"),
                c("init", req={"cpu": "2"}),
            ],
        },
        # containers 1 + sidecar 0.5 = 1.5; init peak = 2 + 0.5 = 2.5 -> 2.5
        {"count/pods": "1", "pods": "1", "cpu": "2500m", "requests.cpu": "2500m"},
    ),
    (
        "an init container before the sidecar does not see it",
        {
            "containers": [c(req={"cpu": "1"})],
            "initContainers": [
                c("init", req={"cpu": "1200m"}),
                c("sidecar", req={"cpu": "500m"}, restartPolicy="Always"),
            ],
        },
        {"count/pods": "1", "pods": "1", "cpu": "1500m", "requests.cpu": "1500m"},
    ),
    (
        "overhead is added to requests and to non-zero limits only",
        {
            "containers": [c(req={"cpu": "1"}, lim={"cpu": "2"})],
            "overhead": {"cpu": "100m", "memory": "64Mi"},
        },
        {
            "count/pods": "1",
            "pods": "1",
            "cpu": "1100m",
            "requests.cpu": "1100m",
            "limits.cpu": "2100m",
            "memory": "64Mi",
            "requests.memory": "64Mi",
        },
    ),
    (
        "extended resources get requests.<name> and Volcano's bare <name>",
        {"containers": [c(req={"nvidia.com/gpu": "1"}, lim={"nvidia.com/gpu": "1"})]},
        {"count/pods": "1", "pods": "1", "requests.nvidia.com/gpu": "1", "nvidia.com/gpu": "1"},
    ),
    (
        "hugepages and ephemeral storage",
        {"containers": [c(req={"hugepages-2Mi": "4Mi", "ephemeral-storage": "1Gi"})]},
        {
            "count/pods": "1",
            "pods": "1",
            "hugepages-2Mi": "4Mi",
            "requests.hugepages-2Mi": "4Mi",
            "ephemeral-storage": "1Gi",
            "requests.ephemeral-storage": "1Gi",
        },
    ),
    (
        "a kubernetes.io resource is not an extended resource",
        {"containers": [c(req={"example.kubernetes.io/thing": "1"})]},
        {"count/pods": "1", "pods": "1"},
    ),
    (
        "pod-level requests replace cpu and memory",
        {
            "containers": [c(req={"cpu": "1", "nvidia.com/gpu": "2"})],
            "resources": {"requests": {"cpu": "4"}},
        },
        {
            "count/pods": "1",
            "pods": "1",
            "cpu": "4",
            "requests.cpu": "4",
            "requests.nvidia.com/gpu": "2",
            "nvidia.com/gpu": "2",
        },
    ),
]


@pytest.mark.parametrize(
    ("spec", "expected"), [(s, e) for _, s, e in CASES], ids=[i for i, _, _ in CASES]
)
def test_pod_quota_usage_matches_kubernetes(spec: JSON, expected: dict[str, str]) -> None:
    assert format_resource_list(pod_quota_usage(spec_pod(spec))) == dict(sorted(expected.items()))


@pytest.mark.parametrize("phase", ["Succeeded", "Failed"])
def test_pod_quota_usage_counts_only_the_object_when_terminal(phase: str) -> None:
    pod = spec_pod({"containers": [c(req={"cpu": "1"})]}, phase=phase)
    assert format_resource_list(pod_quota_usage(pod)) == {"count/pods": "1"}


def test_pod_quota_usage_drops_compute_when_past_deletion_grace() -> None:
    meta = {"deletionTimestamp": "2026-01-01T00:00:00Z", "deletionGracePeriodSeconds": 30}
    pod = spec_pod({"containers": [c(req={"cpu": "1"})]}, meta=meta)
    before = datetime(2026, 1, 1, 0, 0, 10, tzinfo=UTC)
    after = datetime(2026, 1, 1, 0, 1, 0, tzinfo=UTC)
    assert "cpu" in pod_quota_usage(pod, before)
    assert format_resource_list(pod_quota_usage(pod, after)) == {"count/pods": "1"}


@pytest.mark.parametrize(
    ("min_member", "expected"),
    [
        (0, {}),
        (1, {"count/pods": "1", "pods": "1", "cpu": "500m", "requests.cpu": "500m"}),
        (4, {"count/pods": "4", "pods": "4", "cpu": "2", "requests.cpu": "2"}),
    ],
    ids=["zero-is-empty", "one", "four-multiplies"],
)
def test_min_resources_multiplies_usage_by_min_member(
    min_member: int, expected: dict[str, str]
) -> None:
    pod = spec_pod({"containers": [c(req={"cpu": "500m"})]})
    assert format_resource_list(min_resources(pod, min_member)) == dict(sorted(expected.items()))


def test_min_resources_keeps_binary_units() -> None:
    pod = spec_pod({"containers": [c(req={"memory": "1536Mi"})]})
    assert format_resource_list(min_resources(pod, 4))["memory"] == "6Gi"
