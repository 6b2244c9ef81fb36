"""A bare pod is scheduled as an implicit job: bound with no PodGroup object, yet its queue's
status counts it and the view shows it, until it is deleted (the manager's default,
``--implicit-podgroups``)."""

from __future__ import annotations

import contextlib

from tests.builders import force_delete_pod, pod_body
from tests.integration.ui.conftest import UiCluster, wait_for
from volcano_py.api import resources as R
from volcano_py.api.constants import QUEUE_NAME_ANNOTATION
from volcano_py.kube.errors import NotFound


def test_a_bare_pod_binds_without_a_podgroup_and_counts_in_its_queue_and_the_view(
    ui_cluster: UiCluster,
) -> None:
    c = ui_cluster
    queue = f"{c.prefix}-plain"
    c.client.create(
        R.QUEUES,
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "Queue",
            "metadata": {"name": queue},
            "spec": {"weight": 1},
        },
    )
    name = f"{c.prefix}-bare"
    body = pod_body(
        name, c.namespace, requests={"cpu": "3"}, annotations={QUEUE_NAME_ANNOTATION: queue}
    )
    created = c.client.create(R.PODS, body, c.namespace)
    job = f"{c.namespace}/podgroup-{created['metadata']['uid']}"
    try:
        wait_for(lambda: c.client.get(R.PODS, name, c.namespace)["spec"].get("nodeName"), 30)

        def allocated() -> dict[str, str]:
            status = c.client.get(R.QUEUES, queue).get("status") or {}
            return dict(status.get("allocated") or {})

        assert wait_for(lambda: allocated().get("cpu") == "3", 30)
        gang = wait_for(lambda: (g := c.gang_in_view(job)) and g["phase"] == "Running" and g, 30)
        assert gang["queue"] == queue
        assert gang["placed"] == 1
        podgroups = c.client.list(R.PODGROUPS, c.namespace)["items"]
        assert not [pg for pg in podgroups if pg["metadata"]["name"].startswith("podgroup-")]

        force_delete_pod(c.client, name, c.namespace)
        assert wait_for(lambda: "cpu" not in allocated(), 30)
        assert wait_for(lambda: c.gang_in_view(job) is None, 30)
    finally:
        with contextlib.suppress(NotFound):
            force_delete_pod(c.client, name, c.namespace)
        with contextlib.suppress(NotFound):
            c.client.delete(R.QUEUES, queue)
