"""Leader election on a coordination.k8s.io/v1 Lease, as client-go's ``leaderelection`` does it.

Every replica serves webhooks; only the replica holding the Lease runs the controllers and the
scheduler. The manager builds one ``LeaderElector``, starts it (thread ``leader-election``) and
gives it ``on_started_leading(stop)`` to start the leader-only work.

Contract:

- **Acquire** when the Lease does not exist (create it), when its holder is empty (released),
  when it is already ours, or when it has expired. Expiry is judged by *our* clock: the Lease
  is expired ``leaseDurationSeconds`` after we last saw its record change, whatever its
  ``renewTime`` says, so clock skew between hosts cannot make two leaders.
- **Optimistic concurrency.** Every write is a PUT of the Lease we last read, carrying its
  ``resourceVersion``; a Conflict means another candidate won that round. We try again after
  ``retry_period`` (jittered by up to 1.2x, as client-go does, so candidates spread out).
- **Renew** ``retry_period`` after each successful renew, retrying every ``retry_period``.
  Leadership ends when a renewal has not succeeded ``renew_deadline`` after it began, or at
  once when we read a record naming another holder (client-go keeps trying until the
  deadline; we stop sooner, since ``is_leader()`` is already false then).
  ``on_started_leading`` gets an Event that is set at that moment; leader-only work must stop.
- **Fence.** ``holds_lease()`` is the check every leader-only write makes before it is sent
  (the manager gives the controllers and the scheduler a client gated on it): a leader paused
  past its renew deadline (SIGSTOP, a long GC, a frozen VM) writes nothing when it resumes.
- **Release on stop.** When ``run``'s stop Event is set while leading, the elector waits (up
  to ``renew_deadline``) for the ``on_started_leading`` thread to return, then writes an empty
  ``holderIdentity`` with ``leaseDurationSeconds: 1`` so a successor takes over at once. If the
  leader-only work has not finished it does not release: the Lease expires instead.
- ``run`` returns when stopped or when leadership is lost; call it again to stand again.
  ``is_leader()`` is true exactly between ``on_started_leading`` and the loss of leadership.
- Callbacks: ``on_started_leading`` runs on its own thread ``leader-election:leading``;
  ``on_new_leader(identity)`` (a different non-empty holder was observed) and
  ``on_stopped_leading()`` run on the election thread and must return quickly. A callback
  that raises is logged and does not stop the election.

Times written to the Lease are ``MicroTime``s: ``2006-01-02T15:04:05.000000Z``.
"""

from __future__ import annotations

import copy
import logging
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Protocol

from volcano_py.api import JSON
from volcano_py.api.resources import LEASES
from volcano_py.kube.clock import Clock, RealClock
from volcano_py.kube.errors import ApiError, NotFound
from volcano_py.kube.events import NORMAL, Recorder
from volcano_py.kube.verbs import Create, Get, Update

log = logging.getLogger(__name__)

JITTER_FACTOR = 1.2
MICROTIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


class LeaseClient(Get, Create, Update, Protocol):
    """The part of ``KubeClient`` leader election uses."""


def format_microtime(when: datetime) -> str:
    """A Kubernetes ``MicroTime``: UTC, six fractional digits, ``Z``."""
    return when.strftime(MICROTIME_FORMAT)


@dataclass(frozen=True, slots=True)
class LeaderElectionRecord:
    """The Lease ``spec`` fields leader election reads and writes (times kept as written)."""

    holder_identity: str
    lease_duration_seconds: int
    acquire_time: str | None
    renew_time: str | None
    lease_transitions: int

    @classmethod
    def from_spec(cls, spec: JSON) -> LeaderElectionRecord:
        """Read a Lease ``spec`` (missing fields read as empty)."""
        return cls(
            holder_identity=str(spec.get("holderIdentity") or ""),
            lease_duration_seconds=int(spec.get("leaseDurationSeconds") or 0),
            acquire_time=spec.get("acquireTime"),
            renew_time=spec.get("renewTime"),
            lease_transitions=int(spec.get("leaseTransitions") or 0),
        )

    def to_spec(self) -> JSON:
        """The Lease ``spec`` for this record."""
        spec: JSON = {
            "holderIdentity": self.holder_identity,
            "leaseDurationSeconds": self.lease_duration_seconds,
            "leaseTransitions": self.lease_transitions,
        }
        if self.acquire_time:
            spec["acquireTime"] = self.acquire_time
        if self.renew_time:
            spec["renewTime"] = self.renew_time
        return spec


class LeaderElector:
    """Campaigns for, holds and releases one Lease. See the module docstring for the rules."""

    def __init__(
        self,
        client: LeaseClient,
        namespace: str,
        name: str,
        identity: str,
        *,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        clock: Clock | None = None,
        on_started_leading: Callable[[threading.Event], None] | None = None,
        on_stopped_leading: Callable[[], None] | None = None,
        on_new_leader: Callable[[str], None] | None = None,
        recorder: Recorder | None = None,
        rand: Callable[[], float] = random.random,
    ) -> None:
        if not identity:
            raise ValueError("leader election needs a non-empty identity")
        if lease_duration < 1:
            raise ValueError(f"lease_duration must be at least 1s, got {lease_duration}")
        if lease_duration <= renew_deadline:
            raise ValueError("lease_duration must be greater than renew_deadline")
        if renew_deadline <= JITTER_FACTOR * retry_period or retry_period <= 0:
            raise ValueError("renew_deadline must be greater than retry_period * 1.2 (and > 0)")
        self.client = client
        self.namespace = namespace
        self.name = name
        self.identity = identity
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self._clock: Clock = clock or RealClock()
        self._on_started = on_started_leading
        self._on_stopped = on_stopped_leading
        self._on_new_leader = on_new_leader
        self._recorder = recorder
        self._rand = rand
        self._leading = threading.Event()
        self._lease: JSON | None = None  # the Lease as last read or written (resourceVersion)
        self._observed: LeaderElectionRecord | None = None
        self._observed_spec: JSON | None = None
        self._observed_time = 0.0
        self._reported_leader = ""
        self._renewed_at: float | None = None  # when the last successful write was *sent*

    # -- public ---------------------------------------------------------------------------

    def is_leader(self) -> bool:
        """Whether this replica currently leads (see the module docstring)."""
        return self._leading.is_set()

    def holds_lease(self) -> bool:
        """Whether a write may still be sent as leader: the fence for leader-only writes.

        True while leading and less than ``renew_deadline`` has passed since the last
        successful renewal was *sent* (so its server-side time can only be later). A leader
        whose process was paused, or whose renewals fail, stops writing at that moment, before
        the election thread notices and before another replica can have taken over (the Lease
        lasts ``lease_duration`` > ``renew_deadline``, judged by the other replica's clock).
        """
        renewed = self._renewed_at
        return (
            self._leading.is_set()
            and renewed is not None
            and self._clock.now() - renewed < self.renew_deadline
        )

    def leader(self) -> str:
        """The holder in the last record we observed (``""`` when none)."""
        return self._observed.holder_identity if self._observed else ""

    def start(self, stop: threading.Event) -> threading.Thread:
        """Run ``run(stop)`` on a daemon thread named ``leader-election``."""
        thread = threading.Thread(
            target=self.run, args=(stop,), name="leader-election", daemon=True
        )
        thread.start()
        return thread

    def run(self, stop: threading.Event) -> None:
        """Campaign until leading, lead until stopped or lost; then return."""
        if not self._acquire(stop):
            return
        leading_stop = threading.Event()
        self._leading.set()
        log.info("lease %s/%s: %s became leader", self.namespace, self.name, self.identity)
        self._record(f"{self.identity} became leader")
        worker = threading.Thread(
            target=self._run_leading,
            args=(leading_stop,),
            name="leader-election:leading",
            daemon=True,
        )
        worker.start()
        try:
            self._renew(stop)
        finally:
            self._leading.clear()
            leading_stop.set()
            worker.join(self.renew_deadline)
            self._record(f"{self.identity} stopped leading")
            if not stop.is_set():
                log.error("lease %s/%s: leadership lost", self.namespace, self.name)
            elif worker.is_alive():
                log.warning(
                    "lease %s/%s: leader work still running; not releasing, the lease expires",
                    self.namespace,
                    self.name,
                )
            else:
                self.release()
            self._call(self._on_stopped)

    def try_acquire_or_renew(self) -> bool:
        """One attempt to acquire or renew the Lease; ``True`` when we hold it now."""
        now = format_microtime(self._clock.wall())
        desired = LeaderElectionRecord(self.identity, int(self.lease_duration), now, now, 0)

        # Fast path: we lead and our view is fresh; write over the Lease we last wrote.
        if self._observed_is_me() and self._lease_valid() and self._observed is not None:
            record = replace(
                desired,
                acquire_time=self._observed.acquire_time,
                lease_transitions=self._observed.lease_transitions,
            )
            try:
                self._write(record)
                return True
            except ApiError as e:
                log.info("lease %s/%s: renew failed (%s); re-reading", self.namespace, self.name, e)

        try:
            lease = self.client.get(LEASES, self.name, self.namespace)
        except NotFound:
            return self._create(desired)
        except ApiError as e:
            log.warning("lease %s/%s: cannot read: %s", self.namespace, self.name, e)
            return False

        self._lease = lease
        spec = lease.get("spec") or {}
        if spec != self._observed_spec:
            self._observe(LeaderElectionRecord.from_spec(spec), spec)
        current = self._observed
        assert current is not None
        if current.holder_identity and self._lease_valid() and not self._observed_is_me():
            log.debug("lease %s/%s: held by %s", self.namespace, self.name, current.holder_identity)
            return False

        if self._observed_is_me():
            record = replace(
                desired,
                acquire_time=current.acquire_time,
                lease_transitions=current.lease_transitions,
            )
        else:
            record = replace(desired, lease_transitions=current.lease_transitions + 1)
        try:
            self._write(record)
        except ApiError as e:
            log.info("lease %s/%s: update failed: %s", self.namespace, self.name, e)
            return False
        return True

    def release(self) -> bool:
        """Give the Lease up if we hold it: empty holder, 1 s duration. ``True`` on success."""
        if not self._observed_is_me() or self._observed is None:
            return True
        now = format_microtime(self._clock.wall())
        record = LeaderElectionRecord("", 1, now, now, self._observed.lease_transitions)
        try:
            self._write(record)
        except ApiError as e:
            log.error("lease %s/%s: release failed: %s", self.namespace, self.name, e)
            return False
        log.info("lease %s/%s: released by %s", self.namespace, self.name, self.identity)
        return True

    # -- loops ----------------------------------------------------------------------------

    def _acquire(self, stop: threading.Event) -> bool:
        log.info("lease %s/%s: %s campaigning", self.namespace, self.name, self.identity)
        while not stop.is_set():
            acquired = self._attempt()
            if acquired:
                return True
            period = self.retry_period * (1.0 + self._rand() * JITTER_FACTOR)
            if self._clock.wait_event(stop, period):
                return False
        return False

    def _renew(self, stop: threading.Event) -> None:
        """Renew every ``retry_period``; return when stopped or leadership is lost."""
        while not self._clock.wait_event(stop, self.retry_period):
            deadline = self._clock.now() + self.renew_deadline
            while not self._attempt():
                if not self._observed_is_me():
                    log.error(
                        "lease %s/%s: now held by %s", self.namespace, self.name, self.leader()
                    )
                    return
                left = deadline - self._clock.now()
                if left <= 0:
                    log.error(
                        "lease %s/%s: failed to renew within %ss",
                        self.namespace,
                        self.name,
                        self.renew_deadline,
                    )
                    return
                if self._clock.wait_event(stop, min(self.retry_period, left)):
                    return

    def _attempt(self) -> bool:
        started = self._clock.now()
        try:
            ok = self.try_acquire_or_renew()
        except Exception:
            log.exception("lease %s/%s: unexpected error", self.namespace, self.name)
            ok = False
        if ok:
            self._renewed_at = started
        holder = self.leader()
        if holder and holder != self._reported_leader:
            self._reported_leader = holder
            log.info("lease %s/%s: leader is %s", self.namespace, self.name, holder)
            callback = self._on_new_leader
            if callback is not None:
                self._call(lambda: callback(holder))
        return ok

    def _run_leading(self, leading_stop: threading.Event) -> None:
        if self._on_started is not None:
            callback = self._on_started
            self._call(lambda: callback(leading_stop))

    # -- state ----------------------------------------------------------------------------

    def _create(self, record: LeaderElectionRecord) -> bool:
        body: JSON = {
            "apiVersion": LEASES.api_version,
            "kind": LEASES.kind,
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": record.to_spec(),
        }
        try:
            created = self.client.create(LEASES, body, self.namespace)
        except ApiError as e:
            log.info("lease %s/%s: create failed: %s", self.namespace, self.name, e)
            return False
        self._lease = created
        self._observe(record, created.get("spec") or record.to_spec())
        return True

    def _write(self, record: LeaderElectionRecord) -> None:
        """PUT ``record`` over the Lease we last saw; raises ``ApiError`` (Conflict: lost)."""
        if self._lease is None:
            raise NotFound(404, "NotFound", "no Lease read yet")
        body = copy.deepcopy(self._lease)
        body["spec"] = record.to_spec()
        updated = self.client.update(LEASES, body)
        self._lease = updated
        self._observe(record, updated.get("spec") or record.to_spec())

    def _observe(self, record: LeaderElectionRecord, spec: JSON) -> None:
        self._observed = record
        self._observed_spec = spec
        self._observed_time = self._clock.now()

    def _observed_is_me(self) -> bool:
        return self._observed is not None and self._observed.holder_identity == self.identity

    def _lease_valid(self) -> bool:
        if self._observed is None:
            return False
        expires = self._observed_time + self._observed.lease_duration_seconds
        return expires > self._clock.now()

    def _record(self, message: str) -> None:
        recorder, lease = self._recorder, self._lease
        if recorder is not None and lease is not None:
            self._call(
                lambda: recorder.event(lease, NORMAL, "LeaderElection", message, resource=LEASES)
            )

    @staticmethod
    def _call(callback: Callable[[], Any] | None) -> None:
        if callback is None:
            return
        try:
            callback()
        except Exception:
            log.exception("leader election callback failed")
