"""kthena ModelServing (Volcano's inference operator), read from volcano-sh/kthena
``pkg/model-serving-controller/podgroupmanager/manager.go`` and
``controller/model_serving_controller.go`` (``CreatePodsByRole``).

- One PodGroup per serving group (``<ms>-<ordinal>``), controller-owned by the ModelServing
  (``workload.serving.volcano.sh/v1alpha1``); labels ``modelserving.volcano.sh/name`` and
  ``modelserving.volcano.sh/group-name``; annotation ``scheduling.k8s.io/group-name``.
- ``minMember`` = per role (1 entry + ``workerReplicas``) x its min replicas; ``minResources``
  summed; queue from ``scheduling.volcano.sh/queue-name``; ``spec.networkTopology`` =
  ``template.networkTopology.groupPolicy``.
- With ``spec.subGroupPolicy`` in the CRD: one policy per role, ``labelSelector``
  ``{modelserving.volcano.sh/name, modelserving.volcano.sh/role}``, ``matchLabelKeys
  [modelserving.volcano.sh/role-id]``, ``subGroupSize`` 1 + workers, ``minSubGroups`` = the
  role's min replicas, and ``networkTopology`` = ``template.networkTopology.rolePolicy``.
- Pods: the entry pod then its workers, annotated ``scheduling.k8s.io/group-name`` and
  ``volcano.sh/task-spec`` ``<role>-<index>``, labelled with the role and role id.

Played: one role ``prefill`` of 2 replicas x (entry + 1 worker); the group within tier 1.
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
    pod,
    podgroup,
)
from tests.integration.scheduler.conftest import Topology
from volcano_py.kube.client import KubeClient

NAME = "kthena"
MS = "modelserving.volcano.sh"


def play(
    client: KubeClient, ns: str, topo: Topology, size: int, wait: Callable[..., Any]
) -> Played:
    ms, role = "qwen", "prefill"
    group = f"{ms}-0"
    per_role = 2  # entry + one worker
    replicas = size // per_role
    hard_rack = {"mode": "hard", "highestTierAllowed": 1}
    spec = {
        "minMember": per_role * replicas,
        "minResources": {topo.gpu: str(size), "cpu": f"{100 * size}m"},
        "queue": "default",
        "networkTopology": hard_rack,
        "subGroupPolicy": [
            {
                "name": role,
                "labelSelector": {"matchLabels": {f"{MS}/name": ms, f"{MS}/role": role}},
                "matchLabelKeys": [f"{MS}/role-id"],
                "subGroupSize": per_role,
                "minSubGroups": replicas,
                "networkTopology": hard_rack,
            }
        ],
    }
    ms_owner = owner("workload.serving.volcano.sh/v1alpha1", "ModelServing", ms)
    labels = {f"{MS}/name": ms, f"{MS}/group-name": group}
    create(
        client,
        podgroup(
            group, ns, spec, owners=[ms_owner], labels=labels, annotations={GROUP_NAME: group}
        ),
    )
    names = []
    for r in range(replicas):
        role_id = f"{role}-{r}"
        for kind in ("entry", "worker"):
            name = f"{group}-{role_id}-{0 if kind == 'entry' else 1}"
            pod_labels = {
                **labels,
                f"{MS}/role": role,
                f"{MS}/role-id": role_id,
                f"{MS}/entry": str(kind == "entry").lower(),
            }
            annotations = {GROUP_NAME: group, TASK_SPEC: role_id}
            create(
                client,
                pod(name, ns, topo, annotations=annotations, labels=pod_labels, owners=[ms_owner]),
            )
            names.append(name)
    return Played(group, names, tier1=True)
