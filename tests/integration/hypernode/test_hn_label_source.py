"""The label source end to end: labelled Nodes -> HyperNodes, the tree following changes."""

from __future__ import annotations

from typing import Any

from tests.builders import create_node
from tests.integration.hypernode.conftest import (
    CONFIGMAP,
    discovered,
    events_about,
    put_configmap,
    wait_until,
)
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient

JSON = dict[str, Any]


def label_config(
    prefix: str,
    type_name: str = "fabric",
    grace: str = "1m",
    keys: tuple[str, ...] = ("zone", "spine", "rack"),
) -> str:
    """One label type over ``<prefix>/<key>`` for ``keys`` (top tier first), then the host."""
    labels = "".join(f"          - nodeLabel: {prefix}/{key}\n" for key in keys)
    return f"""
networkTopologyDiscovery:
  - source: label
    enabled: true
    deletionGracePeriod: {grace}
    config:
      networkTopologyTypes:
        {type_name}:
{labels}          - nodeLabel: kubernetes.io/hostname
"""


def tree(client: KubeClient, prefix: str) -> dict[tuple[int, str], JSON]:
    """Discovered HyperNodes keyed by (tier, value of their own level's label)."""
    out = {}
    for obj in discovered(client, "label").values():
        key = obj["spec"]["tierName"]
        if key.startswith(prefix):
            out[(obj["spec"]["tier"], obj["metadata"]["labels"][key])] = obj
    return out


def members(obj: JSON) -> list[str]:
    return [m["selector"]["exactMatch"]["name"] for m in obj["spec"]["members"]]


def shape(client: KubeClient, prefix: str) -> dict[tuple[int, str], tuple[Any, ...]]:
    """The tree as (tier, value) -> (child values or node names, nodeCount)."""
    hypernodes = tree(client, prefix)
    by_name = {h["metadata"]["name"]: k for k, h in hypernodes.items()}
    out = {}
    for key, obj in hypernodes.items():
        if key[0] == 1:
            children = tuple(members(obj))
        else:
            children = tuple(
                sorted(by_name[m][1] if m in by_name else f"?{m}" for m in members(obj))
            )
        out[key] = (children, (obj.get("status") or {}).get("nodeCount"))
    return out


def make_nodes(
    client: KubeClient, prefix: str, created: list[str], layout: dict[str, tuple[str, str, str]]
) -> None:
    for name, (zone, spine, rack) in layout.items():
        labels = {f"{prefix}/zone": zone, f"{prefix}/spine": spine, f"{prefix}/rack": rack}
        create_node(client, name, labels=labels)
        created.append(name)


def test_label_source_builds_follows_and_survives_a_restart(
    client: KubeClient, namespace: str, controller_runner, key_prefix: str, nodes: list[str]
) -> None:
    p = key_prefix
    n = [f"{p.split('.')[0]}-n{i}" for i in range(6)]
    make_nodes(
        client,
        p,
        nodes,
        {
            n[0]: ("z", "s1", "r1"),
            n[1]: ("z", "s1", "r1"),
            n[2]: ("z", "s1", "r2"),
            n[3]: ("z", "s2", "r3"),
            n[4]: ("z", "s2", "r3"),
            n[5]: ("z", "s2", "r4"),
        },
    )
    put_configmap(client, namespace, label_config(p, grace="3s"))
    running = controller_runner()
    expected = {
        (1, "r1"): ((n[0], n[1]), 2),
        (1, "r2"): ((n[2],), 1),
        (1, "r3"): ((n[3], n[4]), 2),
        (1, "r4"): ((n[5],), 1),
        (2, "s1"): (("r1", "r2"), 3),
        (2, "s2"): (("r3", "r4"), 3),
        (3, "z"): (("s1", "s2"), 6),
    }
    wait_until(lambda: shape(client, p) == expected, what="the initial tree")
    hypernodes = tree(client, p)
    r1 = hypernodes[(1, "r1")]
    assert r1["metadata"]["name"].startswith("hypernode-fabric-tier1-")
    assert r1["spec"]["tierName"] == f"{p}/rack"
    assert {m["type"] for m in r1["spec"]["members"]} == {"Node"}
    assert {m["type"] for m in hypernodes[(3, "z")]["spec"]["members"]} == {"HyperNode"}
    assert r1["metadata"]["labels"][f"{p}/spine"] == "s1"
    names_before = {k: h["metadata"]["name"] for k, h in hypernodes.items()}

    # Relabel: n2 moves from r2 (which empties and goes at once: its node is in r1 now) to
    # r1; n5 is deleted (r4 goes once it has been missing for the 3 s grace period).
    client.patch(R.NODES, n[2], {"metadata": {"labels": {f"{p}/rack": "r1"}}})
    client.delete(R.NODES, n[5])
    expected_after = {
        (1, "r1"): ((n[0], n[1], n[2]), 3),
        (1, "r3"): ((n[3], n[4]), 2),
        (2, "s1"): (("r1",), 3),
        (2, "s2"): (("r3",), 2),
        (3, "z"): (("s1", "s2"), 5),
    }
    wait_until(lambda: shape(client, p) == expected_after, what="the tree after relabel/delete")
    names_after = {k: h["metadata"]["name"] for k, h in tree(client, p).items()}
    assert all(names_after[k] == names_before[k] for k in names_after)

    # Restart: the same names, and nothing rewritten.
    versions = {
        h["metadata"]["name"]: h["metadata"]["resourceVersion"] for h in tree(client, p).values()
    }
    running.stop()
    second = controller_runner()
    wait_until(lambda: "label" in second.controller.last_outcome, what="a reconcile after restart")
    outcome = second.controller.last_outcome["label"]
    assert (outcome.created, outcome.updated, outcome.deleted) == ([], [], [])
    after_restart = {
        h["metadata"]["name"]: h["metadata"]["resourceVersion"] for h in tree(client, p).values()
    }
    assert after_restart == versions


def test_label_source_puts_back_a_hypernode_deleted_by_hand(
    client: KubeClient, namespace: str, controller_runner, key_prefix: str, nodes: list[str]
) -> None:
    p = key_prefix
    name = f"{p.split('.')[0]}-solo"
    make_nodes(client, p, nodes, {name: ("z", "s", "r")})
    put_configmap(client, namespace, label_config(p))
    controller_runner()
    rack = wait_until(lambda: tree(client, p).get((1, "r")), what="the rack HyperNode")
    client.delete(R.HYPERNODES, rack["metadata"]["name"])
    # One of three deleted is a third of the source's HyperNodes: under the 50% catch.
    wait_until(
        lambda: (
            (h := tree(client, p).get((1, "r"))) is not None
            and h["metadata"]["uid"] != rack["metadata"]["uid"]
        ),
        what="the rack HyperNode to come back",
    )
    assert events_about(client, namespace, "volcano-controller-configmap") == []


def two_racks(
    client: KubeClient, namespace: str, controller_runner: Any, p: str, nodes: list[str]
) -> tuple[list[str], Any]:
    """Two labelled nodes in two racks under one spine and zone, discovered (grace 2s)."""
    n = [f"{p.split('.')[0]}-n{i}" for i in range(2)]
    make_nodes(client, p, nodes, {n[0]: ("z", "s1", "r1"), n[1]: ("z", "s1", "r2")})
    put_configmap(client, namespace, label_config(p, grace="2s"))
    running = controller_runner()
    wait_until(lambda: len(tree(client, p)) == 4, what="the initial tree")
    return n, running


def test_removing_the_labels_from_every_node_removes_the_hypernodes_as_volcano_does(
    client: KubeClient, namespace: str, controller_runner, key_prefix: str, nodes: list[str]
) -> None:
    # Volcano's hypernode e2e "discovers, updates, and removes label topology" (issue 44): the
    # labels are an intent, so the maxDeletePercent guard (50%) does not hold this back.
    p = key_prefix
    n, running = two_racks(client, namespace, controller_runner, p, nodes)
    for name in n:
        unset = {f"{p}/{key}": None for key in ("zone", "spine", "rack")}
        client.patch(R.NODES, name, {"metadata": {"labels": unset}})
    wait_until(lambda: tree(client, p) == {}, timeout=60, what="the HyperNodes to go")
    outcome = running.controller.last_outcome["label"]
    assert outcome.held_back is None
    events = events_about(client, namespace, CONFIGMAP)
    assert not any(e["reason"] == "DeletionLimitExceeded" for e in events), events


def test_a_configuration_that_discovers_nothing_is_held_back_with_its_event_until_forced(
    client: KubeClient, namespace: str, controller_runner, key_prefix: str, nodes: list[str]
) -> None:
    # issue 44: Volcano's guide ConfigMap applied to nodes without its labels retired them all
    p = key_prefix
    _, running = two_racks(client, namespace, controller_runner, p, nodes)
    unlabelled = label_config(p, grace="2s", keys=("guide-spine", "guide-rack"))
    put_configmap(client, namespace, unlabelled)
    events = wait_until(
        lambda: [
            e
            for e in events_about(client, namespace, CONFIGMAP)
            if e["reason"] == "DiscoveryConfigHeldBack" and e["type"] == "Warning"
        ],
        what="the Warning Event on the ConfigMap",
    )
    assert "discovers 0 HyperNodes and would retire 4 of its 4" in events[0]["message"]
    assert len(tree(client, p)) == 4
    assert any("held back" in line for line in running.controller.readiness_detail())
    put_configmap(
        client, namespace, unlabelled.replace("enabled: true", "enabled: true\n    force: true")
    )
    wait_until(lambda: tree(client, p) == {}, timeout=60, what="the forced change to apply")
