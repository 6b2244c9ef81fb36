"""From a request's event to the action a Job's ``policies`` ask for (``applyPolicies``).

Rules, in order:

1. a request that carries an ``action`` (a delayed policy action, a command) is that action;
2. internal events (``OutOfSync``, ``CommandIssued``, ``PodRunning``) and requests without
   an event only sync;
3. a request from a pod of an earlier Job with the same name (another uid), or from a pod
   of an older ``status.version`` (killed by a restart), only syncs;
4. the pod's task's ``policies`` are tried first, then the Job's: a policy matches when its
   ``event``/``events`` contain the request's event or ``*`` (``PodPending`` only matches a
   policy with a ``timeout``), or when its ``exitCode`` equals the pod's exit code. The first
   match gives the action and, with ``timeout``, a delay before it runs;
5. otherwise sync.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from volcano_py.api.duration import parse_duration as go_duration
from volcano_py.api.vcjob import Action, Event, JobView
from volcano_py.controllers.job.interfaces import Request

_INTERNAL = frozenset({Event.OUT_OF_SYNC, Event.COMMAND_ISSUED, Event.POD_RUNNING})


@dataclass(frozen=True, slots=True)
class Decision:
    """The action to take and how long to wait before taking it (seconds)."""

    action: str
    delay: float = 0.0


def parse_duration(text: str) -> float:
    """A Go ``time.Duration`` string (``90s``, ``1m30s``, ``1.5h``) in seconds; empty is 0."""
    return go_duration(text) if text.strip() else 0.0


def _events(policy: Mapping[str, Any]) -> list[str]:
    events = [str(e) for e in policy.get("events") or []]
    if policy.get("event"):
        events.append(str(policy["event"]))
    return events


def _match(policies: Iterable[Mapping[str, Any]], request: Request) -> Decision | None:
    for policy in policies:
        events = _events(policy)
        timeout = policy.get("timeout")
        delay = parse_duration(str(timeout)) if timeout else 0.0
        hit = bool(events) and (request.event in events or Event.ANY in events)
        if request.event and hit and (request.event != Event.POD_PENDING or timeout):
            return Decision(str(policy.get("action") or Action.SYNC_JOB), delay)
        code = policy.get("exitCode")
        if code is not None and request.exit_code is not None and code == request.exit_code:
            return Decision(str(policy.get("action") or Action.SYNC_JOB), delay)
    return None


def resolve_action(job: JobView, request: Request) -> Decision:
    """The decision for ``request`` on ``job`` (see the module docstring)."""
    if request.action:
        return Decision(request.action)
    if not request.event or request.event in _INTERNAL:
        return Decision(Action.SYNC_JOB)
    if request.job_uid and request.job_uid != job.uid:
        return Decision(Action.SYNC_JOB)
    if 0 <= request.version < job.version:
        return Decision(Action.SYNC_JOB)
    if request.task:
        task = job.task(request.task)
        if task is not None:
            found = _match(task.policies, request)
            if found is not None:
                return found
    found = _match(job.policies, request)
    return found if found is not None else Decision(Action.SYNC_JOB)
