from __future__ import annotations

import pytest

from volcano_py.scheduler.api.resource import Resource, format_short, least_sum


def test_resource_from_podgroup_quota_usage_keeps_only_schedulable_names() -> None:
    # What pg-controller writes as minResources for 4 pods requesting 3 cpu and 1 GPU.
    min_resources = {
        "pods": "4",
        "count/pods": "4",
        "cpu": "12",
        "requests.cpu": "12",
        "limits.nvidia.com/gpu": "4",
        "requests.nvidia.com/gpu": "4",
        "nvidia.com/gpu": "4",
    }
    res = Resource.from_list(min_resources)
    assert res.milli_cpu == 12_000
    assert res.scalars == {"nvidia.com/gpu": 4_000}


@pytest.mark.parametrize(
    ("count", "expected"),
    [
        (0, {}),
        (1, {"cpu": "1", "nvidia.com/gpu": "1"}),
        (2, {"cpu": "2", "nvidia.com/gpu": "3"}),
        (3, {"cpu": "6", "nvidia.com/gpu": "11"}),
        (9, {"cpu": "6", "nvidia.com/gpu": "11"}),
    ],
    ids=["none", "one", "two-smallest-per-resource", "all", "more-than-there-are"],
)
def test_least_sum_takes_the_smallest_amounts_per_resource(
    count: int, expected: dict[str, str]
) -> None:
    # per resource, not per request: cpu 1+1 comes from two requests, gpu 1+2 from others
    requests = [
        Resource.from_list({"cpu": "1", "nvidia.com/gpu": "8"}),
        Resource.from_list({"cpu": "4", "nvidia.com/gpu": "1"}),
        Resource.from_list({"cpu": "1", "nvidia.com/gpu": "2"}),
    ]
    assert least_sum(requests, count).to_list() == expected


@pytest.mark.parametrize(
    ("name", "amount", "shown"),
    [
        ("nvidia.com/gpu", 8000, "8"),
        ("nvidia.com/gpu", 12800, "12.8"),
        ("memory", 22 * 2**30, "22Gi"),
        ("memory", 23622320128 + 1, "22.1Gi"),
        ("memory", 3 * 2**29, "1.5Gi"),
        ("memory", 512, "512"),
        ("cpu", 500, "500m"),
        ("cpu", 4000, "4"),
    ],
    ids=[
        "gpus",
        "fractional-gpus",
        "exact-gi",
        "bytes-round-up",
        "half-gi",
        "bytes",
        "milli",
        "cores",
    ],
)
def test_format_short_writes_a_shortfall_in_the_resources_own_unit(
    name: str, amount: int, shown: str
) -> None:
    assert format_short(name, amount) == shown
