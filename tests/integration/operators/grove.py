"""NVIDIA Grove (scheduler backend ``volcano``), read from ai-dynamo/grove
``operator/internal/scheduler/volcano/backend.go`` and ``queue.go``.

- Grove refuses to start unless the PodGroup CRD's ``v1beta1`` schema has
  ``spec.subGroupPolicy`` (``podGroupCRDHasSubGroupPolicy``; see
  ``test_operator_conformance.test_podgroup_crd_has_sub_group_policy``).
- One PodGroup per PodGang, same name, controller-owned by the PodGang
  (``scheduler.grove.io/v1alpha1``), the PodGang's labels copied.
- ``minMember`` = the sum of the PodGang groups' ``minReplicas``; one ``subGroupPolicy`` per
  clique: ``labelSelector.matchLabels {grove.io/podclique: <clique>}``, ``matchLabelKeys
  [grove.io/podclique]``, ``subGroupSize`` = its ``minReplicas``, ``minSubGroups`` 1; no
  ``minResources``; queue from the annotation ``scheduling.grove.io/volcano-queue`` (else
  ``default``).
- Pods: ``schedulerName: volcano``, labels ``grove.io/podgang`` and ``grove.io/podclique``,
  annotations ``scheduling.volcano.sh/group-name`` and ``scheduling.k8s.io/group-name`` = the
  PodGang's name. Grove refuses topology constraints with this backend: no rack asked.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.integration.operators.common import GROUP_NAME, Played, create, owner, pod, podgroup
from tests.integration.scheduler.conftest import Topology
from volcano_py.kube.client import KubeClient

NAME = "grove"
CLIQUE = "grove.io/podclique"


def play(
    client: KubeClient, ns: str, topo: Topology, size: int, wait: Callable[..., Any]
) -> Played:
    gang = "disagg-0"
    cliques = {f"{gang}-prefill": size // 2, f"{gang}-decode": size - size // 2}
    policies = [
        {
            "name": clique,
            "labelSelector": {"matchLabels": {CLIQUE: clique}},
            "matchLabelKeys": [CLIQUE],
            "subGroupSize": replicas,
            "minSubGroups": 1,
        }
        for clique, replicas in cliques.items()
    ]
    labels = {"app.kubernetes.io/part-of": "disagg", "grove.io/podgang": gang}
    spec = {
        "minMember": size,
        "subGroupPolicy": policies,
        "queue": "default",
        "priorityClassName": "",
    }
    gang_owner = owner("scheduler.grove.io/v1alpha1", "PodGang", gang)
    create(client, podgroup(gang, ns, spec, owners=[gang_owner], labels=labels))
    names = []
    for clique, replicas in cliques.items():
        clique_owner = owner("grove.io/v1alpha1", "PodClique", clique)
        for i in range(replicas):
            name = f"{clique}-{i}"
            annotations = {GROUP_NAME: gang, "scheduling.volcano.sh/group-name": gang}
            pod_labels = {**labels, CLIQUE: clique}
            create(
                client,
                pod(
                    name,
                    ns,
                    topo,
                    annotations=annotations,
                    labels=pod_labels,
                    owners=[clique_owner],
                ),
            )
            names.append(name)
    return Played(gang, names, tier1=False)
