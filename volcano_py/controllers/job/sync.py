"""The job controller's reconcile of one request: read the Job, pick a step, run it.

``JobSync.sync(request)`` reads the Job from the cache (or our own newer write of it,
``writer.py``), takes a Command when the request carries one (``commands.py``), deletes a
finished Job past its TTL (``ttl.py``), turns the request's event into an action through the
job's and task's ``policies`` (``policies.py``), asks ``state.plan`` for the step and runs
it: **SYNC** (``sync_step.py``: PodGroup, pods, status) or **KILL** / **KILL_TARGET**
(``kill_step.py``). A policy action with a ``timeout`` is queued for later instead.

A Job whose spec cannot be read (it got past admission with the webhook off) gets one
Warning Event and ``status.state`` ``Pending`` with reason ``InvalidSpec`` and the field in
the message; it is not retried until it changes.

One reconcile of a Job runs at a time (Volcano shards Jobs over its workers by key); the
state that outlives a reconcile lives in ``JobStatusWriter`` and ``PodWriter``.
"""

from __future__ import annotations

import copy
import logging
import threading
import zlib
from collections.abc import Callable, Mapping
from typing import Any

from volcano_py.api import JSON
from volcano_py.api import resources as R
from volcano_py.api.errors import FieldError
from volcano_py.api.meta import is_being_deleted, name_of
from volcano_py.api.vcjob import FINISHED_PHASES, Action, JobPhase, JobView
from volcano_py.controllers.job.commands import take_command
from volcano_py.controllers.job.context import JobContext
from volcano_py.controllers.job.interfaces import Caches, JobClient, Request
from volcano_py.controllers.job.kill_step import kill_job
from volcano_py.controllers.job.podwork import CREATE_THREADS, MAX_CREATES_PER_SYNC, PodWriter
from volcano_py.controllers.job.policies import resolve_action
from volcano_py.controllers.job.state import StepKind, plan
from volcano_py.controllers.job.status import now
from volcano_py.controllers.job.sync_step import sync_job
from volcano_py.controllers.job.ttl import expire
from volcano_py.controllers.job.writer import JobStatusWriter
from volcano_py.kube.clock import Clock, RealClock
from volcano_py.kube.events import NORMAL, WARNING, Recorder

log = logging.getLogger(__name__)


REASON_INVALID_SPEC = "InvalidSpec"
REASON_EXECUTE_ACTION = "ExecuteAction"
JOB_LOCKS = 64


class JobSync:
    """Reconciles vcjobs; see the module docstring."""

    def __init__(
        self,
        client: JobClient,
        caches: Caches,
        recorder: Recorder,
        *,
        enqueue_after: Callable[[Request, float], None] = lambda request, delay: None,
        clock: Clock | None = None,
        create_threads: int = CREATE_THREADS,
        max_creates_per_sync: int = MAX_CREATES_PER_SYNC,
    ) -> None:
        self.caches = caches
        self.ctx = JobContext(
            client=client,
            caches=caches,
            recorder=recorder,
            clock=clock or RealClock(),
            writer=JobStatusWriter(client, caches.jobs, recorder),
            pods=PodWriter(
                client,
                create_threads=create_threads,
                max_creates_per_sync=max_creates_per_sync,
                clock=clock,
            ),
            enqueue_after=enqueue_after,
        )
        self._job_locks = [threading.Lock() for _ in range(JOB_LOCKS)]

    def job(self, key: str) -> JSON | None:
        """The Job at ``key``: the cached one, or our own write when it is newer."""
        return self.ctx.writer.job(key)

    def deleted_by_us(self, pod: Mapping[str, Any]) -> bool:
        """Whether we deleted ``pod`` (its disappearance is then no eviction); forgets it."""
        return self.ctx.pods.deleted_by_us(pod)

    def observed(self, pod: Mapping[str, Any]) -> None:
        """The informer delivered an event for ``pod`` (see ``PodWriter.observed``)."""
        self.ctx.pods.observed(pod)

    def forget(self, key: str) -> None:
        """The Job is gone: drop what we remember of it."""
        self.ctx.writer.forget(key)
        self.ctx.pods.forget(key)
        self.ctx.reported.pop(key, None)

    def close(self) -> None:
        """Stop the pod-creating threads."""
        self.ctx.pods.close()

    def sync(self, request: Request) -> None:
        """Reconcile the Job ``request.key`` for ``request``'s event or action."""
        with self._job_locks[zlib.crc32(request.key.encode()) % JOB_LOCKS]:
            self._sync(request)

    def _sync(self, request: Request) -> None:
        ctx = self.ctx
        job = ctx.writer.job(request.key)
        if job is None or is_being_deleted(job):
            return
        if request.command and not take_command(ctx, job, request):
            return
        try:
            view = JobView.from_dict(job)
        except FieldError as e:
            self._invalid(job, str(e))
            return
        expires = view.phase in FINISHED_PHASES and view.ttl_seconds_after_finished is not None
        if expires and expire(ctx, job, view):
            return
        decision = resolve_action(view, request)
        action = decision.action
        if decision.delay > 0:
            message = f"Execute action {action} after {decision.delay:g}s"
            ctx.recorder.event(job, NORMAL, REASON_EXECUTE_ACTION, message, resource=R.VCJOBS)
            delayed = Request(
                request.key,
                action=action,
                task=request.task,
                pod=request.pod,
                partition=request.partition,
                job_uid=view.uid,
            )
            ctx.enqueue_after(delayed, decision.delay)
            return
        if action != Action.SYNC_JOB:
            message = f"Start to execute action {action} "
            ctx.recorder.event(job, NORMAL, REASON_EXECUTE_ACTION, message, resource=R.VCJOBS)
        step = plan(view, action)
        if step.kind is StepKind.SYNC:
            sync_job(ctx, job, view, step)
        else:
            kill_job(ctx, job, view, step, request, action)

    def _invalid(self, job: JSON, message: str) -> None:
        state = (job.get("status") or {}).get("state") or {}
        if state.get("reason") == REASON_INVALID_SPEC and state.get("message") == message:
            return
        namespace = job["metadata"].get("namespace")
        log.warning("Job %s/%s: invalid spec: %s", namespace, name_of(job), message)
        self.ctx.recorder.event(job, WARNING, REASON_INVALID_SPEC, message, resource=R.VCJOBS)
        body = copy.deepcopy(job)
        status = body.setdefault("status", {})
        status["state"] = {
            "phase": state.get("phase") or JobPhase.PENDING,
            "reason": REASON_INVALID_SPEC,
            "message": message,
            "lastTransitionTime": now(),
        }
        self.ctx.writer.write_status(body)
