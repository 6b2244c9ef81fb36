"""``sla``: a job's waiting time — how long it may stay Pending (Volcano's sla plugin).

A job's waiting time is its PodGroup's ``volcano.sh/sla-waiting-time`` annotation, else its
``sla-waiting-time`` annotation (the one Volcano's job controller copies from a vcjob), else
the plugin's ``sla-waiting-time`` argument; a Go duration (``3s``, ``30m``, ``1h2m3s``). A job
without one is not the plugin's concern.

- job order: jobs with a waiting time before jobs without; among them the earlier deadline
  (creation + waiting time) first. In Volcano's CI configuration the plugin sits after
  ``priority`` and ``gang``, so it orders jobs of one priority and readiness.
- job enqueueable: once a job has waited its time it is **permitted**: in Volcano's tiered
  vote that admits it (Pending → Inqueue) unless a plugin of the same tier rejects it,
  without asking the later tiers (``overcommit``, ``proportion`` in Volcano's configuration):
  a job larger than the cluster is admitted after its waiting time, and its pods are
  created. Before that, and for jobs without a waiting time, the plugin abstains.

Volcano also registers the same vote as ``JobPipelined`` (an incomplete gang keeps its
partial placement for the rest of the cycle). Not here: in Volcano's configurations ``gang``
sits in sla's tier and rejects pipelining a gang short of its minimum, and a rejection in the
tier wins, so that vote changes nothing there (docs/scheduler.md, "Plugins and arguments").

A bad argument fails the configuration at load time (naming it); a bad annotation leaves the
job without a waiting time and is logged once per job and value.
"""

from __future__ import annotations

import logging
from datetime import datetime

from volcano_py.api.duration import parse_duration
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.framework.arguments import Arguments
from volcano_py.scheduler.framework.interface import PERMIT
from volcano_py.scheduler.framework.session import Session

log = logging.getLogger(__name__)

SLA_PLUGIN = "sla"
WAITING_TIME = "sla-waiting-time"  # the argument, and the annotation Volcano's jobs carry
WAITING_TIME_ANNOTATION = "volcano.sh/sla-waiting-time"  # read first


def _positive_duration(text: str) -> float:
    """``text`` as a Go duration in seconds, which must be above zero.

    Raises:
        ValueError: not a duration, or not above zero.
    """
    seconds = parse_duration(text)
    if seconds <= 0:
        raise ValueError(f"invalid waiting time {text!r}: must be above zero")
    return seconds


def _epoch(timestamp: str) -> float | None:
    try:
        return datetime.fromisoformat(timestamp).timestamp()
    except ValueError:
        return None


class SlaPlugin:
    """Job order by deadline; an overdue job is admitted."""

    name = SLA_PLUGIN

    def __init__(self, args: Arguments) -> None:
        """``sla-waiting-time``: the waiting time of jobs without an annotation (optional).

        Raises:
            ValueError: the argument is not a Go duration above zero.
        """
        self.args = args
        value = args.get(WAITING_TIME)
        self.waiting_time: float | None = None
        if value is not None:
            if not isinstance(value, str):
                raise ValueError(f"{WAITING_TIME}: expected a duration such as 1h, got {value!r}")
            try:
                self.waiting_time = _positive_duration(value)
            except ValueError as e:
                raise ValueError(f"{WAITING_TIME}: {e}") from None
        self._deadlines: dict[str, float | None] = {}

    def deadline(self, ssn: Session, job: JobInfo) -> float | None:
        """Creation + waiting time (epoch seconds), or None without a waiting time."""
        if job.key in self._deadlines:
            return self._deadlines[job.key]
        wait = self.waiting_time
        annotations = (job.podgroup.get("metadata") or {}).get("annotations") or {}
        for key in (WAITING_TIME_ANNOTATION, WAITING_TIME):
            text = annotations.get(key)
            if text is None:
                continue
            try:
                wait = _positive_duration(str(text))
                break
            except ValueError as e:
                ssn.notes.warning(log, f"sla/{job.key}/{text}", "job %s: %s: %s", job.key, key, e)
        created = _epoch(job.creation) if job.creation else None
        found = None if wait is None or created is None else created + wait
        self._deadlines[job.key] = found
        return found

    def on_session_open(self, ssn: Session) -> None:
        """Register the job order and the enqueue permit."""
        self._deadlines = {}

        def job_order(left: JobInfo, right: JobInfo) -> int:
            mine, theirs = self.deadline(ssn, left), self.deadline(ssn, right)
            if mine is None or theirs is None:
                return 0 if mine is theirs else (1 if mine is None else -1)
            return -1 if mine < theirs else (1 if mine > theirs else 0)

        def enqueueable(job: JobInfo) -> str | None:
            deadline = self.deadline(ssn, job)
            if deadline is None or ssn.now < deadline:
                return None
            return PERMIT

        ssn.add_job_order_fn(self.name, job_order)
        ssn.add_job_enqueueable_fn(self.name, enqueueable, permit_only=True)

    def on_session_close(self, ssn: Session) -> None:
        """Forget the session's deadlines."""
        self._deadlines = {}
