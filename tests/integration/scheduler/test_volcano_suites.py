"""What Volcano's e2e suites expect of the scheduler, against a real API server.

- gangevict's configuration has no ``enqueue``: allocate admits the PodGroup itself and
  places it (issue 41, item 1).
- PodGroup phases (item 4): ``Completed`` once every pod is done (the PodGroup of a finished
  ``batch/v1`` Job), a running gang whose pods are all deleted goes back to ``Pending``,
  never through ``Unknown``, and one whose member is force-deleted goes ``Unknown`` (jobseq's
  "Transform from running to unknown after a member is gone").
- ``kubectl describe podgroup`` shows a Warning ``Unschedulable`` Event on a gang that cannot
  be placed, and a Normal ``Scheduled`` once it is (Volcano's RecordJobStatusEvent; item 5) —
  one Event per change, not one per cycle.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from tests.builders import delete_pod, force_delete_pod, pod_body, podgroup_body
from tests.integration.scheduler.conftest import Topology, gang_pod, wait_for
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.scheduler.framework.conf import DEFAULT_SCHEDULER_CONF
from volcano_py.scheduler.scheduler import Scheduler

JSON = dict[str, Any]

# Volcano's gangevict suite runs these actions: no enqueue
NO_ENQUEUE_CONF = DEFAULT_SCHEDULER_CONF.replace(
    'actions: "enqueue, allocate, backfill"',
    'actions: "allocate, backfill, gangreclaim, gangpreempt"',
)
assert "enqueue" not in NO_ENQUEUE_CONF.splitlines()[0]


def _phase(client: KubeClient, ns: str, name: str) -> str:
    return str((client.get(R.PODGROUPS, name, ns).get("status") or {}).get("phase", ""))


def _podgroup_events(client: KubeClient, ns: str, name: str) -> list[JSON]:
    return [
        e
        for e in client.list(R.EVENTS, ns)["items"]
        if e["involvedObject"].get("kind") == "PodGroup" and e["involvedObject"]["name"] == name
    ]


def test_allocate_admits_and_places_without_enqueue(
    client: KubeClient,
    namespace: str,
    topology: Topology,
    run_scheduler: Callable[..., Callable[[], Scheduler]],
) -> None:
    topology.node("n1", 4)
    run_scheduler(NO_ENQUEUE_CONF)
    client.create(R.PODGROUPS, podgroup_body("later", namespace, 2))  # its pods come later
    wait_for(lambda: _phase(client, namespace, "later") == "Inqueue")
    names = [gang_pod(client, namespace, topology, f"later-{i}", "later") for i in range(2)]
    wait_for(lambda: all(client.get(R.PODS, n, namespace)["spec"].get("nodeName") for n in names))
    wait_for(lambda: _phase(client, namespace, "later") == "Running")


def test_podgroup_gets_unschedulable_then_scheduled_event_once_each(
    client: KubeClient,
    namespace: str,
    topology: Topology,
    run_scheduler: Callable[..., Callable[[], Scheduler]],
) -> None:
    node = topology.node("n1", 2)
    blocker = "blocker"
    client.create(
        R.PODS,
        pod_body(
            blocker,
            namespace,
            requests={topology.gpu: "2"},
            scheduler_name="default-scheduler",
            node_name=node,
        ),
    )
    run_scheduler()
    client.create(R.PODGROUPS, podgroup_body("gang", namespace, 2))
    for i in range(2):
        gang_pod(client, namespace, topology, f"gang-{i}", "gang")

    def told(reason: str) -> list[JSON]:
        return [e for e in _podgroup_events(client, namespace, "gang") if e["reason"] == reason]

    warning = wait_for(
        lambda: [e for e in told("Unschedulable") if "2/2 tasks in gang" in e["message"]]
    )[0]
    assert warning["type"] == "Warning"
    delete_pod(client, blocker, namespace)
    scheduled = wait_for(lambda: told("Scheduled"))
    assert (scheduled[0]["type"], scheduled[0]["message"]) == ("Normal", "pod group is ready")
    # the gang waited for several cycles (period 0.2 s): one Event per message, no repeats
    waiting = told("Unschedulable")
    assert all(e.get("count", 1) == 1 for e in waiting), waiting
    assert sum("2/2 tasks in gang" in e["message"] for e in waiting) == 1, waiting


def _running_gang(
    client: KubeClient,
    ns: str,
    topology: Topology,
    run_scheduler: Callable[..., Callable[[], Scheduler]],
    name: str,
) -> list[str]:
    """A scheduler, a node and a PodGroup of two pods, bound and reported Running."""
    topology.node("n1", 4)
    run_scheduler()
    client.create(R.PODGROUPS, podgroup_body(name, ns, 2))
    names = [gang_pod(client, ns, topology, f"{name}-{i}", name) for i in range(2)]
    wait_for(lambda: all(client.get(R.PODS, n, ns)["spec"].get("nodeName") for n in names))
    for n in names:
        client.patch(R.PODS, n, {"status": {"phase": "Running"}}, ns, subresource="status")
    wait_for(lambda: _phase(client, ns, name) == "Running")
    return names


def test_podgroup_completed_when_every_pod_is_done(
    client: KubeClient,
    namespace: str,
    topology: Topology,
    run_scheduler: Callable[..., Callable[[], Scheduler]],
) -> None:
    names = _running_gang(client, namespace, topology, run_scheduler, "batch")
    for n, phase in zip(names, ("Succeeded", "Failed"), strict=True):
        client.patch(R.PODS, n, {"status": {"phase": phase}}, namespace, subresource="status")
    wait_for(lambda: _phase(client, namespace, "batch") == "Completed")


def _next_phase(client: KubeClient, ns: str, name: str, after: str, out: list[str]) -> None:
    """Append to ``out`` the first phase other than Running the PodGroup is written with."""
    stream = client.watch(
        R.PODGROUPS, ns, resource_version=after, field_selector=f"metadata.name={name}",
        timeout_seconds=60,
    )  # fmt: skip
    try:
        for kind, obj in stream:
            phase = (obj.get("status") or {}).get("phase", "")
            if kind == "MODIFIED" and phase != "Running":
                out.append(phase)
                return
    finally:
        stream.close()


def _watch_next_phase(client: KubeClient, ns: str, name: str) -> tuple[threading.Thread, list[str]]:
    """Start watching ``name`` from now for its next phase (``_next_phase``); thread and list."""
    version = client.get(R.PODGROUPS, name, ns)["metadata"]["resourceVersion"]
    seen: list[str] = []
    watcher = threading.Thread(
        target=_next_phase, args=(client, ns, name, version, seen), daemon=True
    )
    watcher.start()
    return watcher, seen


def test_running_gang_whose_pods_are_all_deleted_goes_back_to_pending(
    client: KubeClient,
    namespace: str,
    topology: Topology,
    run_scheduler: Callable[..., Callable[[], Scheduler]],
) -> None:
    names = _running_gang(client, namespace, topology, run_scheduler, "gone")
    watcher, seen = _watch_next_phase(client, namespace, "gone")
    for n in names:
        delete_pod(client, n, namespace)  # graceful: Running while they terminate
    watcher.join(60)
    assert seen == ["Pending"]  # not Unknown, not straight to Inqueue


def test_running_gang_that_lost_a_member_goes_unknown(
    client: KubeClient,
    namespace: str,
    topology: Topology,
    run_scheduler: Callable[..., Callable[[], Scheduler]],
) -> None:
    names = _running_gang(client, namespace, topology, run_scheduler, "lost")
    watcher, seen = _watch_next_phase(client, namespace, "lost")
    force_delete_pod(client, names[0], namespace)  # gone, not terminating
    watcher.join(60)
    assert seen == ["Unknown"]  # not through Pending / Inqueue
    conditions = client.get(R.PODGROUPS, "lost", namespace)["status"]["conditions"]
    assert any(
        c["type"] == "Unschedulable" and c["message"].startswith("1/1 tasks in gang unschedulable")
        for c in conditions
    ), conditions
