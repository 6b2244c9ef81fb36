from __future__ import annotations

from volcano_py.metrics import REGISTRY
from volcano_py.scheduler.api.resource import Resource
from volcano_py.scheduler.capacity_metrics import export_capacity, pods_fitting
from volcano_py.scheduler.simulator import Simulator


def test_pods_fitting_is_the_tightest_dimension() -> None:
    idle = Resource(milli_cpu=8000, scalars={"nvidia.com/gpu": 3000})
    assert pods_fitting(idle, Resource(milli_cpu=2000)) == 4
    assert pods_fitting(idle, Resource(milli_cpu=1000, scalars={"nvidia.com/gpu": 1000})) == 3
    assert pods_fitting(idle, Resource()) == 0


def test_export_capacity_sets_free_resources_and_largest_gang_per_tier() -> None:
    def node(name: str, rack: str) -> dict:  # type: ignore[type-arg]
        return {
            "kind": "Node",
            "metadata": {"name": name, "labels": {"rack": rack}},
            "status": {
                "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110", "nvidia.com/gpu": "8"},
                "conditions": [{"type": "Ready", "status": "True"}],
            },
        }

    def hypernode(name: str, tier: int, members: list[dict]) -> dict:  # type: ignore[type-arg]
        return {
            "kind": "HyperNode",
            "apiVersion": "topology.volcano.sh/v1alpha1",
            "metadata": {"name": name},
            "spec": {"tier": tier, "members": members},
        }

    def exact(name: str, kind: str = "Node") -> dict:  # type: ignore[type-arg]
        return {"type": kind, "selector": {"exactMatch": {"name": name}}}

    objects = [
        node("a1", "a"),
        node("a2", "a"),
        node("b1", "b"),
        hypernode("cap-rack-a", 1, [exact("a1"), exact("a2")]),
        hypernode("cap-rack-b", 1, [exact("b1")]),
        hypernode(
            "cap-spine", 2, [exact("cap-rack-a", "HyperNode"), exact("cap-rack-b", "HyperNode")]
        ),
    ]
    snapshot = Simulator(objects).cache.snapshot()
    first = export_capacity(snapshot, set())
    assert (
        REGISTRY.get_sample_value(
            "volcano_hypernode_free_resource",
            {"hypernode": "cap-rack-a", "tier": "1", "resource": "cpu"},
        )
        == 8
    )
    free_a = {
        resource: REGISTRY.get_sample_value(
            "volcano_hypernode_free_resource",
            {"hypernode": "cap-rack-a", "tier": "1", "resource": resource},
        )
        for resource in ("nvidia.com/gpu", "memory")
    }
    # GPUs are a count, memory is bytes (the help says so).
    assert free_a == {"nvidia.com/gpu": 16, "memory": 2 * 8 * 2**30}
    assert (
        REGISTRY.get_sample_value(
            "volcano_hypernode_free_resource",
            {"hypernode": "cap-spine", "tier": "2", "resource": "cpu"},
        )
        == 12
    )
    # The reference request is one GPU: 16 fit in rack a, 24 under the spine.
    assert REGISTRY.get_sample_value("volcano_largest_gang_fits_per_tier", {"tier": "1"}) == 16
    assert REGISTRY.get_sample_value("volcano_largest_gang_fits_per_tier", {"tier": "2"}) == 24
    # A HyperNode that disappears loses its series.
    second = export_capacity(Simulator(objects[:4]).cache.snapshot(), first)
    assert ("cap-rack-b", "1", "cpu") in first - second
    assert (
        REGISTRY.get_sample_value(
            "volcano_hypernode_free_resource",
            {"hypernode": "cap-rack-b", "tier": "1", "resource": "cpu"},
        )
        is None
    )
