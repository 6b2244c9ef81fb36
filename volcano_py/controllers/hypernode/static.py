"""An example third discovery source, ``static``: HyperNodes written out in the config.

It exists to show (in ``docs/discovery.md``) and to test that the registry is open: a new
source is this one module plus one ``registry.register("static", new_static_discoverer)``
call. It is not registered by ``register_builtin_discoverers``. Config::

    - source: static
      enabled: true
      interval: 1h
      config:
        hyperNodes:
          rack-a: {tier: 1, nodes: [node-1, node-2]}
          rack-b: {tier: 1, nodes: [node-3]}
          spine:  {tier: 2, hyperNodes: [rack-a, rack-b]}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from volcano_py.api import JSON
from volcano_py.api import resources as R
from volcano_py.controllers.hypernode.config import ConfigError, DiscoveryConfig
from volcano_py.controllers.hypernode.discovery import (
    DiscoveryContext,
    PeriodicDiscoverer,
    config_mapping,
)

STATIC_DISCOVERER = "static"


def _names(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(f"{where}: expected a list of names")
    return sorted(value)


class StaticDiscoverer(PeriodicDiscoverer):
    """Produces the configured HyperNodes every interval."""

    def __init__(self, config: DiscoveryConfig, context: DiscoveryContext) -> None:
        super().__init__(STATIC_DISCOVERER, config.interval, context.clock)
        self.hypernodes: list[JSON] = []
        for name, entry in sorted(config_mapping(config.config, "hyperNodes").items()):
            where = f"config.hyperNodes.{name}"
            if not isinstance(entry, Mapping) or not isinstance(entry.get("tier"), int):
                raise ConfigError(f"{where}: expected {{tier: <int>, nodes|hyperNodes: [...]}}")
            if "nodes" in entry:
                member_type, members = "Node", _names(entry["nodes"], f"{where}.nodes")
            else:
                member_type = "HyperNode"
                members = _names(entry.get("hyperNodes"), f"{where}.hyperNodes")
            self.hypernodes.append(
                {
                    "apiVersion": R.HYPERNODES.api_version,
                    "kind": R.HYPERNODES.kind,
                    "metadata": {"name": str(name)},
                    "spec": {
                        "tier": entry["tier"],
                        "members": [
                            {"type": member_type, "selector": {"exactMatch": {"name": m}}}
                            for m in members
                        ],
                    },
                }
            )

    def discover(self) -> list[JSON]:
        """The configured HyperNodes (the reconcile adds the source label)."""
        return [dict(hypernode) for hypernode in self.hypernodes]


def new_static_discoverer(config: DiscoveryConfig, context: DiscoveryContext) -> StaticDiscoverer:
    """The registry factory for ``static``."""
    return StaticDiscoverer(config, context)
