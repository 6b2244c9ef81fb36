"""Kubeflow Trainer v2, read from kubeflow/trainer
``pkg/runtime/framework/plugins/volcano/volcano.go``.

- PodGroup named as the TrainJob, controller-owned by it (``trainer.kubeflow.org/v1alpha1``).
- ``minMember`` = the sum of the pod sets' counts; ``minResources`` = their requests summed;
  queue from the TrainJob annotation ``scheduling.volcano.sh/queue-name``;
  ``priorityClassName`` from the pod template.
- Topology from the runtime's ``podGroupPolicy.volcano.networkTopology``: ``spec.networkTopology``
  ``{mode, highestTierAllowed}``.
- Pods come from a JobSet's Jobs at once, annotated ``scheduling.k8s.io/group-name`` = the
  TrainJob's name (their owner, a batch Job, is left out: see ``common``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.integration.operators.common import GROUP_NAME, Played, create, owner, pod, podgroup
from tests.integration.scheduler.conftest import Topology
from volcano_py.kube.client import KubeClient

NAME = "trainer-v2"


def play(
    client: KubeClient, ns: str, topo: Topology, size: int, wait: Callable[..., Any]
) -> Played:
    job = "trainjob-llm"
    spec = {
        "minMember": size,
        "minResources": {topo.gpu: str(size), "cpu": f"{100 * size}m"},
        "queue": "default",
        "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
    }
    job_owner = owner("trainer.kubeflow.org/v1alpha1", "TrainJob", job)
    create(client, podgroup(job, ns, spec, owners=[job_owner]))
    names = []
    for i in range(size):
        name = f"{job}-node-0-{i}"
        labels = {
            "jobset.sigs.k8s.io/jobset-name": job,
            "batch.kubernetes.io/job-completion-index": str(i),
        }
        create(client, pod(name, ns, topo, annotations={GROUP_NAME: job}, labels=labels))
        names.append(name)
    return Played(job, names, tier1=True)
