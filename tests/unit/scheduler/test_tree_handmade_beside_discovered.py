"""``volcano-py tree`` when Volcano's hand-made HyperNodes sit beside discovered ones.

Volcano's script (``benchmark/scripts/create-hypernodes.sh``) makes ``rack-<i>`` leaves that
select nodes by label; label discovery made leaves listing the same nodes by name. The later
claimants are quarantined: ``tree`` says which, why and which kind each is, flags the
quarantined ones rather than the discovered racks that keep working, and does not call the
tree ``ready`` above the errors.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from volcano_py.cli import main

JSON = dict[str, Any]
SOURCE = "volcano.sh/network-topology-source"


def _node(i: int) -> JSON:
    labels = {"topology-rack": f"rack-{i // 2}", "type": "kwok"}
    return {
        "kind": "Node",
        "metadata": {"name": f"n{i}", "labels": labels},
        "status": {
            "allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def _hn(name: str, tier: int, members: list[JSON], created: str, source: str = "") -> JSON:
    meta: JSON = {"name": name, "creationTimestamp": created}
    if source:
        meta["labels"] = {SOURCE: source}
    return {"kind": "HyperNode", "metadata": meta, "spec": {"tier": tier, "members": members}}


def _exact(name: str, kind: str = "Node") -> JSON:
    return {"type": kind, "selector": {"exactMatch": {"name": name}}}


def test_tree_names_the_quarantined_hand_made_racks_and_is_not_called_ready(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    early, late = "2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z"
    objects = [_node(i) for i in range(4)]
    for r in range(2):
        nodes = [_exact(f"n{2 * r}"), _exact(f"n{2 * r + 1}")]
        objects.append(_hn(f"hypernode-rack-{r}", 1, nodes, early, "label"))
        by_label = {"labelMatch": {"matchLabels": {"type": "kwok", "topology-rack": f"rack-{r}"}}}
        objects.append(_hn(f"rack-{r}", 1, [{"type": "Node", "selector": by_label}], late))
    racks = [_exact(f"hypernode-rack-{r}", "HyperNode") for r in range(2)]
    objects.append(_hn("hypernode-spine-0", 2, racks, early, "label"))
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(yaml.safe_dump_all(objects))

    assert main(["tree", "--cluster", str(cluster)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == (
        "HyperNode tree: partly usable: 2 HyperNode(s) quarantined (left out of scheduling), "
        "the rest schedules"
    )
    assert "ready" not in lines[0].split(":", 1)[1]
    assert (
        "  quarantined: rack-0 (left out of scheduling: node n0 is a member of more than one "
        "HyperNode: hypernode-rack-0, rack-0 (hypernode-rack-0 claimed it first; "
        "hypernode-rack-0 is discovered by label, rack-0 made by hand))"
    ) in lines
    assert "[BROKEN]" not in out
    assert any(line.startswith("    hypernode-rack-0 (tier 1, 2 nodes") for line in lines)
