"""The job controller's steps around a Job's life that are not its pods: plugins, Commands, TTL.

``JobSync`` (``sync.py``) calls these while it reconciles a Job:

- ``add_plugins`` / ``delete_plugins``: Volcano's ``pluginOnJobAdd`` / ``pluginOnJobDelete``.
  A plugin runs ``on_job_add`` once; that it did is recorded in
  ``status.controlledResources`` (``plugin-<name>: <name>``), so a restarted controller does
  not add it again, and a whole-job kill runs ``on_job_delete`` for the ones recorded.
- ``take_command``: a ``bus.volcano.sh`` Command is deleted before its action runs, so the
  action runs at most once (Volcano's order).
- ``expire``: ``ttlSecondsAfterFinished``, Volcano's job garbage collector.

Nothing here holds state; the caller passes the client, recorder and clock it owns.
"""

from __future__ import annotations

import contextlib
import copy
import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from volcano_py.api import resources as R
from volcano_py.api.vcjob import JobView
from volcano_py.controllers.job.interfaces import JobClient, Request
from volcano_py.controllers.job.plugin_registry import plugins_of
from volcano_py.controllers.job.plugins import JobPlugin
from volcano_py.kube.clock import Clock
from volcano_py.kube.errors import Invalid, NotFound
from volcano_py.kube.events import NORMAL, WARNING, Recorder

log = logging.getLogger(__name__)

JSON = dict[str, Any]

REASON_PLUGIN_ERROR = "PluginError"
REASON_COMMAND_ISSUED = "CommandIssued"


def add_plugins(
    job: JSON, view: JobView, plugins: list[JobPlugin], client: JobClient, recorder: Recorder
) -> JSON | None:
    """Run ``on_job_add`` once per plugin; the Job body to write when one ran, else None."""
    controlled = dict((job.get("status") or {}).get("controlledResources") or {})
    added = False
    for plugin in plugins:
        if controlled.get(f"plugin-{plugin.name}") == plugin.name:
            continue
        try:
            plugin.on_job_add(job, view, client)
        except Invalid as e:
            message = f"Execute plugin {plugin.name} when job add failed, err: {e}"
            recorder.event(job, WARNING, REASON_PLUGIN_ERROR, message, resource=R.VCJOBS)
            raise
        controlled[f"plugin-{plugin.name}"] = plugin.name
        added = True
    return _with_controlled(job, controlled) if added else None


def delete_plugins(job: JSON, view: JobView, client: JobClient) -> JSON:
    """Run ``on_job_delete`` for the plugins that added something; forget them (not written)."""
    controlled = dict((job.get("status") or {}).get("controlledResources") or {})
    plugins, _ = plugins_of(view)
    removed = False
    for plugin in plugins:
        if controlled.get(f"plugin-{plugin.name}") != plugin.name:
            continue
        plugin.on_job_delete(job, view, client)
        del controlled[f"plugin-{plugin.name}"]
        removed = True
    return _with_controlled(job, controlled) if removed else job


def _with_controlled(job: JSON, controlled: dict[str, str]) -> JSON:
    """A copy of ``job`` with ``status.controlledResources`` replaced."""
    body = copy.deepcopy(job)
    body.setdefault("status", {})["controlledResources"] = controlled
    return body


def take_command(client: JobClient, recorder: Recorder, job: JSON, request: Request) -> bool:
    """Delete the Command first, so its action runs at most once (Volcano's order).

    False when it was already gone: another worker (or process) took it.
    """
    namespace = (job.get("metadata") or {}).get("namespace")
    try:
        client.delete(R.COMMANDS, request.command, namespace)
    except NotFound:
        return False
    recorder.event(
        job, NORMAL, REASON_COMMAND_ISSUED,
        f"Start to execute command {request.action}, and clean it up to make sure executed "
        "not more than once.",
        resource=R.VCJOBS,
    )  # fmt: skip
    return True


def expire(
    client: JobClient,
    clock: Clock,
    enqueue_after: Callable[[Request, float], None],
    job: JSON,
    view: JobView,
) -> bool:
    """Delete a finished Job ``ttlSecondsAfterFinished`` after it finished, or come back then.

    Volcano's garbage collector: the finish time is the phase's ``lastTransitionTime``.
    The Job's pods, PodGroup and plugin objects go with it (owner references).
    """
    state = (job.get("status") or {}).get("state") or {}
    try:
        finished = datetime.fromisoformat(str(state.get("lastTransitionTime")))
    except ValueError:
        return False
    ttl = view.ttl_seconds_after_finished or 0
    left = (finished + timedelta(seconds=ttl) - clock.wall()).total_seconds()
    if left > 0:
        enqueue_after(Request(f"{view.namespace}/{view.name}"), left)
        return False
    log.info("Job %s/%s: finished %ss ago, ttlSecondsAfterFinished %s: deleting",
             view.namespace, view.name, int(ttl - left), ttl)  # fmt: skip
    with contextlib.suppress(NotFound):
        client.delete(R.VCJOBS, view.name, view.namespace)
    return True
