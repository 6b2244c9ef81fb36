"""The plugin steps of a Job's reconcile: Volcano's ``pluginOnJobAdd`` / ``pluginOnJobDelete``.

A plugin runs ``on_job_add`` once; that it did is recorded in ``status.controlledResources``
(``plugin-<name>: <name>``), so a restarted controller does not add it again, and a whole-job
kill runs ``on_job_delete`` for the ones recorded (a restarted job adds them afresh). Once
added, ``on_job_update`` runs on each sync (``update_plugins``): the svc plugin's hosts
ConfigMap follows the tasks' replicas, so elastic jobs see their peers after a scale.

A plugin that cannot do its step (the API server rejects its object, or ``PluginError``: its
host list is too large, or an object of its name exists that this Job does not own) gets a
Warning ``PluginError`` Event on the Job and the step fails; what the plugins before it did
is written first, so the retry neither repeats nor clashes with it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping

from volcano_py.api import JSON
from volcano_py.api import resources as R
from volcano_py.api.vcjob import JobView
from volcano_py.controllers.job.context import JobContext
from volcano_py.controllers.job.plugin_registry import plugins_of
from volcano_py.controllers.job.plugins import JobPlugin, PluginError
from volcano_py.kube.errors import Invalid
from volcano_py.kube.events import WARNING

REASON_PLUGIN_ERROR = "PluginError"


def add_plugins(ctx: JobContext, job: JSON, view: JobView, plugins: list[JobPlugin]) -> JSON | None:
    """Run ``on_job_add`` once per plugin; the Job body to write when one ran, else None."""
    controlled = dict((job.get("status") or {}).get("controlledResources") or {})
    added = False
    for plugin in plugins:
        if controlled.get(f"plugin-{plugin.name}") == plugin.name:
            continue
        # on failure, keep what the plugins before it did: a retry must not redo (or clash)
        extra = _run(ctx, job, view, plugin, "add", controlled if added else None)
        controlled[f"plugin-{plugin.name}"] = plugin.name
        controlled.update(extra or {})
        added = True
    return _with_controlled(job, controlled) if added else None


def update_plugins(
    ctx: JobContext, job: JSON, view: JobView, plugins: list[JobPlugin]
) -> JSON | None:
    """Run ``on_job_update`` for the plugins that added something; the body to write, if any.

    The svc plugin rewrites its hosts ConfigMap after a scale up or down (what it wrote is
    recorded beside its name, so an unchanged spec costs nothing).
    """
    controlled = dict((job.get("status") or {}).get("controlledResources") or {})
    changed = False
    for plugin in plugins:
        if controlled.get(f"plugin-{plugin.name}") != plugin.name:
            continue
        extra = _run(ctx, job, view, plugin, "update", None)
        if extra and any(controlled.get(k) != v for k, v in extra.items()):
            controlled.update(extra)
            changed = True
    return _with_controlled(job, controlled) if changed else None


def _run(
    ctx: JobContext,
    job: JSON,
    view: JobView,
    plugin: JobPlugin,
    when: str,
    progress: dict[str, str] | None,
) -> Mapping[str, str] | None:
    """``on_job_<when>``; a failure is a Warning (after writing ``progress``), then raised."""
    hook = plugin.on_job_add if when == "add" else plugin.on_job_update
    try:
        return hook(job, view, ctx.client)
    except (Invalid, PluginError) as e:
        message = f"Execute plugin {plugin.name} when job {when} failed, err: {e}"
        ctx.recorder.event(job, WARNING, REASON_PLUGIN_ERROR, message, resource=R.VCJOBS)
        if progress is not None:
            ctx.writer.write_status(_with_controlled(job, progress))
        raise


def delete_plugins(ctx: JobContext, job: JSON, view: JobView) -> JSON:
    """Run ``on_job_delete`` for the plugins that added something; forget them (not written)."""
    controlled = dict((job.get("status") or {}).get("controlledResources") or {})
    plugins, _ = plugins_of(view)
    removed = False
    for plugin in plugins:
        if controlled.get(f"plugin-{plugin.name}") != plugin.name:
            continue
        plugin.on_job_delete(job, view, ctx.client)
        prefix = f"plugin-{plugin.name}."  # what the plugin recorded beside its name
        for key in [k for k in controlled if k == f"plugin-{plugin.name}" or k.startswith(prefix)]:
            del controlled[key]
        removed = True
    return _with_controlled(job, controlled) if removed else job


def _with_controlled(job: JSON, controlled: dict[str, str]) -> JSON:
    """A copy of ``job`` with ``status.controlledResources`` replaced."""
    body = copy.deepcopy(job)
    body.setdefault("status", {})["controlledResources"] = controlled
    return body
