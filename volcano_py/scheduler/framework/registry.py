"""``PluginRegistry`` and ``ActionRegistry``: named builders, filled explicitly.

Volcano registers plugins and actions from ``init()`` side effects; here the scheduler (or a
test) builds a registry and calls ``register_builtin_plugins`` / ``register_builtin_actions``
from ``volcano_py.scheduler.plugins`` / ``.actions``. ``register`` rejects duplicates, ``get``
on an unknown name lists the known ones, iteration is sorted.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from volcano_py.scheduler.framework.arguments import Arguments, ConfError
from volcano_py.scheduler.framework.conf import SchedulerConf, parse_conf
from volcano_py.scheduler.framework.interface import Action, Plugin
from volcano_py.scheduler.framework.session import Session

log = logging.getLogger(__name__)

PluginBuilder = Callable[[Arguments], Plugin[Session]]
T = TypeVar("T")


class _Registry(Generic[T]):
    kind = "entry"

    def __init__(self) -> None:
        self._entries: dict[str, T] = {}

    def register(self, name: str, entry: T) -> None:
        """Add ``entry`` under ``name``; a name can be registered once."""
        if name in self._entries:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._entries[name] = entry

    def get(self, name: str) -> T:
        """The entry for ``name``; an unknown name lists the known ones."""
        try:
            return self._entries[name]
        except KeyError:
            raise KeyError(
                f"unknown {self.kind} {name!r} (known: {sorted(self._entries)})"
            ) from None

    def names(self) -> set[str]:
        """Registered names."""
        return set(self._entries)

    def __iter__(self) -> Iterator[str]:
        """Names, sorted."""
        return iter(sorted(self._entries))

    def __contains__(self, name: object) -> bool:
        """Whether ``name`` is registered."""
        return name in self._entries


class PluginRegistry(_Registry[PluginBuilder]):
    """Plugin name -> builder(arguments) -> Plugin.

    ``enqueue_fallback``: the plugin ``framework.open_session`` opens when no configured
    plugin votes on enqueue (the built-ins set the overcommit gate at its default factor:
    volcano-py's default tiers have no voter and always admitted through it). It is not a
    name a conf can use.
    """

    kind = "plugin"

    def __init__(self) -> None:
        """An empty registry, no enqueue fallback."""
        super().__init__()
        self.enqueue_fallback: PluginBuilder | None = None


class ActionRegistry(_Registry[Action[Session]]):
    """Action name -> Action."""

    kind = "action"


def load_conf(text: str, plugins: PluginRegistry, actions: ActionRegistry) -> SchedulerConf:
    """Parse a ``volcano-scheduler.conf`` and build every plugin once to check its arguments.

    Raises:
        ConfError: naming the bad key and what was expected.
    """
    conf = parse_conf(text, actions.names(), plugins.names())
    for name in conf.not_implemented:
        log.warning("scheduler conf: accepted, not implemented: %s", name)
    for line in conf.warnings:
        log.warning("scheduler conf: %s", line)
    for tier in conf.tiers:
        for option in tier:
            try:
                plugins.get(option.name)(Arguments(option.name, option.arguments))
            except ConfError:
                raise
            except (TypeError, ValueError) as e:
                raise ConfError(f"tiers[].plugins[{option.name}].arguments: {e}") from None
    return conf
