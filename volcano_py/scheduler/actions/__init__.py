"""The built-in actions; ``register_builtin_actions`` puts them in an ``ActionRegistry``."""

from __future__ import annotations

from volcano_py.scheduler.actions.allocate import AllocateAction
from volcano_py.scheduler.actions.backfill import BackfillAction
from volcano_py.scheduler.actions.enqueue import EnqueueAction
from volcano_py.scheduler.framework.registry import ActionRegistry


def register_builtin_actions(registry: ActionRegistry) -> None:
    """Register ``enqueue``, ``allocate`` and ``backfill``."""
    registry.register(EnqueueAction.name, EnqueueAction())
    registry.register(AllocateAction.name, AllocateAction())
    registry.register(BackfillAction.name, BackfillAction())
