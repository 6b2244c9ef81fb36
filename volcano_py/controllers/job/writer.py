"""The job controller's one writer of a Job's status, and its read of the Job.

``JobStatusWriter`` is the only place the job controller writes ``vcjobs/status``. The
informer lags behind those writes (as Volcano's job cache covers), so it remembers the last
body it wrote per Job and ``job(key)`` returns that body while it is newer than the cached
one; the memory is dropped as soon as the cache catches up or the Job is gone.

A write that changes the phase also records Volcano's ``JobPhaseChanged``-style Normal Event
(``REASON_PHASE_CHANGED``).
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Mapping
from typing import Any

from volcano_py.api import JSON
from volcano_py.api import resources as R
from volcano_py.api.meta import name_of, resource_version_of
from volcano_py.api.vcjob import JobView
from volcano_py.controllers.job.interfaces import JobClient
from volcano_py.controllers.job.state import Status
from volcano_py.controllers.job.status import status_body
from volcano_py.kube.events import NORMAL, Recorder
from volcano_py.kube.store import Store

REASON_PHASE_CHANGED = "JobPhaseChanged"


class JobStatusWriter:
    """Writes Job status and reads Jobs through its own newer writes; see the docstring."""

    def __init__(self, client: JobClient, jobs: Store, recorder: Recorder) -> None:
        self.client = client
        self.jobs = jobs
        self.recorder = recorder
        self._lock = threading.Lock()
        self._written: dict[str, JSON] = {}  # key -> our last write of the Job, until cached

    def job(self, key: str) -> JSON | None:
        """The Job at ``key``: the cached one, or our own write when it is newer."""
        cached = self.jobs.get(key)
        with self._lock:
            mine = self._written.get(key)
            if cached is None:
                self._written.pop(key, None)
                return None
            if mine is not None and _newer(mine, cached):
                return mine
            self._written.pop(key, None)
        return cached

    def forget(self, key: str) -> None:
        """The Job is gone: drop our last write of it."""
        with self._lock:
            self._written.pop(key, None)

    def write(
        self,
        job: JSON,
        view: JobView,
        status: Status,
        *,
        changed: bool,
        reason: str = "",
        message: str = "",
    ) -> JSON:
        """Write ``status`` into the Job; an Event when the phase moved. The Job written.

        ``reason`` / ``message`` go to ``status.state`` (why the Job waits), kept until a
        phase change or a write with another reason.
        """
        old_phase = view.phase
        body = copy.deepcopy(job)
        body["status"] = status_body(job, status, changed_phase=changed or not old_phase)
        if reason:
            body["status"]["state"].update(reason=reason, message=message)
        written = self.write_status(body)
        if status.phase != old_phase:
            self.recorder.event(
                job,
                NORMAL,
                REASON_PHASE_CHANGED,
                f"Job phase changed from {old_phase or '(none)'} to {status.phase}",
                resource=R.VCJOBS,
            )
        return written

    def write_status(self, body: JSON) -> JSON:
        """PUT ``body``'s status; remember it until the cache shows it."""
        written = self.client.update(R.VCJOBS, body, subresource="status")
        key = f"{body['metadata'].get('namespace')}/{name_of(body)}"
        if resource_version_of(written):
            with self._lock:
                self._written[key] = written
        return written


def _newer(mine: Mapping[str, Any], cached: Mapping[str, Any]) -> bool:
    try:
        return int(resource_version_of(mine)) > int(resource_version_of(cached))
    except ValueError:
        return False
