"""The built-in actions; ``register_builtin_actions`` puts them in an ``ActionRegistry``."""

from __future__ import annotations

from volcano_py.scheduler.actions.allocate import AllocateAction
from volcano_py.scheduler.actions.backfill import BackfillAction
from volcano_py.scheduler.actions.enqueue import EnqueueAction
from volcano_py.scheduler.actions.preempt import PreemptAction
from volcano_py.scheduler.actions.reclaim import ReclaimAction
from volcano_py.scheduler.framework.registry import ActionRegistry


def register_builtin_actions(registry: ActionRegistry) -> None:
    """Register ``enqueue``, ``allocate``, ``backfill``, ``preempt`` and ``reclaim``.

    Volcano's ``gangpreempt`` / ``gangreclaim`` are the same actions under their names.
    """
    registry.register(EnqueueAction.name, EnqueueAction())
    registry.register(AllocateAction.name, AllocateAction())
    registry.register(BackfillAction.name, BackfillAction())
    for name in ("preempt", "gangpreempt"):
        registry.register(name, PreemptAction(name))
    for name in ("reclaim", "gangreclaim"):
        registry.register(name, ReclaimAction(name))
