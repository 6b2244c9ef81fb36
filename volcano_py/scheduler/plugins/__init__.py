"""The built-in plugins; ``register_builtin_plugins`` puts them in a ``PluginRegistry``."""

from __future__ import annotations

from volcano_py.scheduler.framework.registry import PluginRegistry
from volcano_py.scheduler.plugins.binpack import BinpackPlugin
from volcano_py.scheduler.plugins.capacity import CapacityPlugin
from volcano_py.scheduler.plugins.conformance import ConformancePlugin
from volcano_py.scheduler.plugins.drf import DrfPlugin
from volcano_py.scheduler.plugins.gang import GangPlugin
from volcano_py.scheduler.plugins.network_topology_aware import NetworkTopologyAwarePlugin
from volcano_py.scheduler.plugins.nodeorder import NodeOrderPlugin
from volcano_py.scheduler.plugins.overcommit import OvercommitFallback, OvercommitPlugin
from volcano_py.scheduler.plugins.predicates import PredicatesPlugin
from volcano_py.scheduler.plugins.priority import PriorityPlugin
from volcano_py.scheduler.plugins.proportion import ProportionPlugin
from volcano_py.scheduler.plugins.sla import SlaPlugin


def register_builtin_plugins(registry: PluginRegistry) -> None:
    """Register every built-in plugin and the enqueue fallback (the overcommit gate)."""
    for plugin in (
        PriorityPlugin,
        GangPlugin,
        PredicatesPlugin,
        NodeOrderPlugin,
        NetworkTopologyAwarePlugin,
        OvercommitPlugin,
        ProportionPlugin,
        CapacityPlugin,
        BinpackPlugin,
        DrfPlugin,
        ConformancePlugin,
        SlaPlugin,
    ):
        registry.register(plugin.name, plugin)
    registry.enqueue_fallback = OvercommitFallback
