"""The HyperNode admission pipeline, shared by the webhook and ``volcano-py validate``.

Stages, in order; the first that denies gives the message:

0. ``schema`` - the CRD's structural schema and its ``x-kubernetes-validations``
   (``schema.py``): what the API server checks before calling any webhook. In a cluster this
   always passes; it keeps direct calls and offline linting honest.
1. ``cel`` - the ValidatingAdmissionPolicy-shaped rules of ``policy.yaml`` (``cel.py``),
   per-member rules memoised on the member's canonical JSON.
2. ``re2`` - every regexMatch pattern compiles under RE2 (Go's syntax):
   ``member regexMatch pattern is invalid: <reason>``.
3. ``tree`` - second parent, cycle, tiers, labelMatch on HyperNode members (``tree.py``);
   missing member HyperNodes give warnings.

``HyperNodeValidator`` is thread-safe (gthread workers share one): compiled rules are
immutable and the memo is a dict whose worst race is computing an entry twice.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from volcano_py.api.regex import re2_error
from webhooks.hypernodes import cel
from webhooks.hypernodes.schema import SchemaChecker, join_causes
from webhooks.hypernodes.tree import HyperNodeLister, check_tree

log = logging.getLogger(__name__)

POLICY_PATH = Path(__file__).with_name("policy.yaml")
MEMO_LIMIT = 20_000


@dataclass(frozen=True, slots=True)
class Verdict:
    """The outcome for one object: allowed or the denial message, plus warnings."""

    allowed: bool
    message: str = ""
    stage: str = ""
    reason: str = ""
    warnings: tuple[str, ...] = field(default=())


_Outcome = bool | str  # True/False, or the text of an evaluation error


@dataclass(frozen=True, slots=True)
class _Entry:
    value: Any  # the member as a CEL value (shared by every request that sends this member)
    outcomes: tuple[_Outcome, ...]


class _MemberMemo:
    """Per-member rule results keyed by the member's canonical JSON (bounded)."""

    def __init__(self, rules: tuple[cel.Rule, ...], limit: int = MEMO_LIMIT) -> None:
        self._rules = rules
        self._limit = limit
        self._entries: dict[bytes, _Entry] = {}

    def entry(self, member: Any, key: bytes | None = None) -> _Entry:
        key = key or orjson.dumps(member, option=orjson.OPT_SORT_KEYS)
        found = self._entries.get(key)
        if found is None:
            found = self.evaluate(cel.to_cel(member))
            if len(self._entries) >= self._limit:
                self._entries.clear()  # crude but bounded; refills with what is in use
            self._entries[key] = found
        return found

    def evaluate(self, value: Any) -> _Entry:
        out: list[_Outcome] = []
        for rule in self._rules:
            assert rule.member_var is not None
            try:
                out.append(cel.evaluate(rule.program, {rule.member_var: value}))
            except cel.CelError as e:
                out.append(str(e))
        return _Entry(value, tuple(out))

    def __len__(self) -> int:
        return len(self._entries)


class HyperNodeValidator:
    """Runs the four stages; ``lister`` holds the HyperNodes already in the cluster."""

    def __init__(
        self,
        lister: HyperNodeLister | None = None,
        *,
        policy_path: Path = POLICY_PATH,
        schema: SchemaChecker | None = None,
        check_schema: bool = True,
    ) -> None:
        self.lister = lister
        self.policy = cel.load_policy(policy_path)
        self._schema = schema if schema is not None else SchemaChecker()
        self._check_schema = check_schema
        self._member_rules = self.policy.member_rules
        self._object_rules = tuple(r for r in self.policy.rules if r.member_var is None)
        self._positions = {id(rule): i for i, rule in enumerate(self._member_rules)}
        self._memo = _MemberMemo(self._member_rules)

    def validate(self, obj: Mapping[str, Any], old: Mapping[str, Any] | None = None) -> Verdict:
        """The verdict for ``obj`` (``old``: the stored version on UPDATE)."""
        if not isinstance(obj, Mapping):
            return Verdict(False, "the object is not a JSON object", "schema", "BadRequest")
        keys = _member_keys(obj)
        if self._check_schema:
            causes = self._schema.check(obj, keys)
            if causes:
                return Verdict(False, join_causes(causes), "schema", "Invalid")
        denial = self._cel(obj, old, keys)
        if denial is not None:
            return denial
        denial = self._re2(obj)
        if denial is not None:
            return denial
        tree = check_tree(obj, self.lister)
        if tree.denial is not None:
            return Verdict(False, tree.denial, "tree", "Forbidden", tuple(tree.warnings))
        return Verdict(True, warnings=tuple(tree.warnings))

    # -- stage 1: CEL --------------------------------------------------------------------

    def _cel(
        self, obj: Mapping[str, Any], old: Mapping[str, Any] | None, keys: Mapping[int, bytes]
    ) -> Verdict | None:
        entries, cel_obj = self._object_to_cel(obj, keys)
        activation: dict[str, Any] = {
            "object": cel_obj,
            "oldObject": cel.to_cel(old) if old is not None else None,
        }
        variables: dict[str, Any] = {}
        for var in self.policy.variables:
            try:
                variables[var.name] = cel.evaluate_value(
                    var.program, {**activation, "variables": cel.cel_map(variables)}
                )
            except cel.CelError as e:
                return _rule_error(var.expression, str(e))
        activation["variables"] = cel.cel_map(variables)
        outcomes: list[tuple[_Outcome, ...]] | None = None
        for rule in self.policy.rules:
            if rule.member_var is None:
                try:
                    ok = cel.evaluate(rule.program, activation)
                except cel.CelError as e:
                    return _rule_error(rule.expression, str(e))
                if not ok:
                    return Verdict(False, rule.message, "cel", rule.reason)
                continue
            if outcomes is None:
                members = variables.get(cel.MEMBERS_VARIABLE)
                if not isinstance(members, list):
                    return _rule_error(rule.expression, "variables.members is not a list")
                outcomes = self._member_outcomes(members, entries)
            verdict = _all_members(rule, self._positions[id(rule)], outcomes)
            if verdict is not None:
                return verdict
        return None

    def _object_to_cel(
        self, obj: Mapping[str, Any], keys: Mapping[int, bytes]
    ) -> tuple[list[_Entry], Any]:
        """``obj`` as a CEL value whose members are the memo's shared CEL values."""
        spec = obj.get("spec")
        members = spec.get("members") if isinstance(spec, Mapping) else None
        if not isinstance(members, list) or not isinstance(spec, Mapping):
            return [], cel.to_cel(obj)
        entries = [self._memo.entry(m, keys.get(id(m))) for m in members]
        cel_obj = cel.to_cel({**obj, "spec": {**spec, "members": []}})
        cel_obj["spec"]["members"] = cel.cel_list([e.value for e in entries])
        return entries, cel_obj

    def _member_outcomes(
        self, members: list[Any], entries: list[_Entry]
    ) -> list[tuple[_Outcome, ...]]:
        """Outcomes for the members list a rule iterates (memoised when it is spec.members)."""
        if len(members) == len(entries) and all(
            m is e.value for m, e in zip(members, entries, strict=True)
        ):
            return [e.outcomes for e in entries]
        return [self._memo.evaluate(m).outcomes for m in members]

    # -- stage 2: RE2 --------------------------------------------------------------------

    @staticmethod
    def _re2(obj: Mapping[str, Any]) -> Verdict | None:
        spec = obj.get("spec")
        members = spec.get("members") if isinstance(spec, dict) else None
        for i, member in enumerate(members if isinstance(members, list) else []):
            selector = member.get("selector") if isinstance(member, dict) else None
            regex = selector.get("regexMatch") if isinstance(selector, dict) else None
            pattern = regex.get("pattern") if isinstance(regex, dict) else None
            if not isinstance(pattern, str):
                continue
            reason = re2_error(pattern)
            if reason is not None:
                field_path = f"spec.members[{i}].selector.regexMatch.pattern"
                shown = orjson.dumps(pattern).decode()
                message = (
                    f"{field_path}: Invalid value: {shown}: "
                    f"member regexMatch pattern is invalid: {reason}"
                )
                return Verdict(False, message, "re2", "Invalid")
        return None

    def memo_size(self) -> int:
        """How many distinct members have memoised CEL results."""
        return len(self._memo)

    def warm(self, objects: list[Mapping[str, Any]]) -> None:
        """Evaluate the per-member rules for ``objects`` ahead of time (the informer's store)."""
        for obj in objects:
            self._schema.check(obj)
            spec = obj.get("spec")
            members = spec.get("members") if isinstance(spec, Mapping) else None
            for member in members if isinstance(members, list) else []:
                self._memo.entry(member)


def _member_keys(obj: Mapping[str, Any]) -> dict[int, bytes]:
    """Each member's canonical JSON by ``id()``: computed once, used by every memo."""
    spec = obj.get("spec")
    members = spec.get("members") if isinstance(spec, dict) else None
    if not isinstance(members, list):
        return {}
    keys = {}
    for member in members:
        if isinstance(member, dict):
            try:
                keys[id(member)] = orjson.dumps(member, option=orjson.OPT_SORT_KEYS)
            except (TypeError, orjson.JSONEncodeError):
                continue
    return keys


def _all_members(
    rule: cel.Rule, position: int, outcomes: list[tuple[_Outcome, ...]]
) -> Verdict | None:
    """CEL's ``all``: any false member denies; else any error denies; else None."""
    first_error: tuple[int, str] | None = None
    for i, results in enumerate(outcomes):
        result = results[position]
        if result is False:
            return Verdict(False, f"spec.members[{i}]: {rule.message}", "cel", rule.reason)
        if isinstance(result, str) and first_error is None:
            first_error = (i, result)
    if first_error is not None:
        return _rule_error(rule.expression, f"spec.members[{first_error[0]}]: {first_error[1]}")
    return None


def _rule_error(expression: str, error: str) -> Verdict:
    """A rule that could not be evaluated denies (the policy's failurePolicy is Fail)."""
    text = " ".join(expression.split())
    return Verdict(False, f"expression '{text}' resulted in error: {error}", "cel", "Invalid")
