"""Kubeflow Spark operator (``batchScheduler: volcano``), read from kubeflow/spark-operator
``internal/scheduler/volcano/scheduler.go`` and ``util.go``.

- PodGroup ``spark-<app>-pg``, controller-owned by the SparkApplication
  (``sparkoperator.k8s.io/v1beta2``), ``status.phase: Pending`` at creation.
- ``minMember`` 1 (the driver); ``minResources`` = driver + all executors' requests (or
  ``batchSchedulerOptions.resources``); queue and ``priorityClassName`` from
  ``batchSchedulerOptions``.
- The driver pod is annotated ``scheduling.k8s.io/group-name``; once it runs, the driver
  creates the executors (owned by the driver pod) with the same annotation.
- Spark has no way to ask for network topology: the gang binds, nothing about racks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.integration.operators.common import (
    GROUP_NAME,
    Played,
    create,
    node_of,
    owner,
    pod,
    podgroup,
)
from tests.integration.scheduler.conftest import Topology
from volcano_py.kube.client import KubeClient

NAME = "spark-operator"


def play(
    client: KubeClient, ns: str, topo: Topology, size: int, wait: Callable[..., Any]
) -> Played:
    app = "spark-pi"
    group = f"spark-{app}-pg"
    app_owner = owner("sparkoperator.k8s.io/v1beta2", "SparkApplication", app)
    spec = {
        "minMember": 1,
        "minResources": {topo.gpu: str(size), "cpu": f"{100 * size}m"},
        "queue": "default",
    }
    create(client, podgroup(group, ns, spec, owners=[app_owner], phase="Pending"))
    driver_name = f"{app}-driver"
    role = "spark-role"
    driver = create(
        client,
        pod(
            driver_name,
            ns,
            topo,
            annotations={GROUP_NAME: group},
            labels={"sparkoperator.k8s.io/app-name": app, role: "driver"},
            owners=[app_owner],
        ),
    )
    wait(lambda: node_of(client, ns, driver_name), timeout=30)
    driver_owner = owner("v1", "Pod", driver_name, driver["metadata"]["uid"])
    names = [driver_name]
    for i in range(1, size):
        name = f"{app}-exec-{i}"
        labels = {"sparkoperator.k8s.io/app-name": app, role: "executor"}
        create(
            client,
            pod(
                name,
                ns,
                topo,
                annotations={GROUP_NAME: group},
                labels=labels,
                owners=[driver_owner],
            ),
        )
        names.append(name)
    return Played(group, names, tier1=False)
