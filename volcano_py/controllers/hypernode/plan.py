"""What one reconcile round writes, and in which order (pure: no API calls).

``reconcile.py`` asks ``plan_round`` what to do with a source's good result and then does
the writes in the plan's order. The rules:

- **A configuration change is an intent.** Every HyperNode a result asks for is stamped with
  ``CONFIG_ANNOTATION`` = the fingerprint of the source's ``config:`` (``config.py``). An
  owned HyperNode stamped with another fingerprint was made under an earlier configuration:
  when the result no longer has it, it is **retired** at once, without grace period or
  deletion limit. (One without the annotation, made by Volcano or an older volcano-py,
  counts as the current configuration's: the safe side.)
- **Never wiped by accident** (issue 44). A configuration change whose first result would
  retire ``maxDeletePercent`` of the source's HyperNodes or more while it discovers (almost)
  nothing in their place (fewer than a tenth of what it would retire: Volcano's guide
  ConfigMap applied to nodes without its labels) is **held back** (``held_back_reason``
  ``REASON_CONFIG_HELD_BACK``), every round, until the new configuration discovers or its
  entry says ``force: true``.
- **No churn from flapping.** Any other owned HyperNode the result lacks is **missing**: it
  is kept, and deleted only once it has been missing for the grace period
  (``deletionGracePeriod``). Reappearing in a result forgets it. ``MissingSince`` remembers
  since when, per source, in memory (a restart starts the wait again: the safe side).
- **Never a member in two HyperNodes of one tier.** A missing HyperNode whose members the
  result gives to other HyperNodes of its tier would hold them twice: when it has no member
  left it is **superseded** and due at once; otherwise those members are trimmed from it
  while it waits.
- **The deletion limit** counts what would be deleted *now* (expired + superseded) against
  the source's HyperNodes of the current configuration: a round deleting
  ``maxDeletePercent`` of them or more is held back entirely (100 means no limit). What the
  source left out **on purpose** (``DiscoveryResult.explained``: nodes relabelled, an
  intent) waits out its grace period like the rest but is not counted: the limit guards
  against a source that fails or answers nothing, not against the labels it follows.
- **Order.** Deletes first (parents first); then the updates that only take members away
  (an update that moves some members out and others in is first written with the members it
  keeps, then in full); then creates and full updates, children first, those exchanging all
  their members before the rest. Watching every HyperNode event, no node is ever in two
  leaves, except when two HyperNodes exchange their entire memberships in one round.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from volcano_py.api import JSON
from volcano_py.api.meta import name_of

CONFIG_ANNOTATION = "volcano-py.io/discovery-config"
REASON_DELETION_LIMIT = "DeletionLimitExceeded"
REASON_CONFIG_HELD_BACK = "DiscoveryConfigHeldBack"
NEAR_NOTHING = 10  # a new configuration discovering under 1/10 of what it retires


@dataclass(slots=True)
class RoundPlan:
    """The writes of one round, in order (see the module docstring)."""

    deletes: list[JSON] = field(default_factory=list)
    first: list[tuple[JSON, JSON]] = field(default_factory=list)
    then: list[tuple[JSON | None, JSON]] = field(default_factory=list)
    retired: list[str] = field(default_factory=list)
    expired: list[str] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)
    waiting: dict[str, float] = field(default_factory=dict)
    config_changed: bool = False
    held_back: str | None = None
    held_back_reason: str = REASON_DELETION_LIMIT

    @property
    def next_due(self) -> float | None:
        """Seconds until the first waiting HyperNode's grace period ends (None: none waits)."""
        return min(self.waiting.values()) if self.waiting else None


class MissingSince:
    """Since when each missing HyperNode of a source has been missing (monotonic seconds)."""

    def __init__(self) -> None:
        self._since: dict[str, dict[str, float]] = {}

    def observe(self, source: str, missing: Iterable[str], now: float) -> dict[str, float]:
        """Record this round's missing names; names no longer missing are forgotten."""
        before = self._since.get(source, {})
        current = {name: before.get(name, now) for name in missing}
        self._since[source] = current
        return current

    def reset(self, source: str) -> None:
        """``source`` failed a round: its missing HyperNodes wait afresh from the next good one."""
        self._since.pop(source, None)

    def forget(self, source: str, name: str) -> None:
        """``name`` was deleted: stop tracking it."""
        self._since.get(source, {}).pop(name, None)

    def waiting(self, source: str) -> dict[str, float]:
        """The missing names of ``source`` and since when."""
        return dict(self._since.get(source, {}))


def member_names(obj: Mapping[str, Any]) -> list[str]:
    """The ``exactMatch`` member names of a HyperNode, in spec order."""
    names = []
    for member in (obj.get("spec") or {}).get("members") or ():
        if not isinstance(member, Mapping):
            continue
        exact = (member.get("selector") or {}).get("exactMatch") or {}
        name = exact.get("name") if isinstance(exact, Mapping) else None
        if isinstance(name, str):
            names.append(name)
    return names


def tier_of(obj: Mapping[str, Any]) -> int:
    """``spec.tier`` (0 when absent or malformed)."""
    tier = (obj.get("spec") or {}).get("tier")
    return tier if isinstance(tier, int) else 0


def fingerprint_of(obj: Mapping[str, Any]) -> str:
    """The configuration fingerprint a HyperNode was made under ("" when not stamped)."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    value = annotations.get(CONFIG_ANNOTATION, "")
    return value if isinstance(value, str) else ""


def parents_first(hypernodes: Iterable[JSON]) -> list[JSON]:
    """The deletion order: highest tier first, then by name.

    A parent is gone before the children it names, so no HyperNode ever names a deleted one.
    """
    return sorted(hypernodes, key=lambda obj: (-tier_of(obj), name_of(obj)))


def _with_members(obj: Mapping[str, Any], keep: set[str]) -> JSON:
    """A body with ``obj``'s spec whose exactMatch members are limited to ``keep``."""
    spec = dict(obj.get("spec") or {})
    spec["members"] = [
        m
        for m in spec.get("members") or ()
        if not isinstance(m, Mapping) or _exact(m) is None or _exact(m) in keep
    ]
    return {"metadata": {"name": name_of(obj)}, "spec": spec}


def _exact(member: Mapping[str, Any]) -> str | None:
    exact = (member.get("selector") or {}).get("exactMatch") or {}
    name = exact.get("name") if isinstance(exact, Mapping) else None
    return name if isinstance(name, str) else None


def _wipes(retired: int, owned: int, discovered: int, max_delete_percent: float) -> bool:
    """Whether a configuration change retires the share the limit guards, for (almost) nothing."""
    if not retired or max_delete_percent >= 100:
        return False
    return retired * 100 >= max_delete_percent * owned and discovered * NEAR_NOTHING < retired


def plan_round(
    source: str,
    owned: Mapping[str, JSON],
    desired: Mapping[str, JSON],
    *,
    fingerprint: str,
    since: Mapping[str, float],
    now: float,
    grace: float,
    max_delete_percent: float,
    explained: frozenset[str] = frozenset(),
    force: bool = False,
) -> RoundPlan:
    """The plan for one good result (``since``: ``MissingSince.observe`` of the missing)."""
    plan = RoundPlan()
    current_shape = {
        n for n, obj in owned.items() if not fingerprint or fingerprint_of(obj) in ("", fingerprint)
    }
    plan.config_changed = len(current_shape) < len(owned)
    missing = sorted(set(owned) - set(desired))
    claimed: dict[tuple[int, str], str] = {}
    for name, body in desired.items() if missing else ():
        for member in member_names(body):
            claimed.setdefault((tier_of(body), member), name)
    trims: list[tuple[JSON, JSON]] = []
    for name in missing:
        obj = owned[name]
        if name not in current_shape:
            plan.retired.append(name)
            continue
        members = member_names(obj)
        taken = {m for m in members if claimed.get((tier_of(obj), m), name) != name}
        left = [m for m in members if m not in taken]
        if members and not left:
            plan.superseded.append(name)
        elif now - since.get(name, now) >= grace:
            plan.expired.append(name)
        else:
            plan.waiting[name] = max(0.0, since.get(name, now) + grace - now)
            if taken:
                trims.append((obj, _with_members(obj, set(left))))
    if not force and _wipes(len(plan.retired), len(owned), len(desired), max_delete_percent):
        plan.held_back = (
            f"discovery source {source!r}: the new configuration discovers {len(desired)} "
            f"HyperNodes and would retire {len(plan.retired)} of its {len(owned)} "
            f"({100.0 * len(plan.retired) / len(owned):.0f}%), at least maxDeletePercent "
            f"{max_delete_percent:g}%: the change is held back until the source discovers "
            "its topology, or its entry sets force: true"
        )
        plan.held_back_reason = REASON_CONFIG_HELD_BACK
        return plan
    due = plan.expired + plan.superseded
    unexplained = [name for name in due if name not in explained]
    total = max(1, len(current_shape))
    if (
        unexplained
        and max_delete_percent < 100
        and len(unexplained) * 100 >= max_delete_percent * total
    ):
        plan.held_back = (
            f"discovery source {source!r} returned {len(desired)} HyperNodes; applying it "
            f"would delete {len(unexplained)} of its {len(current_shape)} HyperNodes "
            f"({100.0 * len(unexplained) / total:.0f}%), at least maxDeletePercent "
            f"{max_delete_percent:g}%, so nothing was changed"
        )
        return plan
    plan.deletes = parents_first(owned[n] for n in plan.retired + due)
    plan.first.extend(trims)
    swaps: list[tuple[JSON | None, JSON]] = []
    rest: list[tuple[JSON | None, JSON]] = []
    for name in sorted(desired, key=lambda n: (tier_of(desired[n]), n)):
        body = desired[name]
        current = owned.get(name)
        if current is None or current.get("spec") == body.get("spec"):
            rest.append((current, body))
            continue
        have, want = set(member_names(current)), set(member_names(body))
        leaving, joining = have - want, want - have
        if leaving and not joining:
            plan.first.append((current, body))
        elif leaving and have & want:
            plan.first.append((current, _with_members(current, have & want)))
            rest.append((current, body))
        elif leaving:
            swaps.append((current, body))
        else:
            rest.append((current, body))
    plan.then = swaps + rest
    plan.then.sort(key=lambda pair: tier_of(pair[1]))  # stable: swaps first in each tier
    return plan
