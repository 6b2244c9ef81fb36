"""Three-way reconcile of one source's discovered HyperNodes, with a safety catch.

The controller calls ``Reconciler.reconcile(result, max_delete_percent)`` for each result. The
HyperNodes a source owns are those labelled ``volcano.sh/network-topology-source=<source>``; a
result is the complete set the source stands for, so the reconcile

- **creates** discovered HyperNodes that do not exist (children before parents),
- **updates** owned ones that differ: spec replaced, labels and annotations merged (added or
  changed, never dropped), then status (our condition cleared) — each write a merge patch
  carrying the ``resourceVersion`` it was computed from, retried on conflict from a fresh GET,
- **deletes** owned ones the result no longer has (parents first, uid precondition) — at
  once when a configuration change retired them, otherwise only after their grace period,

in the order ``plan.py`` works out (which also says how a configuration change, a missing
HyperNode and the deletion limit are told apart), and writes nothing when nothing differs.
HyperNodes without our source label (hand-made, or another source's) are never touched, even
when a result names one: that name is skipped with a Warning Event.

**Safety** (Volcano deletes whatever a source did not return): a failed round (``result.error``)
changes nothing and restarts the missing ones' grace period, and a result that would delete
``max_delete_percent`` or more of the source's HyperNodes now (after the grace period,
``plan.py``) is held back. Either way every HyperNode of the source gets the condition
``DiscoveryStale=True`` (reason ``SourceError`` or ``DeletionLimitExceeded``, the message saying
why) and a Warning Event is recorded on each of them and on the controller ConfigMap. The next
good result removes the condition. The same failure again rewrites nothing.

Writes that the API server refuses for the object itself (422 from the schema or the
webhook) are reported as Events and skipped, so one bad HyperNode cannot block the rest;
other API errors propagate and the controller retries the whole (idempotent) reconcile.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from volcano_py.api import JSON
from volcano_py.api import resources as R
from volcano_py.api.constants import NETWORK_TOPOLOGY_SOURCE_LABEL, STALE_CONDITION
from volcano_py.api.meta import labels_of, name_of, resource_version_of, uid_of
from volcano_py.controllers.hypernode.bodies import (
    conditions_of,
    desired_body,
    unchanged,
    update_patch,
)
from volcano_py.controllers.hypernode.config import DEFAULT_DELETION_GRACE_SECONDS
from volcano_py.controllers.hypernode.discovery import DiscoveryResult, ReadStore
from volcano_py.controllers.hypernode.idle import IdleRound
from volcano_py.controllers.hypernode.parallel import run_all, segments
from volcano_py.controllers.hypernode.plan import (
    MissingSince,
    RoundPlan,
    parents_first,
    plan_round,
    tier_of,
)
from volcano_py.kube.clock import Clock, RealClock
from volcano_py.kube.errors import AlreadyExists, Invalid, NotFound
from volcano_py.kube.events import WARNING, Recorder
from volcano_py.kube.retry import retry_on_conflict
from volcano_py.kube.verbs import Create, Delete, Get, Patch

log = logging.getLogger(__name__)


REASON_SOURCE_ERROR = "SourceError"
REASON_NAME_TAKEN = "HyperNodeNameTaken"
REASON_WRITE_REJECTED = "HyperNodeRejected"
TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


class HyperNodeClient(Get, Create, Patch, Delete, Protocol):
    """The ``KubeClient`` verbs the reconcile uses."""


@dataclass(slots=True)
class ReconcileOutcome:
    """What one reconcile did (names sorted in the order written)."""

    source: str
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    held_back: str | None = None
    writes: int = 0
    plan: RoundPlan | None = None


def idle_round(outcome: ReconcileOutcome, plan: RoundPlan) -> bool:
    """Nothing written, skipped, deleted, waiting or held back: the round changed nothing."""
    changed = outcome.writes or outcome.created or outcome.updated or outcome.deleted
    pending = plan.deletes or plan.waiting or plan.retired or plan.expired or plan.superseded
    return not (changed or outcome.skipped or pending or plan.held_back or plan.config_changed)


class Reconciler:
    """Apply discovery results to the cluster. See the module docstring."""

    def __init__(
        self,
        client: HyperNodeClient,
        hypernodes: ReadStore,
        *,
        recorder: Recorder | None = None,
        clock: Clock | None = None,
        event_target: Callable[[], Mapping[str, Any] | None] | None = None,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        self._client = client
        self._hypernodes = hypernodes
        self._recorder = recorder
        self._clock: Clock = clock or RealClock()
        self._event_target = event_target
        self._sleep = sleep or self._clock.sleep
        self.writes = 0
        self._writes_lock = threading.Lock()  # parallel creates count too
        self.missing = MissingSince()
        # per source: the last round that found nothing to do (``idle.IdleRound``)
        self._idle: dict[str, IdleRound] = {}

    # -- entry point ----------------------------------------------------------------------

    def reconcile(
        self,
        result: DiscoveryResult,
        max_delete_percent: float,
        grace: float = DEFAULT_DELETION_GRACE_SECONDS,
    ) -> ReconcileOutcome:
        """Make the source's HyperNodes match ``result`` (or hold back; see module doc)."""
        source = result.source
        outcome = ReconcileOutcome(source)
        store_objects = self._hypernodes.list()
        idle = self._idle.pop(source, None)
        if idle is not None and idle.repeats(result, store_objects, max_delete_percent, grace):
            self._idle[source] = idle
            outcome.plan = idle.plan
            log.debug("source %s: the same result on the same HyperNodes, nothing to do", source)
            return outcome
        owned = self._owned(source, store_objects)
        if not result.ok:
            self.missing.reset(source)  # an outage is no evidence: the grace restarts
            message = (
                f"discovery source {source!r} failed: {result.error}; its HyperNodes are "
                "kept as last discovered"
            )
            return self._hold_back(outcome, owned, REASON_SOURCE_ERROR, message)
        desired: dict[str, JSON] = {}
        for hypernode in result.hypernodes:
            body = desired_body(hypernode, source, result.fingerprint)
            name = name_of(body)
            current = self._hypernodes.get(name)
            if (
                current is not None
                and labels_of(current).get(NETWORK_TOPOLOGY_SOURCE_LABEL) != source
            ):
                self._skip_foreign(outcome, current)
                continue
            desired[name] = body
        now = self._clock.now()
        since = self.missing.observe(source, set(owned) - set(desired), now)
        plan = plan_round(
            source,
            owned,
            desired,
            fingerprint=result.fingerprint,
            since=since,
            now=now,
            grace=grace,
            max_delete_percent=max_delete_percent,
            explained=result.explained,
            force=result.force,
        )
        outcome.plan = plan
        if plan.held_back is not None:
            return self._hold_back(outcome, owned, plan.held_back_reason, plan.held_back)
        writes_before = self.writes
        for obj in plan.deletes:
            self._delete(outcome, obj)
        latest: dict[str, JSON] = {}
        for current, body in plan.first:
            latest[name_of(body)] = self._update(outcome, current, body, final=False)
        for run in segments(plan.then, tier_of):  # a tier's creates at once (parallel.py)
            run_all([functools.partial(self._write, outcome, latest, c, b) for c, b in run])
        outcome.writes = self.writes - writes_before
        for name in plan.retired + plan.expired + plan.superseded:
            if name in outcome.deleted:
                self.missing.forget(source, name)
        if idle_round(outcome, plan):
            self._idle[source] = IdleRound(result, store_objects, max_delete_percent, grace, plan)
        log.info(
            "reconciled source %s: %d discovered, %d created, %d updated, %d deleted "
            "(%d retired by a configuration change), %d missing within their grace period, "
            "%d skipped",
            source,
            len(result.hypernodes),
            len(outcome.created),
            len(outcome.updated),
            len(outcome.deleted),
            len(plan.retired),
            len(plan.waiting),
            len(outcome.skipped),
        )
        return outcome

    def retire_source(self, source: str) -> ReconcileOutcome:
        """Delete every HyperNode labelled with ``source``, parents first, no deletion limit.

        For a source removed from the configuration once its grace period is over
        (``retire.py``); the source's missing-HyperNode clocks are forgotten.
        """
        outcome = ReconcileOutcome(source)
        writes_before = self.writes
        for obj in parents_first(self._owned(source).values()):
            self._delete(outcome, obj)
            self.missing.forget(source, name_of(obj))
        outcome.writes = self.writes - writes_before
        log.info("retired source %s: %d HyperNodes deleted", source, len(outcome.deleted))
        return outcome

    def _owned(self, source: str, objects: list[JSON] | None = None) -> dict[str, JSON]:
        return {
            name_of(obj): obj
            for obj in (self._hypernodes.list() if objects is None else objects)
            if labels_of(obj).get(NETWORK_TOPOLOGY_SOURCE_LABEL) == source
        }

    # -- safety ---------------------------------------------------------------------------

    def _hold_back(
        self, outcome: ReconcileOutcome, owned: Mapping[str, JSON], reason: str, message: str
    ) -> ReconcileOutcome:
        log.warning("%s", message)
        outcome.held_back = message
        writes_before = self.writes
        for name in sorted(owned):
            if self._set_stale(owned[name], reason, message):
                self._event(owned[name], reason, message, R.HYPERNODES)
        target = self._event_target() if self._event_target else None
        if target is not None:
            self._event(target, reason, message, R.CONFIGMAPS)
        outcome.writes = self.writes - writes_before
        return outcome

    def _set_stale(self, obj: JSON, reason: str, message: str) -> bool:
        """Put our condition on ``obj``; False when it already says exactly this."""
        name = name_of(obj)
        condition = {
            "type": STALE_CONDITION,
            "status": "True",
            "reason": reason,
            "message": message,
            "lastTransitionTime": self._clock.wall().strftime(TIME_FORMAT),
        }

        def attempt(current: JSON) -> bool:
            conditions = conditions_of(current)
            old = next((c for c in conditions if c.get("type") == STALE_CONDITION), None)
            if old is not None and all(
                old.get(k) == condition[k] for k in ("status", "reason", "message")
            ):
                return False
            if old is not None and old.get("status") == "True":
                condition["lastTransitionTime"] = (
                    old.get("lastTransitionTime") or condition["lastTransitionTime"]
                )
            kept = [c for c in conditions if c.get("type") != STALE_CONDITION]
            self._patch_status(current, [*kept, condition])
            return True

        return self._read_modify_write(name, obj, attempt)

    def _clear_stale(self, obj: JSON) -> bool:
        def attempt(current: JSON) -> bool:
            conditions = conditions_of(current)
            kept = [c for c in conditions if c.get("type") != STALE_CONDITION]
            if len(kept) == len(conditions):
                return False
            self._patch_status(current, kept)
            return True

        return self._read_modify_write(name_of(obj), obj, attempt)

    def _patch_status(self, current: JSON, conditions: list[JSON]) -> None:
        patch = {
            "metadata": {"resourceVersion": resource_version_of(current)},
            "status": {"conditions": conditions},
        }
        self._count_write()
        self._client.patch(R.HYPERNODES, name_of(current), patch, subresource="status")

    # -- writes ---------------------------------------------------------------------------

    def _read_modify_write(self, name: str, cached: JSON, attempt: Callable[[JSON], bool]) -> bool:
        """``attempt(current)`` on the cached object first, on fresh GETs after a conflict."""
        first = [True]

        def once() -> bool:
            if first[0]:
                first[0] = False
                return attempt(cached)
            return attempt(self._client.get(R.HYPERNODES, name))

        try:
            return retry_on_conflict(once, sleep=self._sleep)
        except NotFound:
            return False

    def _count_write(self) -> None:
        with self._writes_lock:
            self.writes += 1

    def _write(
        self, outcome: ReconcileOutcome, latest: dict[str, JSON], cached: JSON | None, body: JSON
    ) -> None:
        """One write of ``plan.then``: create, or update from the latest object seen."""
        if cached is None:
            self._create(outcome, body)
            return
        current = latest.get(name_of(body), cached)
        if current is cached and unchanged(current, body):
            return  # the idle round's common case: no write, no retry wrapper
        self._update(outcome, current, body)

    def _create(self, outcome: ReconcileOutcome, body: JSON) -> None:
        name = name_of(body)
        try:
            self._count_write()
            self._client.create(R.HYPERNODES, body)
        except AlreadyExists:
            current = self._client.get(R.HYPERNODES, name)
            if labels_of(current).get(NETWORK_TOPOLOGY_SOURCE_LABEL) != outcome.source:
                self._skip_foreign(outcome, current)
                return
            self._update(outcome, current, body)
            return
        except Invalid as e:
            self._rejected(outcome, body, "create", e)
            return
        log.info("created HyperNode %s (source %s)", name, outcome.source)
        outcome.created.append(name)

    def _update(
        self, outcome: ReconcileOutcome, cached: JSON, desired: JSON, *, final: bool = True
    ) -> JSON:
        """Patch ``cached`` towards ``desired``; the latest object seen is returned.

        ``final``: this is the HyperNode's last write of the round (clear our condition).
        """
        name = name_of(desired)
        latest = [cached]

        def attempt(current: JSON) -> bool:
            latest[0] = current
            if labels_of(current).get(NETWORK_TOPOLOGY_SOURCE_LABEL) != outcome.source:
                return False  # someone took it over meanwhile: no longer ours to write
            patch = update_patch(current, desired)
            if patch is None:
                return False
            patch["metadata"]["resourceVersion"] = resource_version_of(current)
            self._count_write()
            latest[0] = self._client.patch(R.HYPERNODES, name, patch)
            return True

        try:
            changed = self._read_modify_write(name, cached, attempt)
        except Invalid as e:
            self._rejected(outcome, desired, "update", e)
            return latest[0]
        if changed:
            log.info("updated HyperNode %s (source %s)", name, outcome.source)
            if name not in outcome.updated:
                outcome.updated.append(name)
        if final and labels_of(latest[0]).get(NETWORK_TOPOLOGY_SOURCE_LABEL) == outcome.source:
            self._clear_stale(latest[0])
        return latest[0]

    def _delete(self, outcome: ReconcileOutcome, obj: JSON) -> None:
        name = name_of(obj)
        preconditions = {"uid": uid_of(obj)} if uid_of(obj) else None
        try:
            self._count_write()
            self._client.delete(R.HYPERNODES, name, preconditions=preconditions)
        except NotFound:
            return
        except Invalid as e:
            self._rejected(outcome, obj, "delete", e)
            return
        log.info("deleted HyperNode %s (source %s)", name, outcome.source)
        outcome.deleted.append(name)

    def _skip_foreign(self, outcome: ReconcileOutcome, current: JSON) -> None:
        name = name_of(current)
        owner = labels_of(current).get(NETWORK_TOPOLOGY_SOURCE_LABEL)
        holder = f"source {owner!r}" if owner else "a HyperNode not managed by discovery"
        message = (
            f"discovery source {outcome.source!r} discovered HyperNode {name!r}, but that name "
            f"belongs to {holder}; it is left untouched"
        )
        log.warning("%s", message)
        outcome.skipped.append(name)
        self._event(current, REASON_NAME_TAKEN, message, R.HYPERNODES)

    def _rejected(self, outcome: ReconcileOutcome, obj: JSON, verb: str, error: Invalid) -> None:
        name = name_of(obj)
        message = (
            f"discovery source {outcome.source!r}: {verb} of HyperNode {name!r} was rejected: "
            f"{error.message}"
        )
        log.warning("%s", message)
        outcome.skipped.append(name)
        target = self._event_target() if self._event_target else None
        if target is not None:
            self._event(target, REASON_WRITE_REJECTED, message, R.CONFIGMAPS)

    def _event(
        self, obj: Mapping[str, Any], reason: str, message: str, resource: R.APIResource
    ) -> None:
        if self._recorder is None:
            return
        try:
            self._recorder.event(obj, WARNING, reason, message, resource=resource)
        except ValueError:
            log.debug("cannot record an event about %s", name_of(obj))
