"""``register_builtin_controllers``: fill a registry with the controllers that ship.

Explicit, not import side effects: the manager (and tests) build a fresh
``ControllerRegistry`` and call this once.
"""

from __future__ import annotations

from volcano_py.controllers import hypernode, job, podgroup
from volcano_py.controllers.framework import ControllerRegistry


def register_builtin_controllers(registry: ControllerRegistry) -> None:
    """Register ``hyperNode-controller``, ``job-controller`` and ``pg-controller``."""
    hypernode.register(registry)
    job.register(registry)
    podgroup.register(registry)
