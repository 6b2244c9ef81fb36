"""Discovery faults on the real control plane (issue 27): flapping labels, a type change.

Nodes are kwok Nodes labelled with a per-test key prefix; the real ``HyperNodeController``
runs against the real API server. Every HyperNode event the API server sends is recorded by
a separate watch (``EventLog``) and replayed to check that no node is ever in two leaves.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from tests.builders import create_node, pod_body, podgroup_body
from tests.integration.hypernode.conftest import discovered, events_about, put_configmap
from tests.integration.hypernode.conftest import wait_until as wait
from tests.integration.hypernode.test_hn_label_source import label_config
from tests.integration.scheduler.conftest import run_scheduler, wait_for
from volcano_py.api import resources as R
from volcano_py.api.constants import JOB_ALLOCATED_HYPERNODE_ANNOTATION
from volcano_py.kube.client import KubeClient
from volcano_py.kube.informer import EventHandler, SharedInformerFactory

__all__ = ["run_scheduler"]  # the scheduler fixture, shared with the scheduler tests

JSON = dict[str, Any]
RACKS = 4
PER_RACK = 4


def config(prefix: str, type_name: str, keys: list[str]) -> str:
    return label_config(prefix, type_name, grace="5m", keys=tuple(keys))


def members(obj: JSON) -> list[str]:
    return [m["selector"]["exactMatch"]["name"] for m in obj["spec"]["members"]]


class EventLog:
    """Every HyperNode add/update/delete, in the order the API server sent them."""

    def __init__(self, client: KubeClient) -> None:
        self.factory = SharedInformerFactory(client)
        self.events: list[tuple[str, str, int, tuple[str, ...]]] = []
        self.lock = threading.Lock()
        informer = self.factory.informer(R.HYPERNODES)
        informer.add_event_handler(
            EventHandler(
                lambda o: self._record("add", o),
                lambda _, o: self._record("update", o),
                lambda o: self._record("delete", o),
            )
        )
        self.factory.start()
        assert informer.wait_for_sync(30)

    def _record(self, kind: str, obj: JSON) -> None:
        tier = (obj.get("spec") or {}).get("tier", 0)
        with self.lock:
            self.events.append((kind, obj["metadata"]["name"], tier, tuple(members(obj))))

    def overlaps(self, nodes: set[str]) -> list[str]:
        """Moments (after an event) when one of ``nodes`` was in two tier-1 HyperNodes."""
        leaves: dict[str, tuple[str, ...]] = {}
        found = []
        with self.lock:
            events = list(self.events)
        for kind, name, tier, held in events:
            if tier != 1:
                continue
            if kind == "delete":
                leaves.pop(name, None)
            else:
                leaves[name] = held
            seen: dict[str, str] = {}
            for leaf, leaf_members in leaves.items():
                for node in leaf_members:
                    if node in nodes and node in seen:
                        found.append(f"after {kind} {name}: {node} in {seen[node]} and {leaf}")
                    seen[node] = leaf
        return found

    def deletes(self, names: set[str]) -> list[str]:
        with self.lock:
            return [name for kind, name, _, _ in self.events if kind == "delete" and name in names]


@pytest.fixture
def event_log(client: KubeClient) -> Iterator[EventLog]:
    log = EventLog(client)
    yield log
    log.factory.shutdown()


def racks_of(client: KubeClient, prefix: str) -> dict[str, JSON]:
    """Tier-1 label HyperNodes of this test, by name."""
    return {
        name: obj
        for name, obj in discovered(client, "label").items()
        if obj["spec"]["tier"] == 1 and obj["spec"]["tierName"].startswith(prefix)
    }


def layout(
    client: KubeClient, prefix: str, created: list[str]
) -> tuple[list[str], dict[str, tuple[str, str]]]:
    """16 kwok nodes, 4 racks of 4 under 2 spines."""
    short = prefix.split(".")[0]
    labels: dict[str, tuple[str, str]] = {}
    for i in range(RACKS * PER_RACK):
        name = f"{short}-n{i:02d}"
        rack = i // PER_RACK
        labels[name] = (f"s{rack // 2}", f"r{rack}")
        create_node(
            client,
            name,
            labels={f"{prefix}/spine": f"s{rack // 2}", f"{prefix}/rack": f"r{rack}"},
            allocatable={"cpu": "16", "memory": "64Gi", "pods": "110", gpu(prefix): "1"},
        )
        created.append(name)
    return created, labels


def gpu(prefix: str) -> str:
    """A resource only this test's nodes have (nodes of other tests never fit)."""
    return f"test.volcano.sh/gpu-{prefix.split('.')[0]}"


def hard_gang(
    client: KubeClient, namespace: str, prefix: str, name: str, size: int, tier: int = 1
) -> list[str]:
    """A gang of ``size`` one-GPU pods that must fit one HyperNode of ``tier``; pod names."""
    client.create(
        R.PODGROUPS,
        podgroup_body(
            name,
            namespace,
            size,
            min_resources={gpu(prefix): str(size)},
            network_topology={"mode": "hard", "highestTierAllowed": tier},
        ),
    )
    pods = [f"{name}-{i}" for i in range(size)]
    for pod in pods:
        body = pod_body(
            pod,
            namespace,
            requests={gpu(prefix): "1", "cpu": "100m"},
            annotations={"scheduling.k8s.io/group-name": name},
        )
        client.create(R.PODS, body)
    return pods


def placed(client: KubeClient, namespace: str, pods: list[str]) -> dict[str, str] | None:
    where = {p: client.get(R.PODS, p, namespace)["spec"].get("nodeName", "") for p in pods}
    return where if all(where.values()) else None


def allocated(client: KubeClient, namespace: str, group: str) -> str:
    pg = client.get(R.PODGROUPS, group, namespace)
    return str(
        (pg["metadata"].get("annotations") or {}).get(JOB_ALLOCATED_HYPERNODE_ANNOTATION, "")
    )


def all_racks(client: KubeClient, prefix: str) -> dict[str, JSON] | None:
    """The racks once all four are there."""
    racks = racks_of(client, prefix)
    return racks if len(racks) == RACKS else None


def set_rack(client: KubeClient, prefix: str, node: str, rack: str | None) -> None:
    client.patch(R.NODES, node, {"metadata": {"labels": {f"{prefix}/rack": rack}}})


def one_round(running: Any, client: KubeClient, prefix: str, node: str, rack: str | None) -> None:
    """Relabel ``node`` and wait until a discovery round that saw it has been reconciled.

    So a flap goes through every intermediate round (the source coalesces changes that
    arrive within a second into one round).
    """
    set_rack(client, prefix, node, rack)
    controller = running.controller
    discoverer = controller.manager._running["label"].discoverer

    def seen() -> bool:
        last = list(discoverer._memo.result)
        held = any(node in members(h) for h in last if h["spec"]["tier"] == 1)
        if held != (rack is not None) or not last:
            return False
        reconciled = controller._last_good.get("label")
        return reconciled is not None and reconciled.hypernodes[0] is last[0]

    wait(seen, what=f"a reconciled round that saw {node} in rack {rack}")


def test_flapping_rack_labels_delete_and_rename_nothing(
    client: KubeClient,
    namespace: str,
    controller_runner,
    key_prefix: str,
    nodes: list[str],
    event_log: EventLog,
    run_scheduler,
) -> None:
    p = key_prefix
    names, labels = layout(client, p, nodes)
    put_configmap(client, namespace, config(p, "flap", ["spine", "rack"]))
    running = controller_runner()
    before = wait(lambda: all_racks(client, p), what="the 4 racks")
    assert sorted(before) == [f"hypernode-flap-tier1-s{r // 2}.r{r}" for r in range(RACKS)]
    run_scheduler()
    pods = hard_gang(client, namespace, p, "flapgang", PER_RACK)
    where = wait_for(lambda: placed(client, namespace, pods))
    home = wait_for(lambda: allocated(client, namespace, "flapgang"))
    assert home in before
    assert set(where.values()) == set(members(before[home]))
    # remove the rack label from 12 of 16 nodes at once (the gang's rack among them), then
    # restore them one by one, each in a round of its own
    spared = next(n for n in before if n != home)
    flapped = [n for n in names if n not in members(before[spared])]
    for node in flapped:
        set_rack(client, p, node, None)
    # three racks and the spine above two of them are missing: kept, waiting out the grace
    wait(
        lambda: len(running.controller.reconciler.missing.waiting("label")) == 4,
        what="three racks and a spine missing, waiting out their grace period",
    )
    for node in flapped:
        one_round(running, client, p, node, labels[node][1])
    wait(
        lambda: (
            all(len(members(h)) == PER_RACK for h in racks_of(client, p).values())
            and len(racks_of(client, p)) == RACKS
        ),
        what="the racks whole again",
    )
    # and the reverse: one by one away, all back at once
    for node in flapped:
        one_round(running, client, p, node, None)
    for node in flapped:
        set_rack(client, p, node, labels[node][1])
    wait(
        lambda: all(len(members(h)) == PER_RACK for h in racks_of(client, p).values()),
        what="the racks whole again after the reverse flap",
    )
    after = racks_of(client, p)
    assert sorted(after) == sorted(before)  # 0 renamed
    assert {n: h["metadata"]["uid"] for n, h in after.items()} == {
        n: h["metadata"]["uid"] for n, h in before.items()
    }  # 0 deleted and re-created
    assert event_log.deletes(set(before)) == []
    assert event_log.overlaps(set(names)) == []
    assert allocated(client, namespace, "flapgang") == home  # the gang kept its HyperNode


def test_a_type_change_gives_the_new_tree_at_once_never_a_node_in_two_leaves(
    client: KubeClient,
    namespace: str,
    controller_runner,
    key_prefix: str,
    nodes: list[str],
    event_log: EventLog,
    run_scheduler,
) -> None:
    p = key_prefix
    names, _ = layout(client, p, nodes)
    for i, node in enumerate(names):  # the new topology's labels: 8 pairs, 2 "cells"
        client.patch(
            R.NODES,
            node,
            {"metadata": {"labels": {f"{p}/cell": f"c{i // 8}", f"{p}/pair": f"p{i // 2}"}}},
        )
    put_configmap(client, namespace, config(p, "old", ["spine", "rack"]))
    running = controller_runner()
    old = wait(lambda: all_racks(client, p), what="the old tree")
    run_scheduler()
    # a gang running in one old rack (allowed up to the spines)
    running_pods = hard_gang(client, namespace, p, "oldgang", 2, tier=2)
    old_where = wait_for(lambda: placed(client, namespace, running_pods))
    assert wait_for(lambda: allocated(client, namespace, "oldgang")) in old
    # the guide's flow: replace the ConfigMap with another topology type
    put_configmap(client, namespace, config(p, "new", ["cell", "pair"]))

    def new_tree() -> dict[str, JSON] | None:
        racks = racks_of(client, p)
        if set(racks) & set(old) or len(racks) != 8:
            return None
        return racks

    new = wait(new_tree, what="the new tree")
    discoverer = running.controller.manager._running["label"].discoverer
    assert discoverer is not None
    assert discoverer.runs <= 2  # within two discovery rounds of the new configuration
    assert sorted(new) == [f"hypernode-new-tier1-c{i // 4}.p{i}" for i in range(8)]
    assert event_log.overlaps(set(names)) == []
    outcome = running.controller.last_outcome["label"]
    assert outcome.held_back is None

    def applied_events() -> list[JSON]:
        events = events_about(client, namespace, "volcano-controller-configmap")
        return [e for e in events if e.get("reason") == "DiscoveryConfigApplied"]

    applied = wait(applied_events, what="the DiscoveryConfigApplied Event (recorded async)")
    assert applied[0]["type"] == "Normal"
    assert "retired 6 HyperNodes" in applied[0]["message"]
    detail = running.controller.readiness_detail()
    assert any("configuration change applied" in line for line in detail)
    # the running gang's allocated HyperNode follows the tree: rewritten to the new HyperNode
    # holding its pods (a pair, or the cell when they sit in two pairs)
    new_all = {
        n: h for n, h in discovered(client, "label").items() if h["spec"]["tierName"].startswith(p)
    }

    def follows() -> str | None:
        name = allocated(client, namespace, "oldgang")
        return name if name in new_all else None

    home = wait_for(follows)
    assert placed(client, namespace, running_pods) == old_where  # nothing was moved
    if new_all[home]["spec"]["tier"] == 1:
        assert set(old_where.values()) <= set(members(new_all[home]))
    # a gang submitted right after lands in one new leaf (a pair of two nodes)
    pods = hard_gang(client, namespace, p, "newgang", 2)
    where = wait_for(lambda: placed(client, namespace, pods))
    leaves = [n for n, h in new.items() if set(where.values()) <= set(members(h))]
    assert len(leaves) == 1, (where, sorted(new))
    assert wait_for(lambda: allocated(client, namespace, "newgang")) == leaves[0]
