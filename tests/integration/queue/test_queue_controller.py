"""queue-controller on the real control plane, driven by the Commands vcctl writes.

Each Command is the object Volcano's ``pkg/cli/util.CreateQueueCommand`` creates: a
``generateName`` of ``<queue>-<action lowercased>-``, the queue as controller owner reference
and as ``target``, ``action`` ``CloseQueue`` / ``OpenQueue``, in namespace ``default``.
"""

from __future__ import annotations

import contextlib
import uuid
from typing import Any

import pytest

from tests.builders import podgroup_body
from tests.integration.queue.conftest import RunningQueueController
from tests.integration.scheduler.conftest import wait_for
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import NotFound

pytestmark = pytest.mark.timeout(120)

JSON = dict[str, Any]


def make_queue(client: KubeClient, parent: str = "") -> str:
    name = f"q-{uuid.uuid4().hex[:6]}"
    spec: JSON = {"weight": 1}
    if parent:
        spec["parent"] = parent
    client.create(R.QUEUES, {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                             "metadata": {"name": name}, "spec": spec})  # fmt: skip
    return name


def vcctl_command(client: KubeClient, queue: str, action: str) -> JSON:
    """What ``vcctl queue operate -n <queue> -a close|open`` creates."""
    q = client.get(R.QUEUES, queue)
    ref = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "name": queue,
        "uid": q["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
    body = {
        "apiVersion": "bus.volcano.sh/v1alpha1",
        "kind": "Command",
        "metadata": {"generateName": f"{queue}-{action.lower()}-", "ownerReferences": [ref]},
        "target": ref,
        "action": action,
    }
    return client.create(R.COMMANDS, body, "default")


def state_of(client: KubeClient, queue: str) -> str | None:
    return (client.get(R.QUEUES, queue).get("status") or {}).get("state")


def gone(client: KubeClient, command: JSON) -> bool:
    try:
        client.get(R.COMMANDS, command["metadata"]["name"], "default")
    except NotFound:
        return True
    return False


def test_vcctl_close_and_open_commands_are_consumed(
    client: KubeClient, queue_controller: RunningQueueController
) -> None:
    queue = make_queue(client)
    assert wait_for(lambda: state_of(client, queue) == "Open")
    command = vcctl_command(client, queue, "CloseQueue")
    assert wait_for(lambda: state_of(client, queue) == "Closed")
    assert wait_for(lambda: gone(client, command))
    vcctl_command(client, queue, "OpenQueue")
    assert wait_for(lambda: state_of(client, queue) == "Open")


def test_closing_queue_closes_when_its_last_podgroup_is_deleted(
    client: KubeClient, namespace: str, queue_controller: RunningQueueController
) -> None:
    queue = make_queue(client)
    client.create(R.PODGROUPS, podgroup_body("pg", namespace, 1, queue=queue), namespace)
    assert wait_for(lambda: state_of(client, queue) == "Open")
    vcctl_command(client, queue, "CloseQueue")
    assert wait_for(lambda: state_of(client, queue) == "Closing")
    client.delete(R.PODGROUPS, "pg", namespace)
    assert wait_for(lambda: state_of(client, queue) == "Closed")


def test_closing_a_parent_closes_its_child_which_cannot_reopen_alone(
    client: KubeClient, queue_controller: RunningQueueController
) -> None:
    parent = make_queue(client, parent="root")
    child = make_queue(client, parent=parent)
    assert wait_for(lambda: state_of(client, child) == "Open")
    vcctl_command(client, parent, "CloseQueue")
    assert wait_for(lambda: state_of(client, child) == "Closed")
    vcctl_command(client, child, "OpenQueue")
    assert wait_for(lambda: _events(client, "Queue", child, "OpenQueue"))
    assert state_of(client, child) == "Closed"
    vcctl_command(client, parent, "OpenQueue")
    assert wait_for(lambda: state_of(client, child) == "Open")


def _events(client: KubeClient, kind: str, name: str, reason: str) -> list[JSON]:
    items = client.list(R.EVENTS, "default")["items"]
    return [
        e
        for e in items
        if e["involvedObject"].get("kind") == kind
        and e["involvedObject"].get("name") == name
        and e.get("reason") == reason
    ]


def test_command_for_a_missing_queue_is_a_warning_on_the_command(
    client: KubeClient, queue_controller: RunningQueueController
) -> None:
    queue = make_queue(client)
    command = vcctl_command(client, queue, "CloseQueue")
    # the queue vanishes between vcctl's GET and the controller's turn: build one by hand
    ref = dict(command["target"], name=f"missing-{uuid.uuid4().hex[:6]}")
    body = {"apiVersion": "bus.volcano.sh/v1alpha1", "kind": "Command",
            "metadata": {"generateName": "missing-closequeue-"}, "target": ref,
            "action": "CloseQueue"}  # fmt: skip
    bad = client.create(R.COMMANDS, body, "default")
    name = bad["metadata"]["name"]
    [event] = wait_for(lambda: _events(client, "Command", name, "QueueNotFound"))
    assert event["type"] == "Warning"
    assert ref["name"] in event["message"]
    assert wait_for(lambda: gone(client, bad))


def test_deleted_default_queue_is_recreated(
    client: KubeClient, queue_controller: RunningQueueController
) -> None:
    wait_for(lambda: _exists(client, "default"))
    uid = client.get(R.QUEUES, "default")["metadata"]["uid"]
    client.delete(R.QUEUES, "default")
    assert wait_for(
        lambda: (
            _exists(client, "default") and client.get(R.QUEUES, "default")["metadata"]["uid"] != uid
        )
    )


def _exists(client: KubeClient, name: str) -> bool:
    with contextlib.suppress(NotFound):
        client.get(R.QUEUES, name)
        return True
    return False
