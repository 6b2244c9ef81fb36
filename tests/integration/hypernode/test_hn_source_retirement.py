"""A discovery source removed from the ConfigMap, on the real control plane (issue 27).

Its HyperNodes are retired once the grace period it ran with is over, with Normal Events on
the ConfigMap; put back within the grace period, the same HyperNodes (same UIDs) stay; a
HyperNode made by hand is never touched.
"""

from __future__ import annotations

import contextlib
import time

from tests.integration.hypernode.conftest import (
    CONFIGMAP,
    discovered,
    events_about,
    put_configmap,
    wait_until,
)
from tests.integration.hypernode.test_hn_label_source import label_config, make_nodes, tree
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import NotFound

NO_SOURCES = "networkTopologyDiscovery: []\n"


def reasons(client: KubeClient, namespace: str) -> list[str]:
    return [e.get("reason", "") for e in events_about(client, namespace, CONFIGMAP)]


def uids(client: KubeClient, prefix: str) -> dict[str, str]:
    return {h["metadata"]["name"]: h["metadata"]["uid"] for h in tree(client, prefix).values()}


def test_a_removed_label_source_retires_its_hypernodes_after_the_grace_period(
    client: KubeClient, namespace: str, controller_runner, key_prefix: str, nodes: list[str]
) -> None:
    p = key_prefix
    short = p.split(".")[0]
    n = [f"{short}-n{i}" for i in range(3)]
    make_nodes(
        client, p, nodes, {n[0]: ("z", "s", "r1"), n[1]: ("z", "s", "r1"), n[2]: ("z", "s", "r2")}
    )
    by_hand = f"{short}-by-hand"
    client.create(
        R.HYPERNODES,
        {
            "apiVersion": R.HYPERNODES.api_version,
            "kind": R.HYPERNODES.kind,
            "metadata": {"name": by_hand},
            "spec": {
                "tier": 1,
                "members": [{"type": "Node", "selector": {"exactMatch": {"name": f"{short}-x"}}}],
            },
        },
    )
    try:
        # 1. removed, then put back within its (10 s) grace period: nothing is deleted
        put_configmap(client, namespace, label_config(p, grace="10s"))
        controller_runner()
        wait_until(lambda: len(tree(client, p)) == 4, what="2 racks, a spine and a zone")
        before = uids(client, p)
        put_configmap(client, namespace, NO_SOURCES)
        wait_until(
            lambda: "DiscoverySourceRemoved" in reasons(client, namespace),
            what="the Event announcing the retirement",
        )
        removed_at = time.monotonic()
        put_configmap(client, namespace, label_config(p, grace="3s"))
        wait_until(
            lambda: "DiscoverySourceRestored" in reasons(client, namespace),
            what="the Event cancelling the retirement",
        )
        time.sleep(max(0.0, removed_at + 12 - time.monotonic()))  # past the first due time
        assert uids(client, p) == before
        assert "DiscoverySourceRetired" not in reasons(client, namespace)

        # 2. removed for good: gone once its (3 s) grace period is over, not before
        put_configmap(client, namespace, NO_SOURCES)
        started = time.monotonic()
        wait_until(lambda: not tree(client, p), what="the label HyperNodes retired")
        assert time.monotonic() - started >= 2.9
        assert discovered(client, "label") == {}
        messages = {
            e.get("reason"): e.get("message", "")
            for e in events_about(client, namespace, CONFIGMAP)
        }
        assert "its 4 HyperNodes" in messages["DiscoverySourceRemoved"]
        wait_until(
            lambda: "DiscoverySourceRetired" in reasons(client, namespace),
            what="the Event saying what was retired",
        )
        messages = {
            e.get("reason"): e.get("message", "")
            for e in events_about(client, namespace, CONFIGMAP)
        }
        assert "retired 4 HyperNodes" in messages["DiscoverySourceRetired"]
        assert client.get(R.HYPERNODES, by_hand)["metadata"]["name"] == by_hand
    finally:
        with contextlib.suppress(NotFound):
            client.delete(R.HYPERNODES, by_hand)
