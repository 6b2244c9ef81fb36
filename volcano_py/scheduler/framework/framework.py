"""``open_session`` / ``close_session``: build, open and close a cycle's plugins.

Volcano's ``pkg/scheduler/framework/framework.go``. ``open_session`` makes a ``Session`` on
the snapshot (state only), then builds every plugin of every tier from the registry, in tier
order, and lets each register its extension point functions. When no configured plugin votes
on enqueue, the registry's ``enqueue_fallback`` is opened too, so the enqueue action always
asks the session and never a plugin. ``close_session`` lets each plugin drop its per-session
state, then the session lets go of the plugins' functions (``Session.close``).

The loop (``scheduler.run_cycle``), the simulator and ``explain`` open sessions here; actions
and plugins never do.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from volcano_py.kube.changelog import ChangeLog
from volcano_py.metrics import PLUGIN_SCHEDULING_LATENCY
from volcano_py.scheduler.api.node_search import NodeSearch
from volcano_py.scheduler.api.snapshot import Snapshot
from volcano_py.scheduler.framework.arguments import Arguments
from volcano_py.scheduler.framework.conf import SchedulerConf
from volcano_py.scheduler.framework.interface import Binder
from volcano_py.scheduler.framework.registry import PluginBuilder, PluginRegistry
from volcano_py.scheduler.framework.session import Session


def open_session(
    snapshot: Snapshot,
    conf: SchedulerConf,
    plugins: PluginRegistry,
    notes: ChangeLog | None = None,
    node_search: NodeSearch | None = None,
    binder: Binder | None = None,
) -> Session:
    """A session on ``snapshot`` with the plugins of ``conf``'s tiers open.

    ``notes``: where lines about a job are logged once per change across sessions (the
    scheduler's; a fresh one, which logs everything, when None). ``node_search``: the
    scheduler's node-search limits and position (a fresh default one when None).
    ``binder``: what committed tasks are handed to, to be bound at once (the loop's
    ``CycleBinder``; none for the simulator and ``explain``).
    """
    ssn = Session(snapshot, conf, notes, node_search, binder)
    for tier in conf.tiers:
        for option in tier:
            _open(ssn, plugins.get(option.name), option.name, option.arguments)
    if plugins.enqueue_fallback is not None and not ssn.has_job_enqueueable_fns:
        _open(ssn, plugins.enqueue_fallback, "enqueue-fallback", {})
    return ssn


def close_session(ssn: Session) -> None:
    """Let every plugin release its per-session state, then close the session."""
    for plugin in ssn.plugins:
        started = time.perf_counter()
        plugin.on_session_close(ssn)
        _observe(plugin.name, "OnSessionClose", started)
    ssn.close()


def _open(ssn: Session, build: PluginBuilder, name: str, arguments: Mapping[str, Any]) -> None:
    plugin = build(Arguments(name, arguments, ssn.notes))
    ssn.plugins.append(plugin)
    started = time.perf_counter()
    plugin.on_session_open(ssn)
    _observe(name, "OnSessionOpen", started)


def _observe(plugin: str, extension_point: str, started: float) -> None:
    """Volcano's plugin latency histogram, in milliseconds."""
    PLUGIN_SCHEDULING_LATENCY.labels(plugin, extension_point).observe(
        (time.perf_counter() - started) * 1000
    )
