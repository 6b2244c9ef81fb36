"""The Command step of a Job's reconcile: take a ``bus.volcano.sh`` Command before acting on it.

The Command is deleted before its action runs, so the action runs at most once (Volcano's
order); when it is already gone, another worker (or process) took it and this request stops.
"""

from __future__ import annotations

from volcano_py.api import JSON
from volcano_py.api import resources as R
from volcano_py.controllers.job.context import JobContext
from volcano_py.controllers.job.interfaces import Request
from volcano_py.kube.errors import NotFound
from volcano_py.kube.events import NORMAL

REASON_COMMAND_ISSUED = "CommandIssued"


def take_command(ctx: JobContext, job: JSON, request: Request) -> bool:
    """Delete the Command first; False when it was already gone."""
    namespace = (job.get("metadata") or {}).get("namespace")
    try:
        ctx.client.delete(R.COMMANDS, request.command, namespace)
    except NotFound:
        return False
    ctx.recorder.event(
        job,
        NORMAL,
        REASON_COMMAND_ISSUED,
        f"Start to execute command {request.action}, and clean it up to make sure executed "
        "not more than once.",
        resource=R.VCJOBS,
    )
    return True
