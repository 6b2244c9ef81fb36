"""pg-controller: PodGroups for plain Pods, Deployments (ReplicaSets) and StatefulSets.

- ``controller.py``: the ``Controller`` (informers, handlers, queue, workers) and ``register``;
- ``sync.py``: the pod reconcile (create the PodGroup, annotate the pod) and its bookkeeping;
- ``interfaces.py``: work items, caches, client verbs and the pod index they share;
- ``workload.py``: the ReplicaSet/StatefulSet reconcile (delete at 0 replicas, update);
- ``builder.py``: the PodGroup a pod should have, and update detection (pure);
- ``quota.py``: a pod's quota usage as Kubernetes counts it, for ``minResources`` (pure).
"""

from volcano_py.controllers.podgroup.controller import PodGroupController, register

__all__ = ["PodGroupController", "register"]
