"""PodGroup annotations as a network topology (the departure for operators without a field)."""

from __future__ import annotations

import pytest

from volcano_py.api.constants import NetworkTopologyMode
from volcano_py.api.topology_annotations import NO_TOPOLOGY, topology_from_annotations

MODE = "volcano.sh/network-topology-mode"
TIER = "volcano.sh/network-topology-highest-tier"
ALLOWED = "volcano.sh/network-topology-highest-tier-allowed"
NAME = "volcano.sh/network-topology-highest-tier-name"
HARD, SOFT = NetworkTopologyMode.HARD, NetworkTopologyMode.SOFT


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        ({}, (None, None, "")),
        ({"volcano.sh/other": "x"}, (None, None, "")),
        ({TIER: "1"}, (HARD, 1, "")),
        ({ALLOWED: "2"}, (HARD, 2, "")),
        ({TIER: "1", ALLOWED: "3"}, (HARD, 1, "")),
        ({MODE: "Soft"}, (SOFT, None, "")),
        ({MODE: "hard", NAME: "rack"}, (HARD, None, "rack")),
        ({MODE: "hard"}, (HARD, None, "")),
        ({TIER: "+2"}, (HARD, 2, "")),
    ],
    ids=[
        "none",
        "unrelated",
        "tier-defaults-hard",
        "kuberay-spelling",
        "tier-key-first",
        "soft-any-case",
        "tier-name",
        "mode-only",
        "plus-sign",
    ],
)
def test_topology_from_annotations_reads_every_spelling(
    annotations: dict[str, str], expected: tuple[object, object, str]
) -> None:
    got = topology_from_annotations(annotations, "PodGroup ns/pg")
    assert (got.mode, got.highest_tier, got.highest_tier_name) == expected
    assert got.warning == ""


@pytest.mark.parametrize(
    ("annotations", "key"),
    [
        ({MODE: "strict", TIER: "1"}, MODE),
        ({TIER: "one"}, TIER),
        ({TIER: "-1"}, TIER),
        ({ALLOWED: "1.5"}, ALLOWED),
        ({TIER: str(2**63)}, TIER),
        ({NAME: " "}, NAME),
    ],
    ids=["bad-mode", "word-tier", "negative-tier", "fraction", "overflow", "empty-name"],
)
def test_topology_from_annotations_refuses_bad_values_naming_the_annotation(
    annotations: dict[str, str], key: str
) -> None:
    got = topology_from_annotations(annotations, "PodGroup ns/pg")
    assert got.mode is None
    assert got.highest_tier is None
    assert key in got.warning
    assert "PodGroup ns/pg" in got.warning
    assert "scheduled without network topology" in got.warning


def test_no_topology_is_shared_when_nothing_is_asked() -> None:
    assert topology_from_annotations({}, "x") is NO_TOPOLOGY
