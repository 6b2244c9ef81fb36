"""The TTL step of a Job's reconcile: ``ttlSecondsAfterFinished``, Volcano's job garbage collector.

A finished Job is deleted ``ttlSecondsAfterFinished`` after it finished (the phase's
``lastTransitionTime``), or its key comes back then. Its pods, PodGroup and plugin objects go
with it (owner references).
"""

from __future__ import annotations

import contextlib
import logging
from datetime import datetime, timedelta

from volcano_py.api import JSON
from volcano_py.api import resources as R
from volcano_py.api.vcjob import JobView
from volcano_py.controllers.job.context import JobContext
from volcano_py.controllers.job.interfaces import Request
from volcano_py.kube.errors import NotFound

log = logging.getLogger(__name__)


def expire(ctx: JobContext, job: JSON, view: JobView) -> bool:
    """Delete the finished Job when its TTL has passed (True), else come back then."""
    state = (job.get("status") or {}).get("state") or {}
    try:
        finished = datetime.fromisoformat(str(state.get("lastTransitionTime")))
    except ValueError:
        return False
    ttl = view.ttl_seconds_after_finished or 0
    left = (finished + timedelta(seconds=ttl) - ctx.clock.wall()).total_seconds()
    if left > 0:
        ctx.enqueue_after(Request(f"{view.namespace}/{view.name}"), left)
        return False
    log.info(
        "Job %s/%s: finished %ss ago, ttlSecondsAfterFinished %s: deleting",
        view.namespace,
        view.name,
        int(ttl - left),
        ttl,
    )
    with contextlib.suppress(NotFound):
        ctx.client.delete(R.VCJOBS, view.name, view.namespace)
    return True
