from __future__ import annotations

from volcano_py.scheduler.api.resource import Resource


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
