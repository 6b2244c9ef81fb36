"""Queues against a real API server: weight shares, Closed and missing queues, live conf edits.

The scheduler runs Volcano's chart tiers (proportion, overcommit, drf, binpack, ...); every
test makes its own nodes with a test-unique GPU resource (see ``conftest.Topology``) and its
own Queues, deleted afterwards.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.builders import pod_body, podgroup_body
from tests.integration.scheduler.conftest import Topology, wait_for
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import NotFound

JSON = dict[str, Any]
MINIMAL_CONF = (
    'actions: "enqueue, allocate"\ntiers:\n- plugins:\n  - name: gang\n  - name: predicates\n'
)
CHART_CONF = Path("examples/scheduler/volcano-chart-topology.conf").read_text()


@pytest.fixture
def queues(client: KubeClient) -> Iterator[Callable[..., str]]:
    """Create Queues for one test (unique names); deleted afterwards."""
    made: list[str] = []

    def make(base: str, **spec: Any) -> str:
        name = f"{base}-{uuid.uuid4().hex[:5]}"
        state = spec.pop("state", None)
        client.create(
            R.QUEUES,
            {
                "apiVersion": "scheduling.volcano.sh/v1beta1",
                "kind": "Queue",
                "metadata": {"name": name},
                "spec": spec,
            },
        )
        if state:
            client.patch(R.QUEUES, name, {"status": {"state": state}}, subresource="status")
        made.append(name)
        return name

    yield make
    for name in made:
        with contextlib.suppress(NotFound):
            client.delete(R.QUEUES, name)


def _job(
    client: KubeClient,
    ns: str,
    topo: Topology,
    name: str,
    queue: str,
    pods: int,
    *,
    reserve: bool = True,
) -> None:
    """A gang of ``pods`` x 1 GPU; ``reserve``: with minResources (overcommit counts it)."""
    min_resources = {topo.gpu: str(pods)} if reserve else None
    client.create(
        R.PODGROUPS, podgroup_body(name, ns, pods, queue=queue, min_resources=min_resources)
    )
    for i in range(pods):
        client.create(
            R.PODS,
            pod_body(
                f"{name}-{i}",
                ns,
                requests={topo.gpu: "1", "cpu": "10m"},
                annotations={"scheduling.k8s.io/group-name": name},
            ),
        )


def _bound_by_prefix(client: KubeClient, ns: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for p in client.list(R.PODS, ns)["items"]:
        if p["spec"].get("nodeName"):
            prefix = p["metadata"]["name"].split("-")[0]
            counts[prefix] = counts.get(prefix, 0) + 1
    return counts


def _condition(client: KubeClient, ns: str, name: str) -> str:
    pg = client.get(R.PODGROUPS, name, ns)
    return " ".join(c.get("message", "") for c in (pg.get("status") or {}).get("conditions") or [])


def test_two_queues_weights_1_to_3_share_within_one_gang(
    client: KubeClient,
    namespace: str,
    topology: Topology,
    queues: Callable[..., str],
    run_scheduler: Callable[..., Callable[[], Any]],
) -> None:
    for i in range(4):
        topology.node(f"n{i}", 4)  # 16 GPUs
    light = queues("light", weight=1)
    heavy = queues("heavy", weight=3)
    # 40 gangs of 2 GPUs: 80 GPUs asked for, 16 there. Without minResources, so that
    # overcommit's enqueue budget (16 x 1.2, held by admitted gangs of the full queue) is not
    # what decides: proportion's shares are measured.
    for g in range(20):
        _job(client, namespace, topology, f"l{g:02d}", light, 2, reserve=False)
        _job(client, namespace, topology, f"h{g:02d}", heavy, 2, reserve=False)
    run_scheduler(CHART_CONF)
    # deserved: light 16 x 1/4 = 4 GPUs (2 gangs), heavy 12 GPUs (6 gangs)
    wait_for(lambda: sum(_bound_by_prefix(client, namespace).values()) >= 14, timeout=60)
    counts = wait_for(
        lambda: (c := _bound_by_prefix(client, namespace)) and sum(c.values()) == 16 and c,
        timeout=30,
    )
    light_gangs = sum(v for k, v in counts.items() if k.startswith("l")) / 2
    heavy_gangs = sum(v for k, v in counts.items() if k.startswith("h")) / 2
    assert abs(light_gangs - 2) <= 1, counts
    assert abs(heavy_gangs - 6) <= 1, counts
    # the queue's running count follows the PodGroups' phases, written off the cycle: wait
    # for it to count the heavy gangs (it once read 3 of 6 in the moment the pods were bound)
    wait_for(lambda: (client.get(R.QUEUES, heavy).get("status", {}).get("running") or 0) >= 5)


def test_closed_and_missing_queues_hold_podgroups_pending_naming_the_queue(
    client: KubeClient,
    namespace: str,
    topology: Topology,
    queues: Callable[..., str],
    run_scheduler: Callable[..., Callable[[], Any]],
) -> None:
    topology.node("n0", 4)
    shut = queues("shut", weight=1, state="Closed")
    _job(client, namespace, topology, "closed", shut, 1)
    _job(client, namespace, topology, "lost", "no-such-queue", 1)
    _job(client, namespace, topology, "ok", "default", 1)
    run_scheduler(CHART_CONF)
    wait_for(lambda: client.get(R.PODS, "ok-0", namespace)["spec"].get("nodeName"))
    wait_for(lambda: f"queue '{shut}' is Closed" in _condition(client, namespace, "closed"))
    wait_for(lambda: "queue 'no-such-queue'" in _condition(client, namespace, "lost"))
    for name in ("closed", "lost"):
        assert client.get(R.PODGROUPS, name, namespace)["status"]["phase"] == "Pending"
        assert not client.get(R.PODS, f"{name}-0", namespace)["spec"].get("nodeName")
    pg_events = wait_for(
        lambda: [
            e
            for e in client.list(R.EVENTS, namespace)["items"]
            if e["involvedObject"].get("kind") == "PodGroup" and e.get("reason") == "QueueNotOpen"
        ]
    )
    assert shut in pg_events[0]["message"]
    # default exists now (created by the scheduler when missing)
    assert client.get(R.QUEUES, "default")["metadata"]["name"] == "default"


def test_scheduler_configmap_edited_live_to_bad_and_back(
    client: KubeClient,
    namespace: str,
    topology: Topology,
    run_scheduler: Callable[..., Callable[[], Any]],
) -> None:
    topology.node("n0", 8)
    name = "volcano-scheduler-configmap"
    client.create(
        R.CONFIGMAPS,
        {
            "metadata": {"name": name, "namespace": namespace},
            "data": {"volcano-scheduler.conf": CHART_CONF},
        },
    )
    stop = run_scheduler(None, (namespace, name))
    _job(client, namespace, topology, "before", "default", 1)
    wait_for(lambda: client.get(R.PODS, "before-0", namespace)["spec"].get("nodeName"))

    bad = 'actions: "enqueue, alocate"\n'
    client.patch(R.CONFIGMAPS, name, {"data": {"volcano-scheduler.conf": bad}}, namespace)

    def warned() -> list[JSON]:
        events = client.list(R.EVENTS, namespace)["items"]
        return [
            e
            for e in events
            if e.get("reason") == "InvalidSchedulerConf" and e["involvedObject"].get("name") == name
        ]

    event = wait_for(warned)[0]
    assert "unknown action 'alocate'" in event["message"]
    # still scheduling, with the running conf
    _job(client, namespace, topology, "during", "default", 1)
    wait_for(lambda: client.get(R.PODS, "during-0", namespace)["spec"].get("nodeName"))

    client.patch(
        R.CONFIGMAPS,
        name,
        {"data": {"volcano-scheduler.conf": MINIMAL_CONF}},
        namespace,
    )
    _job(client, namespace, topology, "after", "default", 1)
    wait_for(lambda: client.get(R.PODS, "after-0", namespace)["spec"].get("nodeName"))
    scheduler = stop()
    assert [p.name for tier in scheduler.conf.tiers for p in tier] == ["gang", "predicates"]
    assert scheduler.conf_watch.last_error is None
