"""pg-controller: PodGroups for plain Pods, Deployments (ReplicaSets) and StatefulSets.

- ``controller.py``: the ``Controller`` (informers, handlers, queue, workers) and ``register``;
- ``sync.py``: the pod reconcile (create the PodGroup, annotate the pod) and its bookkeeping;
- ``interfaces.py``: work items, caches, client verbs and the pod index they share;
- ``workload.py``: the ReplicaSet/StatefulSet reconcile (delete at 0 replicas, update);
- ``builder.py``: the PodGroup a pod should have, and update detection (pure);
- ``quota.py``: a pod's quota usage as Kubernetes counts it, for ``minResources`` (pure).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from volcano_py.controllers.podgroup.controller import PodGroupController

__all__ = ["PodGroupController"]


def __getattr__(name: str) -> Any:
    """``PodGroupController``, imported on first use.

    Importing the package or one of its pure modules (the scheduler imports
    ``controllers.podgroup.implicit``) does not import the controller, which a starting
    manager builds only after the scheduler's first cycle (``volcano_py/manager.py``).
    """
    if name in __all__:
        from volcano_py.controllers.podgroup import controller

        return getattr(controller, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
