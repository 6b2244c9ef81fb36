"""Kubeflow training-operator v1 (``--gang-scheduler-name=volcano``), read from
kubeflow/training-operator branch ``release-1.9``: ``pkg/controller.v1/common/job.go``
(``ReconcileJobs``), ``scheduling.go`` (``SyncPodGroup``), ``util.go``
(``CalcPGMinResources``) and ``control/podgroup_control.go`` (``VolcanoControl``).

- PodGroup named as the job, controller-owned by it (a ``kubeflow.org/v1`` PyTorchJob here),
  carrying **all** the job's annotations — so ``volcano.sh/network-topology-*`` arrive on the
  PodGroup, while its spec is rewritten on every sync as ``{minMember, queue,
  priorityClassName, minResources}`` and never has a ``networkTopology``.
- ``minMember`` = the replicas (or ``schedulingPolicy.minAvailable``); ``minResources`` = the
  requests (limits where no request) of the first ``minMember`` pods.
- **No pods before the PodGroup leaves Pending** (``DelayPodCreationDueToPodGroup``: phase
  empty or ``Pending``). Pods: ``schedulerName: volcano``, annotations
  ``scheduling.k8s.io/group-name`` (the job's name) and ``volcano.sh/task-spec`` (the replica
  type, lower case).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.integration.operators.common import (
    GROUP_NAME,
    TASK_SPEC,
    Played,
    create,
    owner,
    phase,
    pod,
    podgroup,
)
from tests.integration.scheduler.conftest import Topology
from volcano_py.kube.client import KubeClient

NAME = "training-operator"


def play(
    client: KubeClient, ns: str, topo: Topology, size: int, wait: Callable[..., Any]
) -> Played:
    job = "pytorch-dist"
    job_annotations = {
        "volcano.sh/network-topology-mode": "hard",
        "volcano.sh/network-topology-highest-tier": "1",
    }
    job_owner = owner("kubeflow.org/v1", "PyTorchJob", job)
    spec = {
        "minMember": size,
        "queue": "default",
        "priorityClassName": "",
        "minResources": {topo.gpu: str(size), "cpu": f"{100 * size}m"},
    }
    create(client, podgroup(job, ns, spec, owners=[job_owner], annotations=job_annotations))
    wait(lambda: phase(client, ns, job) not in ("", "Pending"), timeout=30)
    names = []
    for i in range(size):
        rtype, index = ("master", 0) if i == 0 else ("worker", i - 1)
        name = f"{job}-{rtype}-{index}"
        labels = {
            "training.kubeflow.org/job-name": job,
            "training.kubeflow.org/replica-type": rtype,
            "training.kubeflow.org/replica-index": str(index),
        }
        annotations = {GROUP_NAME: job, TASK_SPEC: rtype}
        create(
            client, pod(name, ns, topo, annotations=annotations, labels=labels, owners=[job_owner])
        )
        names.append(name)
    return Played(job, names, tier1=True)
