"""A vcjob's ``status`` JSON <-> the ``Status`` the phase machine works on.

``status_of`` reads the counts, version and retry count the job carries (absent counts are
zero, as Volcano's ``omitempty`` writes them); ``status_body`` writes a ``Status`` back into
the job's status JSON, keeping what it does not own (``controlledResources``), moving
``state.lastTransitionTime`` and the phase's condition only when the phase changed, and
writing ``runningDuration`` as Volcano does on every status write: the time from the Job's
creation to its latest phase transition, as a Go duration (``1m30s``).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from volcano_py.api import JSON
from volcano_py.api.vcjob import JobPhase, JobView
from volcano_py.controllers.job.state import Status


def now() -> str:
    """The current time as the API server writes a timestamp."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def status_of(job: Mapping[str, Any], view: JobView) -> Status:
    """The job's current status as a ``Status`` (absent counts are zero)."""
    raw = job.get("status") or {}
    counts = raw.get("taskStatusCount") or {}
    return Status(
        phase=view.phase or JobPhase.PENDING,
        min_available=int(raw.get("minAvailable") or 0),
        pending=int(raw.get("pending") or 0),
        running=int(raw.get("running") or 0),
        succeeded=int(raw.get("succeeded") or 0),
        failed=int(raw.get("failed") or 0),
        terminating=int(raw.get("terminating") or 0),
        unknown=int(raw.get("unknown") or 0),
        version=view.version,
        retry_count=view.retry_count,
        task_status_count={
            str(task): {str(p): int(n) for p, n in ((entry or {}).get("phase") or {}).items() if n}
            for task, entry in counts.items()
            if isinstance(entry, Mapping)
        },
    )


def go_duration(seconds: int) -> str:
    """Whole seconds as Go's ``time.Duration.String()`` prints them (``0s``, ``1m30s``)."""
    sign, seconds = ("-", -seconds) if seconds < 0 else ("", seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{sign}{hours}h{minutes}m{secs}s"
    if minutes:
        return f"{sign}{minutes}m{secs}s"
    return f"{sign}{secs}s"


def _timestamp(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def running_duration(job: Mapping[str, Any], last_transition: str) -> str | None:
    """Volcano's ``status.runningDuration``: creation to the latest transition; None if unknown."""
    meta = job.get("metadata")
    created = (
        _timestamp(str(meta.get("creationTimestamp") or "")) if isinstance(meta, Mapping) else None
    )
    moved = _timestamp(last_transition)
    if created is None or moved is None:
        return None
    return go_duration(int((moved - created).total_seconds()))


def status_body(job: Mapping[str, Any], status: Status, *, changed_phase: bool) -> JSON:
    """The job's ``status`` JSON for ``status`` (zero counts left out, as Volcano's omitempty)."""
    raw: JSON = copy.deepcopy(dict(job.get("status") or {}))
    state: JSON = dict(raw.get("state") or {})
    state["phase"] = status.phase
    if changed_phase or "lastTransitionTime" not in state:
        state["lastTransitionTime"] = now()
        state.pop("reason", None)
        state.pop("message", None)
        conditions = [c for c in raw.get("conditions") or [] if c.get("status") != status.phase]
        conditions.append(
            {"status": status.phase, "lastTransitionTime": state["lastTransitionTime"]}
        )
        raw["conditions"] = conditions
    raw["state"] = state
    duration = running_duration(job, str(state.get("lastTransitionTime") or ""))
    if duration is not None:
        raw["runningDuration"] = duration
    for name in (
        "minAvailable",
        "pending",
        "running",
        "succeeded",
        "failed",
        "terminating",
        "unknown",
        "version",
        "retryCount",
    ):
        attr = {"minAvailable": "min_available", "retryCount": "retry_count"}.get(name, name)
        value = getattr(status, attr)
        if value:
            raw[name] = value
        else:
            raw.pop(name, None)
    if status.task_status_count:
        raw["taskStatusCount"] = {
            task: {"phase": dict(phases)} for task, phases in status.task_status_count.items()
        }
    else:
        raw.pop("taskStatusCount", None)
    return raw
