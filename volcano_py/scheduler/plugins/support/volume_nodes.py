"""The node side of a pod's bound volumes, as VolumeBinding and VolumeZone filter nodes.

For each PersistentVolume of the pod's fully bound claims (``api/volumes.bound_volumes``):

- VolumeBinding: a claim bound to a volume that does not exist refuses every node (``node(s)
  unavailable due to one or more pvc(s) bound to non-existent pv(s)``); a volume whose
  ``spec.nodeAffinity.required`` terms match none of the node's labels refuses the node
  (``node(s) didn't match PersistentVolume's node affinity``).
- VolumeZone: on a node with any zone or region label, each zone/region label of the volume
  (a value may list several zones joined by ``__``) must hold the node's value of it (a
  beta ``failure-domain`` key matches the node's GA key too): else ``node(s) had no available
  volume zone``.
"""

from __future__ import annotations

from volcano_py.scheduler.api.node_info import NodeInfo
from volcano_py.scheduler.api.volumes import VolumeListing, bound_volumes
from volcano_py.scheduler.plugins.support.node_affinity import term_matches

PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
ZONE_CONFLICT = "node(s) had no available volume zone"
_BETA_TO_GA = {
    "failure-domain.beta.kubernetes.io/zone": "topology.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region": "topology.kubernetes.io/region",
}
ZONE_LABELS = (*_BETA_TO_GA, *_BETA_TO_GA.values())


def volume_node_reason(
    namespace: str, claims: tuple[tuple[str, bool], ...], node: NodeInfo, listing: VolumeListing
) -> str | None:
    """None when every bound volume of the pod allows ``node``, else kube-scheduler's reason."""
    volumes = bound_volumes(namespace, claims, listing)
    if not volumes:
        return None
    labels = node.labels
    for volume in volumes:
        if not volume:
            return PV_NOT_EXIST
        affinity = ((volume.get("spec") or {}).get("nodeAffinity") or {}).get("required")
        if affinity is not None:
            terms = affinity.get("nodeSelectorTerms") or []
            # kube-scheduler matches the volume's terms against the node's labels only
            if not any(term_matches(term, "", labels) for term in terms):
                return NODE_CONFLICT
    if not any(key in labels for key in ZONE_LABELS):
        return None  # a node without zone labels: a single-zone cluster
    for volume in volumes:
        volume_labels = (volume.get("metadata") or {}).get("labels") or {}
        for key in ZONE_LABELS:
            wanted = volume_labels.get(key)
            if wanted is None:
                continue
            have = labels.get(key, labels.get(_BETA_TO_GA.get(key, key)))
            if have is None or have not in str(wanted).split("__"):
                return ZONE_CONFLICT
    return None
