"""``overcommit``: the enqueue gate, Volcano's semantics (``overcommit-factor``, default 1.2).

A Pending job may enter its queue when, in every dimension its ``minResources`` names, the
resources already promised to admitted jobs plus its own fit in the cluster's idle capacity
inflated by the factor: ``total x factor - used``. Promised: every Inqueue job's
``minResources``, and for a Running job whose placed tasks reach ``minMember`` what of its
``minResources`` is not placed yet; both less what the job's gated pods ask (pods with
``spec.schedulingGates`` hold nothing, ``JobInfo.inqueue_need``). A job without
``minResources`` is best effort: always admitted. Each admission adds to the promised
amount, so one cycle cannot over-admit.
``overcommit-factor`` below 1 is refused at load (Volcano logs it and uses 1.2).

``OvercommitFallback`` is the registry's ``enqueue_fallback``: ``framework.open_session`` opens
it when no configured plugin votes on enqueue (volcano-py's default tiers have no
``overcommit`` entry and always admitted this way). It builds its gate, at the default factor,
when the enqueue action first asks, as the action did itself before it asked only the session.
"""

from __future__ import annotations

from volcano_py.api.constants import PodGroupPhase
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.resource import Resource, format_short
from volcano_py.scheduler.api.task_info import OCCUPYING
from volcano_py.scheduler.framework.arguments import Arguments, ConfError
from volcano_py.scheduler.framework.session import Session

DEFAULT_FACTOR = 1.2
FACTOR_KEY = "overcommit-factor"


class OvercommitGate:
    """Idle (inflated) and promised resources of one session."""

    def __init__(self, ssn: Session, factor: float = DEFAULT_FACTOR) -> None:
        """Sum the cluster and the promised amounts once."""
        total = Resource()
        used = Resource()
        for node in ssn.nodes.values():
            total.add(node.allocatable)
            used.add(node.used)
        self.idle = total.scaled(factor).sub(used)
        self.inqueue = Resource()
        for job in ssn.jobs.values():
            if job.min_resources.is_empty():
                continue
            if job.phase == PodGroupPhase.INQUEUE:
                self.inqueue.add(job.inqueue_need(job.min_resources))
            elif job.phase == PodGroupPhase.RUNNING:
                placed = Resource()
                count = 0
                for task in job.tasks.values():
                    if task.status in OCCUPYING:
                        placed.add(task.resreq)
                        count += 1
                if count >= job.min_member:
                    rest = job.min_resources.clone().sub(placed)
                    self.inqueue.add(job.inqueue_need(rest.clamped()))

    def reject(self, job: JobInfo) -> str | None:
        """None when ``job`` may enter, else the overused resource names."""
        need = job.min_resources
        if need.is_empty():
            return None
        short = []
        for name, amount in need.items():
            if amount > 0 and self.inqueue.get(name) + amount > self.idle.get(name):
                have = max(0, self.idle.get(name) - self.inqueue.get(name))
                short.append(f"{name} short by {format_short(name, amount - have)}")
        if not short:
            return None
        return "resource in cluster is overused: " + ", ".join(short)

    def enqueued(self, job: JobInfo) -> None:
        """Promise ``job``'s minResources (less what its gated pods ask)."""
        self.inqueue.add(job.inqueue_need(job.min_resources))


class OvercommitPlugin:
    """Registers the gate as a job-enqueueable vote."""

    name = "overcommit"

    def __init__(self, args: Arguments) -> None:
        """Read ``overcommit-factor`` (at least 1)."""
        self.factor = args.get_float(FACTOR_KEY, DEFAULT_FACTOR)
        if self.factor < 1.0:
            raise ConfError(
                f"tiers[].plugins[overcommit].arguments[{FACTOR_KEY}]: "
                f"must be at least 1, got {self.factor}"
            )

    def on_session_open(self, ssn: Session) -> None:
        """Build the gate; vote on and follow enqueues."""
        gate = OvercommitGate(ssn, self.factor)
        ssn.add_job_enqueueable_fn(self.name, gate.reject)
        ssn.add_job_enqueued_fn(self.name, gate.enqueued)

    def on_session_close(self, ssn: Session) -> None:
        """Nothing to release."""


class OvercommitFallback:
    """The overcommit gate at its default factor, built on the first vote."""

    name = "overcommit-fallback"

    def __init__(self, args: Arguments) -> None:
        """No arguments: the factor is the default."""
        self._ssn: Session | None = None
        self._gate: OvercommitGate | None = None

    def on_session_open(self, ssn: Session) -> None:
        """Vote on and follow enqueues."""
        self._ssn = ssn
        ssn.add_job_enqueueable_fn(self.name, self.reject)
        ssn.add_job_enqueued_fn(self.name, self.enqueued)

    def on_session_close(self, ssn: Session) -> None:
        """Drop the gate and the session."""
        self._ssn = None
        self._gate = None

    def _the_gate(self) -> OvercommitGate:
        if self._gate is None:
            assert self._ssn is not None, "vote outside an open session"
            self._gate = OvercommitGate(self._ssn)
        return self._gate

    def reject(self, job: JobInfo) -> str | None:
        """The gate's vote on ``job``."""
        return self._the_gate().reject(job)

    def enqueued(self, job: JobInfo) -> None:
        """Promise ``job``'s minResources."""
        self._the_gate().enqueued(job)
