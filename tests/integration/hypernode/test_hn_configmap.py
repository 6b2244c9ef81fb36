"""The discovery ConfigMap created late, edited, broken and fixed: sources follow, nothing lost."""

from __future__ import annotations

import time

from tests.builders import create_node
from tests.integration.hypernode.conftest import (
    CONFIGMAP,
    discovered,
    events_about,
    put_configmap,
    wait_until,
)
from volcano_py.kube.client import KubeClient


def config(prefix: str, *levels: str, extra: str = "") -> str:
    labels = "".join(f"\n          - nodeLabel: {prefix}/{level}" for level in levels)
    return f"""
networkTopologyDiscovery:
  - source: label
    enabled: true
    config:
      networkTopologyTypes:
        t:{labels}
          - nodeLabel: kubernetes.io/hostname
{extra}"""


def tiers(client: KubeClient, prefix: str) -> dict[str, int]:
    """tierName (without prefix) -> how many label HyperNodes use it."""
    out: dict[str, int] = {}
    for obj in discovered(client, "label").values():
        tier_name = obj["spec"]["tierName"]
        if tier_name.startswith(prefix):
            short = tier_name.split("/", 1)[1]
            out[short] = out.get(short, 0) + 1
    return out


def test_configmap_created_late_edited_broken_and_fixed(
    client: KubeClient, namespace: str, controller_runner, key_prefix: str, nodes: list[str]
) -> None:
    p = key_prefix
    for i, (spine, rack) in enumerate([("s1", "r1"), ("s1", "r2"), ("s2", "r3")]):
        name = f"{p.split('.')[0]}-n{i}"
        create_node(client, name, labels={f"{p}/spine": spine, f"{p}/rack": rack})
        nodes.append(name)
    running = controller_runner()
    wait_until(
        lambda: running.controller.manager.running() == {} and running.controller.config_loaded,
        what="start without a ConfigMap",
    )
    time.sleep(1.0)
    assert tiers(client, p) == {}

    # Created late: picked up.
    put_configmap(client, namespace, config(p, "rack"))
    wait_until(lambda: tiers(client, p) == {"rack": 3}, what="racks after the ConfigMap appears")

    # Edited: a spine level added; the label source restarts with it.
    put_configmap(client, namespace, config(p, "spine", "rack"))
    wait_until(lambda: tiers(client, p) == {"rack": 3, "spine": 2}, what="spines after the edit")
    names = set(discovered(client, "label"))

    # Broken: the running source keeps its HyperNodes; an Event names the problem.
    put_configmap(client, namespace, "networkTopologyDiscovery: [")
    events = wait_until(
        lambda: [
            e
            for e in events_about(client, namespace, CONFIGMAP)
            if e["reason"] == "InvalidDiscoveryConfig"
        ],
        what="an InvalidDiscoveryConfig event",
    )
    assert "keeping the running sources" in events[0]["message"]
    assert list(running.controller.manager.running()) == ["label"]
    assert set(discovered(client, "label")) == names

    # An invalid entry next to a good one: the entry is rejected, the good one runs.
    put_configmap(
        client,
        namespace,
        config(p, "spine", "rack", extra="  - {source: roce, enabled: true}\n"),
    )
    wait_until(
        lambda: any(
            "unknown discovery source 'roce'" in e["message"]
            for e in events_about(client, namespace, CONFIGMAP)
        ),
        what="the unknown-source event",
    )
    assert set(discovered(client, "label")) == names

    # Fixed back to racks only: spines go (2 of 5 = 40%, under the 50% catch).
    put_configmap(client, namespace, config(p, "rack"))
    wait_until(lambda: tiers(client, p) == {"rack": 3}, what="racks only after the fix")
    assert {n for n in discovered(client, "label") if "tier1" in n} <= names
