"""hyperNode-controller: HyperNodes discovered from the fabric, kept in step, counted.

- ``controller.py``: the ``Controller`` (informers, handlers, three queues) and ``register``;
- ``config.py``: the ``volcano-controller.conf`` ConfigMap: location, format, parsing (pure);
- ``discovery.py``: the ``Discoverer`` role, ``DiscovererRegistry``, ``DiscoveryContext``,
  the ``PeriodicDiscoverer`` base;
- ``manager.py``: the ``DiscoveryManager``: starts/restarts/stops sources from the config,
  one result in flight per source;
- ``label.py``, ``ufm.py``: the builtin sources; ``static.py``: a tiny example third source;
- ``reconcile.py``: the three-way reconcile per source label, with the deletion safety catch;
- ``status.py``: ``status.nodeCount``, recomputed incrementally for affected HyperNodes.

The user guide is ``docs/discovery.md``.
"""

from volcano_py.controllers.hypernode.controller import (
    HyperNodeController,
    register_builtin_discoverers,
)

__all__ = ["HyperNodeController", "register_builtin_discoverers"]
