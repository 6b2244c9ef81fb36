"""The controller framework: the ``Controller`` role, its options, and the registry.

A controller is an object with a ``name``, an ``initialize(options)`` that wires it to the
shared informers (registering handlers, creating its workqueue) without doing any I/O of its
own, and a ``run(stop)`` that blocks, running workers until ``stop`` is set. The manager
builds one ``ControllerRegistry``, fills it with ``register_builtin_controllers`` (explicitly,
not by import side effects), picks the enabled names with Volcano's ``--controllers``
semantics, builds them through a ``ControllerSet`` once the scheduler's first cycle has
decided, and starts each controller on its own thread.

``--controllers`` semantics (as Volcano's): a list of names; ``name`` enables that
controller, ``-name`` disables it, ``*`` enables every controller not explicitly disabled.
An explicit ``name`` or ``-name`` wins over ``*``. Unknown names are an error that lists the
known ones.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from volcano_py.api.constants import DEFAULT_SCHEDULER_NAME

if TYPE_CHECKING:
    from volcano_py.kube.client import KubeClient
    from volcano_py.kube.events import EventRecorder
    from volcano_py.kube.foreground import Foreground
    from volcano_py.kube.informer import HandlerRegistration, Informer, SharedInformerFactory

SYNC_POLL_S = 0.5  # how often a starting controller re-checks its caches and stop


def start_and_wait_for_caches(
    options: ControllerOptions,
    informers: Sequence[Informer],
    stop: threading.Event,
    registrations: Sequence[HandlerRegistration] = (),
) -> bool:
    """Start the shared informers; wait until ``informers`` (and ``registrations``) synced.

    Returns False when ``stop`` was set first: the controller then returns without running
    its workers. Every controller's ``run`` starts this way.
    """
    options.informers.start()
    while not all(informer.wait_for_sync(SYNC_POLL_S) for informer in informers):
        if stop.is_set():
            return False
    while not all(reg.wait_synced(SYNC_POLL_S) for reg in registrations):
        if stop.is_set():
            return False
    return True


@dataclass
class ControllerOptions:
    """Everything a controller may need, built once by the manager."""

    client: KubeClient
    informers: SharedInformerFactory
    recorder: EventRecorder | None = None
    scheduler_names: tuple[str, ...] = (DEFAULT_SCHEDULER_NAME,)
    worker_threads: int = 5
    worker_threads_for_podgroup: int = 5
    inherit_owner_annotations: bool = True
    # pods the embedded scheduler runs as implicit jobs, which get no PodGroup object
    # (controllers/podgroup/implicit.py); the manager sets it when its scheduler runs
    implicit_pod: Callable[[Mapping[str, Any]], bool] = lambda pod: False
    namespace: str = "volcano-system"
    # the scheduler's binds, which writes that only report give way to (kube/foreground.py)
    foreground: Foreground | None = None


class Controller(Protocol):
    """The role every controller plays. See the module docstring."""

    @property
    def name(self) -> str:
        """The controller's wire name (``hyperNode-controller``, ``pg-controller``)."""
        ...

    def initialize(self, options: ControllerOptions) -> None:
        """Wire to informers and build queues; no API calls here."""
        ...

    def run(self, stop: threading.Event) -> None:
        """Run until ``stop`` is set."""
        ...


ControllerFactory = Callable[[], Controller]


class UnknownControllerError(KeyError):
    """A controller name that is not registered."""

    def __init__(self, name: str, known: Iterable[str]) -> None:
        self.name = name
        self.known = sorted(known)
        super().__init__(
            f"unknown controller {name!r}; known controllers: {', '.join(self.known) or '(none)'}"
        )

    def __str__(self) -> str:
        return str(self.args[0])


class ControllerRegistry:
    """Controller factories by name: duplicates rejected, iteration sorted."""

    def __init__(self) -> None:
        self._factories: dict[str, ControllerFactory] = {}

    def register(self, name: str, factory: ControllerFactory) -> None:
        """Register ``factory`` under ``name``; a second registration of a name is an error."""
        if name in self._factories:
            raise ValueError(f"controller {name!r} is already registered")
        self._factories[name] = factory

    def get(self, name: str) -> ControllerFactory:
        """The factory for ``name``; an unknown name lists the known ones."""
        try:
            return self._factories[name]
        except KeyError:
            raise UnknownControllerError(name, self._factories) from None

    def names(self) -> list[str]:
        """Registered names, sorted."""
        return sorted(self._factories)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __contains__(self, name: object) -> bool:
        return name in self._factories

    def enabled(self, selection: Sequence[str]) -> list[str]:
        """The registered names ``selection`` enables (sorted); see the module docstring."""
        for item in selection:
            if item == "*":
                continue
            bare = item[1:] if item.startswith("-") else item
            if bare not in self._factories:
                raise UnknownControllerError(bare, self._factories)
        return [name for name in self.names() if is_enabled(name, selection)]


def is_enabled(name: str, selection: Sequence[str]) -> bool:
    """Whether ``selection`` (the ``--controllers`` list) enables ``name``."""
    star = False
    for item in selection:
        if item == name:
            return True
        if item == f"-{name}":
            return False
        if item == "*":
            star = True
    return star


def parse_controllers_flag(value: str | Sequence[str]) -> list[str]:
    """Split ``--controllers`` values (comma-separated, repeatable) into a clean list."""
    parts = [value] if isinstance(value, str) else list(value)
    return [item.strip() for part in parts for item in part.split(",") if item.strip()]


class ControllerSet:
    """The enabled controllers, built (factory, then ``initialize``) once, when first asked.

    The manager builds them after the scheduler's first cycle, so their imports, informers
    and handlers' first adds do not compete with it for the GIL; ``build`` is thread-safe
    and idempotent, so the leader's start and a standby's warm-up may both ask.
    """

    def __init__(
        self, registry: ControllerRegistry, names: Sequence[str], options: ControllerOptions
    ) -> None:
        self._factories = [registry.get(name) for name in names]
        self._options = options
        self._built: list[Controller] = []
        self._lock = threading.Lock()

    def built(self) -> list[Controller]:
        """The controllers built so far (none before ``build``)."""
        with self._lock:
            return list(self._built)

    def build(self) -> list[Controller]:
        """Build every controller that is not built yet; return them all."""
        with self._lock:
            for factory in self._factories[len(self._built) :]:
                controller = factory()
                controller.initialize(self._options)
                self._built.append(controller)
            return list(self._built)
