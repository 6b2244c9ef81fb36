"""``register_builtin_controllers``: fill a registry with the controllers that ship.

Explicit, not import side effects: the manager (and tests) build a fresh
``ControllerRegistry`` and call this once.

Each factory imports its controller when it is called, not when it is registered: naming
the controllers (``--controllers`` checks, ``--help``) costs no import, and a starting
manager builds them only after the scheduler's first cycle (``volcano_py/manager.py``), so
their ~0.06 s of imports stay off the path to the first bind.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from volcano_py.api.constants import HYPERNODE_CONTROLLER_NAME, PODGROUP_CONTROLLER_NAME
from volcano_py.api.queue import QUEUE_CONTROLLER_NAME
from volcano_py.api.vcjob import JOB_CONTROLLER_NAME
from volcano_py.controllers.framework import ControllerRegistry

if TYPE_CHECKING:
    from volcano_py.controllers.framework import Controller


def _hypernode_controller() -> Controller:
    from volcano_py.controllers.hypernode.controller import HyperNodeController

    return HyperNodeController()


def _job_controller() -> Controller:
    from volcano_py.controllers.job.controller import JobController

    return JobController()


def _podgroup_controller() -> Controller:
    from volcano_py.controllers.podgroup.controller import PodGroupController

    return PodGroupController()


def _queue_controller() -> Controller:
    from volcano_py.controllers.queue.controller import QueueController

    return QueueController()


def register_builtin_controllers(registry: ControllerRegistry) -> None:
    """Register the hyperNode-, job-, pg- and queue-controller."""
    registry.register(HYPERNODE_CONTROLLER_NAME, _hypernode_controller)
    registry.register(JOB_CONTROLLER_NAME, _job_controller)
    registry.register(PODGROUP_CONTROLLER_NAME, _podgroup_controller)
    registry.register(QUEUE_CONTROLLER_NAME, _queue_controller)
