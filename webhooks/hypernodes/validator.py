"""The HyperNode admission pipeline, shared by the webhook and ``volcano-py validate``.

Stages, in order; the first that denies gives the message:

0. ``schema`` - the CRD's structural schema and its ``x-kubernetes-validations``
   (``schema.py``): what the API server checks before calling any webhook. In a cluster this
   always passes; it keeps direct calls and offline linting honest.
1. ``cel`` - the ValidatingAdmissionPolicy-shaped rules of ``policy.yaml`` (``cel.py``),
   per-member rules memoised on the member's canonical JSON.
2. ``re2`` - every regexMatch pattern compiles under RE2 (Go's syntax):
   ``member regexMatch pattern is invalid: <reason>``; every labelMatch is a valid label
   selector (operator ``In``/``NotIn``/``Exists``/``DoesNotExist``, qualified-name keys, label
   values), in the API server's words for ``metav1.LabelSelector``.
3. ``tree`` - second parent, cycle, tiers, labelMatch on HyperNode members (``tree.py``);
   missing member HyperNodes give warnings. Read from the lister's tree indexes
   (``treeindex.py``, added to the store here) when it can hold them, else a walk.

Memos, all on values (so a hit gives exactly what evaluating would): per member, the
per-member rules' outcomes keyed by its canonical JSON (``MEMO_LIMIT``); per whole
``spec.members`` list, keyed by a 128-bit digest of its JSON (``LIST_MEMO_LIMIT``), the
outcomes of every member, the RE2 verdict and whether every int fits int64 - so a request
repeating a list seen before (re-apply, an UPDATE that leaves the members alone) costs one
``orjson.dumps`` and a lookup for those stages; the schema checker remembers arrays the same
way.

``HyperNodeValidator`` is thread-safe (gthread workers share one): compiled rules are
immutable and the memos are dicts whose worst race is computing an entry twice.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from volcano_py.api.errors import FieldError
from volcano_py.api.regex import re2_error
from volcano_py.api.selectors import LabelSelector
from volcano_py.kube.memo import GenerationMemo
from webhooks.hypernodes import cel
from webhooks.hypernodes.schema import SchemaChecker, join_causes
from webhooks.hypernodes.tree import HyperNodeLister, check_tree
from webhooks.hypernodes.treeindex import add_tree_indexes, check_tree_indexed

log = logging.getLogger(__name__)

POLICY_PATH = Path(__file__).with_name("policy.yaml")
MEMO_LIMIT = 4096  # members per memo generation (see volcano_py.kube.memo)
LIST_MEMO_LIMIT = 64  # whole member lists remembered (by a 128-bit digest of their JSON)


@dataclass(frozen=True, slots=True)
class Verdict:
    """The outcome for one object: allowed or the denial message, plus warnings."""

    allowed: bool
    message: str = ""
    stage: str = ""
    reason: str = ""
    warnings: tuple[str, ...] = field(default=())


_Outcome = bool | str  # True/False, or the text of an evaluation error


_Outcomes = tuple[_Outcome, ...]


class _MemberMemo:
    """Per-member rule results keyed by the member's canonical JSON (bounded)."""

    def __init__(self, rules: tuple[cel.Rule, ...], limit: int = MEMO_LIMIT) -> None:
        self._rules = tuple((rule.program, rule.member_var or "") for rule in rules)
        self._programs = tuple(rule.program for rule in rules)
        names = {var for _, var in self._rules}
        self._var = names.pop() if len(names) == 1 else None
        self._entries: GenerationMemo[str, _Outcomes] = GenerationMemo(limit)
        self.passed: _Outcomes = (True,) * len(rules)  # shared by every member passing all

    def outcomes(self, member: Any, key: str | None = None) -> _Outcomes:
        """The per-member rules' results for ``member`` (``key``: its canonical JSON).

        Only members within ``cel.int64_safe`` are remembered (``safe`` relies on that).
        """
        if key is None:
            try:
                key = orjson.dumps(member, option=orjson.OPT_SORT_KEYS).decode()
            except (TypeError, orjson.JSONEncodeError):
                return self.evaluate(member)
        found = self._entries.get(key)
        if found is None:
            if not cel.int64_safe(member):
                return self.evaluate(member, safe=False)
            found = self.evaluate(member)
            self._entries.put(key, found)
        return found

    def safe(self, member: Any, key: str | None) -> bool:
        """``cel.int64_safe(member)``, known without a scan for a remembered member."""
        return (key is not None and key in self._entries) or cel.int64_safe(member)

    def evaluate(self, member: Any, *, safe: bool = True) -> _Outcomes:
        """The per-member rules' results for ``member`` (decoded JSON), not memoised.

        ``safe``: ``cel.int64_safe(member)`` holds (checked by the caller).
        """
        out: list[_Outcome] = []
        if self._var is not None:  # every rule names the member alike: one activation
            out = cel.outcomes(self._programs, {self._var: member}, checked=safe)
        else:
            for program, var in self._rules:
                try:
                    out.append(cel.evaluate(program, {var: member}, checked=safe))
                except cel.CelError as e:
                    out.append(str(e))
        if all(o is True for o in out):
            return self.passed
        return tuple(out)

    def __len__(self) -> int:
        return len(self._entries)


@dataclass(frozen=True, slots=True)
class _MemberList:
    """What the CEL and RE2 stages derive from one ``spec.members`` list alone."""

    outcomes: list[_Outcomes]  # per member, the per-member rules' results
    passed: bool  # every member passes every per-member rule
    safe: bool  # every member is within cel.int64_safe
    re2: Verdict | None  # the RE2 stage's denial


class HyperNodeValidator:
    """Runs the four stages; ``lister`` holds the HyperNodes already in the cluster."""

    def __init__(
        self,
        lister: HyperNodeLister | None = None,
        *,
        policy_path: Path = POLICY_PATH,
        schema: SchemaChecker | None = None,
        check_schema: bool = True,
        compiled: bool = True,
    ) -> None:
        """``compiled=False``: every CEL expression on celpy's interpreter (for comparisons)."""
        self.lister = lister
        # the tree checks read the informer's indexes (treeindex.py); a plain lister is walked
        self._indexed = lister is not None and add_tree_indexes(lister)
        self.policy = cel.load_policy(policy_path, compiled=compiled)
        self._schema = schema if schema is not None else SchemaChecker(compiled=compiled)
        self._check_schema = check_schema
        self._member_rules = self.policy.member_rules
        self._positions = {id(rule): i for i, rule in enumerate(self._member_rules)}
        self._memo = _MemberMemo(self._member_rules)
        self._lists: dict[str, _MemberList] = {}

    def validate(self, obj: Mapping[str, Any], old: Mapping[str, Any] | None = None) -> Verdict:
        """The verdict for ``obj`` (``old``: the stored version on UPDATE)."""
        if not isinstance(obj, Mapping):
            return Verdict(False, "the object is not a JSON object", "schema", "BadRequest")
        members = _spec_members(obj)
        keys: dict[int, str] = {}
        known: _MemberList | None = None
        digest = _digest(members) if members is not None else None
        if members is not None:
            if digest is not None:
                keys[id(members)] = digest  # the schema checker's whole-array memo uses it
                known = self._lists.get(digest)
            if known is None:
                keys.update(_member_keys(members))
        if self._check_schema:
            causes = self._schema.check(obj, keys)
            if causes:
                return Verdict(False, join_causes(causes), "schema", "Invalid")
        if members is not None and known is None:
            known = self._member_list(members, keys)
            if digest is not None:
                if len(self._lists) >= LIST_MEMO_LIMIT:
                    self._lists.clear()
                self._lists[digest] = known
        denial = self._cel(obj, old, members, known, keys)
        if denial is not None:
            return denial
        if known is not None and known.re2 is not None:
            return known.re2
        if self._indexed:
            tree = check_tree_indexed(obj, self.lister)  # type: ignore[arg-type]
        else:
            tree = check_tree(obj, self.lister)
        if tree.denial is not None:
            return Verdict(False, tree.denial, "tree", "Forbidden", tuple(tree.warnings))
        return Verdict(True, warnings=tuple(tree.warnings))

    # -- stage 1: CEL --------------------------------------------------------------------

    def _member_list(self, members: list[Any], keys: Mapping[int, str]) -> _MemberList:
        outcomes = [self._memo.outcomes(m, keys.get(id(m))) for m in members]
        return _MemberList(
            outcomes,
            all(o is self._memo.passed for o in outcomes),
            all(self._memo.safe(m, keys.get(id(m))) for m in members),
            _re2(members),
        )

    def _cel(
        self,
        obj: Mapping[str, Any],
        old: Mapping[str, Any] | None,
        spec_members: list[Any] | None,
        known: _MemberList | None,
        keys: Mapping[int, str],
    ) -> Verdict | None:
        activation: dict[str, Any] = {"object": obj, "oldObject": old}
        safe = _int64_safe(obj, known) and (old is None or cel.int64_safe(old))
        variables: dict[str, Any] = {}
        for var in self.policy.variables:
            try:
                variables[var.name] = cel.evaluate_value(
                    var.program, {**activation, "variables": variables}, checked=safe
                )
            except cel.CelError as e:
                return _rule_error(var.expression, str(e))
        activation["variables"] = variables
        outcomes: list[_Outcomes] | None = None
        passed = False  # every member passes every per-member rule
        for rule in self.policy.rules:
            if rule.member_var is None:
                try:
                    ok = cel.evaluate(rule.program, activation, checked=safe)
                except cel.CelError as e:
                    return _rule_error(rule.expression, str(e))
                if not ok:
                    return Verdict(False, rule.message, "cel", rule.reason)
                continue
            if outcomes is None:
                members = variables.get(cel.MEMBERS_VARIABLE)
                if not isinstance(members, list):
                    return _rule_error(rule.expression, "variables.members is not a list")
                if members is spec_members and known is not None:
                    outcomes, passed = known.outcomes, known.passed
                else:
                    outcomes = [self._memo.outcomes(m, keys.get(id(m))) for m in members]
                    passed = all(o is self._memo.passed for o in outcomes)
            if passed:
                continue
            verdict = _all_members(rule, self._positions[id(rule)], outcomes)
            if verdict is not None:
                return verdict
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
                self._memo.outcomes(member)


def _int64_safe(obj: Mapping[str, Any], known: _MemberList | None) -> bool:
    """``cel.int64_safe(obj)``; the members' part comes from ``known`` when given."""
    spec = obj.get("spec")
    if known is None or not isinstance(spec, dict):
        return cel.int64_safe(obj)
    return known.safe and cel.int64_safe({**obj, "spec": {**spec, "members": None}})


def _re2(members: list[Any]) -> Verdict | None:
    """Stage 2: the first bad regexMatch pattern or labelMatch selector.

    A pattern must compile under RE2 (Go's syntax); a labelMatch must be a
    ``metav1.LabelSelector`` the API server accepts (``ValidateLabelSelector``: operator, key,
    values), which Volcano's CRD does not check.
    """
    for i, member in enumerate(members):
        selector = member.get("selector") if isinstance(member, dict) else None
        label = selector.get("labelMatch") if isinstance(selector, dict) else None
        if label is not None:
            field_path = f"spec.members[{i}].selector.labelMatch"
            try:
                LabelSelector.from_dict(label, field_path, strict=True)
            except FieldError as e:
                return Verdict(False, str(e), "re2", "Invalid")
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


def _digest(value: Any) -> str | None:
    """A 128-bit digest of ``value``'s JSON, in hex (None when it has no JSON form)."""
    try:
        return hashlib.blake2b(orjson.dumps(value), digest_size=16).hexdigest()
    except (TypeError, orjson.JSONEncodeError):
        return None


def _spec_members(obj: Mapping[str, Any]) -> list[Any] | None:
    spec = obj.get("spec")
    members = spec.get("members") if isinstance(spec, dict) else None
    return members if isinstance(members, list) else None


def _member_keys(members: list[Any]) -> dict[int, str]:
    """Each member's canonical JSON by ``id()``: computed once, used by every memo."""
    keys = {}
    for member in members:
        if isinstance(member, dict):
            try:
                keys[id(member)] = orjson.dumps(member, option=orjson.OPT_SORT_KEYS).decode()
            except (TypeError, orjson.JSONEncodeError):
                continue
    return keys


def _all_members(rule: cel.Rule, position: int, outcomes: list[_Outcomes]) -> Verdict | None:
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
