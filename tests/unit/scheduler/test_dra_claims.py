"""Pods with DRA resource claims wait with a reason (``actions/dra_claims.py``)."""

from __future__ import annotations

from tests.unit.scheduler.objects import node, pod, podgroup
from volcano_py.scheduler.simulator import Simulator


def test_a_pod_with_dra_claims_is_never_placed_and_says_why() -> None:
    claims = {"resourceClaims": [{"name": "gpu", "resourceClaimName": "gpu-claim"}]}
    objects = [node("n1"), podgroup("pg", 1), pod("p", "pg", spec=claims)]  # best effort too
    objects += [podgroup("pg2", 1), pod("q", "pg2", {"cpu": 1}, spec=claims)]
    result = Simulator(objects).run()
    assert result.bindings == {}
    for group, name in (("default/pg", "default/p"), ("default/pg2", "default/q")):
        (condition,) = [
            c for c in result.podgroups[group]["conditions"] if c["type"] == "Unschedulable"
        ]
        assert condition["reason"] == "DRANotSupported"
        assert f"pod {name} has DRA resource claims (gpu)" in condition["message"]
        assert "DRA claims are not supported" in condition["message"]
    events = {key: message for key, _, message in result.events}
    assert "DRA claims are not supported" in events["default/q"]
