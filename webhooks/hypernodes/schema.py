"""The HyperNode CRD's structural schema and ``x-kubernetes-validations``, checked offline.

What the API server does to a HyperNode before any webhook sees it, derived from the CRD
(``crd.yaml`` in this package, a copy of ``manifests/crds/topology.volcano.sh_hypernodes.yaml``
that a unit test keeps identical): types, ``required``, ``enum``, ``minimum``, ``maximum``,
``minLength``, ``maxLength``, ``minItems``, ``pattern``, then the CEL rules (``self`` = the
node the rule is attached to). Messages and their order are the API server's (checked
against a real one):
``spec.tier: Invalid value: -1: spec.tier in body should be greater than or equal to 0``
(and ``... should be less than or equal to 16`` over ``maximum``, our CRD's one addition).
Like the API server, CEL rules are skipped when a "blocking" error (type, required, enum,
too long) was found, and a note says so. Unknown fields are ignored (the API server prunes
them). ``volcano-py validate`` runs this first; the webhook runs it too so that direct calls
get the same answers as calls from the API server.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import re2
import yaml

from volcano_py.api.selectors import is_dns1123_subdomain
from volcano_py.kube.memo import GenerationMemo
from webhooks.hypernodes import cel

CRD_PATH = Path(__file__).with_name("crd.yaml")
SKIPPED_NOTE = (
    "<nil>: Invalid value: null: some validation rules were not checked because the object "
    "was invalid; correct the existing errors to complete validation"
)
_HERE = "\x00"  # stands for an item's path in memoised results (values are shown JSON-escaped)
_DONE: list[_Rule] = []  # marks a pending entry whose rule causes are already known
_CLEAN: tuple[tuple[Cause, ...], tuple[Cause, ...]] = ((), ())  # an item without errors
BLOCKING = frozenset({"Required", "TypeInvalid", "NotSupported", "TooLong"})


@dataclass(frozen=True, slots=True)
class Cause:
    """One field error: ``field: message``; ``kind`` says whether it blocks CEL rules."""

    field: str
    message: str
    kind: str = "Invalid"

    def __str__(self) -> str:
        return f"{self.field}: {self.message}" if self.field else self.message


def join_causes(causes: list[Cause]) -> str:
    """The API server's aggregate: one error as it is, several as ``[a, b]``."""
    texts = [str(c) for c in causes]
    return texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"


@dataclass(frozen=True, slots=True)
class _Rule:
    program: Any
    message: str


class SchemaChecker:
    """Validates HyperNode objects against one CRD version's ``openAPIV3Schema``."""

    def __init__(self, crd: Mapping[str, Any] | None = None, *, compiled: bool = True) -> None:
        """``compiled=False`` keeps the CRD's CEL rules on celpy's interpreter."""
        crd = crd if crd is not None else load_crd()
        version = crd["spec"]["versions"][0]
        self._schema: Mapping[str, Any] = version["schema"]["openAPIV3Schema"]
        self._compiled = compiled
        self._rules: dict[int, list[_Rule]] = {}
        self._items: GenerationMemo[tuple[int, str], tuple[tuple[Cause, ...], tuple[Cause, ...]]]
        self._items = GenerationMemo(_MEMO_LIMIT)
        self._arrays: dict[tuple[int, str], tuple[tuple[Cause, ...], tuple[Cause, ...]]] = {}
        self._compile_rules(self._schema)

    def _compile_rules(self, schema: Mapping[str, Any]) -> None:
        rules = [
            _Rule(
                cel.compile_expression(
                    str(r["rule"]), "x-kubernetes-validations", compiled=self._compiled
                ),
                r["message"],
            )
            for r in schema.get("x-kubernetes-validations") or []
        ]
        if rules:
            self._rules[id(schema)] = rules
        if isinstance(schema.get("pattern"), str):
            _pattern(schema["pattern"])  # compiled now, not on the first request
        for sub in (schema.get("properties") or {}).values():
            self._compile_rules(sub)
        for key in ("items", "additionalProperties"):
            if isinstance(schema.get(key), Mapping):
                self._compile_rules(schema[key])

    def check(self, obj: Mapping[str, Any], keys: Mapping[int, str] | None = None) -> list[Cause]:
        """Every schema error in ``obj``, then (when nothing blocks them) the CEL rule errors.

        ``keys`` may give array items' canonical JSON by ``id()`` (the validator computes it
        once per member for all its memos).
        """
        keys = keys or {}
        causes: list[Cause] = []
        pending: list[tuple[Any, Any, str]] = []
        name = (obj.get("metadata") or {}).get("name") if isinstance(obj, Mapping) else None
        if isinstance(name, str) and name:
            causes += [
                Cause("metadata.name", f"Invalid value: {_show(name)}: {msg}")
                for msg in is_dns1123_subdomain(name)
            ]
        self._walk(self._schema, obj, "", causes, pending, keys)
        if any(c.kind in BLOCKING for c in causes):
            return [*causes, Cause("", SKIPPED_NOTE)]
        for rules, value, path in pending:
            causes += value if rules is _DONE else _run_rules(rules, value, path)
        return causes

    def _walk(
        self,
        schema: Mapping[str, Any],
        value: Any,
        path: str,
        causes: list[Cause],
        pending: list[tuple[Any, Any, str]],
        keys: Mapping[int, str],
    ) -> None:
        kind = schema.get("type")
        if kind and not _is_type(value, kind):
            got = _json_type(value)
            message = f'Invalid value: "{got}": {path} in body must be of type {kind}: "{got}"'
            causes.append(Cause(path, message, "TypeInvalid"))
            return
        if "enum" in schema and value not in schema["enum"]:
            allowed = ", ".join(json.dumps(v) for v in schema["enum"])
            causes.append(
                Cause(
                    path,
                    f"Unsupported value: {_show(value)}: supported values: {allowed}",
                    "NotSupported",
                )
            )
        if kind == "object" and isinstance(value, Mapping):
            props = schema.get("properties") or {}
            for req in schema.get("required") or []:
                if req not in value:
                    causes.append(Cause(_child(path, req), "Required value", "Required"))
            for key in sorted(value):
                sub = props.get(key)
                if sub is None and isinstance(schema.get("additionalProperties"), Mapping):
                    sub = schema["additionalProperties"]
                if sub is not None and value[key] is not None:
                    self._walk(sub, value[key], _child(path, key), causes, pending, keys)
        elif kind == "array" and isinstance(value, list):
            if "minItems" in schema and len(value) < schema["minItems"]:
                causes.append(
                    Cause(
                        path,
                        f"Invalid value: {len(value)}: {path} in body should "
                        f"have at least {schema['minItems']} items",
                    )
                )
            items = schema.get("items")
            if isinstance(items, Mapping):
                self._walk_items(items, value, path, causes, pending, keys)
        elif kind == "string" and isinstance(value, str):
            _check_string(schema, value, path, causes)
        elif kind == "integer":
            _check_integer(schema, value, path, causes)
        rules = self._rules.get(id(schema))
        if rules:
            pending.append((rules, value, path))

    def _walk_items(
        self,
        schema: Mapping[str, Any],
        value: list[Any],
        path: str,
        causes: list[Cause],
        pending: list[tuple[Any, Any, str]],
        keys: Mapping[int, str],
    ) -> None:
        """The items of an array, memoised on the whole array (then per item).

        ``keys`` may give the array's digest by ``id()`` (the validator's); without it the
        array is not remembered as a whole (each item still is).
        """
        digest = keys.get(id(value))
        key = (id(schema), digest) if digest is not None else None
        found = self._arrays.get(key) if key is not None else None
        if found is None:
            item_causes: list[Cause] = []
            item_pending: list[tuple[Any, Any, str]] = []
            for i, item in enumerate(value):
                self._walk_item(schema, item, _HERE, i, item_causes, item_pending, keys)
            rule_causes = [
                c
                for rules, found_value, where in item_pending
                for c in (found_value if rules is _DONE else _run_rules(rules, found_value, where))
            ]
            found = (tuple(item_causes), tuple(rule_causes))
            if key is not None:
                if len(self._arrays) >= _ARRAY_MEMO_LIMIT:
                    self._arrays.clear()
                self._arrays[key] = found
        if found == _CLEAN:
            return
        causes += [_relocate(c, path) for c in found[0]]
        if found[1]:
            pending.append((_DONE, tuple(_relocate(c, path) for c in found[1]), path))

    def _walk_item(
        self,
        schema: Mapping[str, Any],
        item: Any,
        array_path: str,
        index: int,
        causes: list[Cause],
        pending: list[tuple[Any, Any, str]],
        keys: Mapping[int, str],
    ) -> None:
        """``_walk`` for an array item, memoised on the item's value (paths made relative).

        A 1,000-member HyperNode is mostly members seen before (UPDATEs, the informer's
        warm-up), so each distinct member is walked once; a clean one costs a lookup.
        """
        if not isinstance(item, dict):
            self._walk(schema, item, f"{array_path}[{index}]", causes, pending, keys)
            return
        encoded = keys.get(id(item)) or _canonical(item)
        if encoded is None:  # no JSON form (an int beyond 64 bits): walked, not remembered
            self._walk(schema, item, f"{array_path}[{index}]", causes, pending, keys)
            return
        key = (id(schema), encoded)
        found = self._items.get(key)
        if found is None:
            item_causes: list[Cause] = []
            item_pending: list[tuple[Any, Any, str]] = []
            self._walk(schema, item, _HERE, item_causes, item_pending, {})
            # the item's CEL results are computed now and kept; check() uses them only
            # when nothing blocked the rules
            rule_causes = [
                Cause(where, message)
                for rules, value, where in item_pending
                for message in _evaluate_rules(rules, value)
            ]
            found = (tuple(item_causes), tuple(rule_causes))
            if found == _CLEAN:
                found = _CLEAN
            self._items.put(key, found)
        if found is _CLEAN:
            return
        path = f"{array_path}[{index}]"
        causes += [_relocate(c, path) for c in found[0]]
        if found[1]:
            pending.append((_DONE, tuple(_relocate(c, path) for c in found[1]), path))


def _relocate(cause: Cause, path: str) -> Cause:
    return Cause(cause.field.replace(_HERE, path), cause.message.replace(_HERE, path), cause.kind)


def _check_integer(schema: Mapping[str, Any], value: int, path: str, causes: list[Cause]) -> None:
    if "minimum" in schema and value < schema["minimum"]:
        causes.append(
            Cause(
                path,
                f"Invalid value: {value}: {path} in body should be greater "
                f"than or equal to {schema['minimum']}",
            )
        )
    elif "maximum" in schema and value > schema["maximum"]:
        causes.append(
            Cause(
                path,
                f"Invalid value: {value}: {path} in body should be less "
                f"than or equal to {schema['maximum']}",
            )
        )


def _check_string(schema: Mapping[str, Any], value: str, path: str, causes: list[Cause]) -> None:
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        causes.append(
            Cause(path, f"Too long: may not be more than {schema['maxLength']} bytes", "TooLong")
        )
        return
    if "minLength" in schema and len(value) < schema["minLength"]:
        causes.append(
            Cause(
                path,
                f"Invalid value: {_show(value)}: {path} in body should be at "
                f"least {schema['minLength']} chars long",
            )
        )
        return
    pattern = schema.get("pattern")
    if pattern and not _pattern(pattern)(value):
        causes.append(
            Cause(path, f"Invalid value: {_show(value)}: {path} in body should match '{pattern}'")
        )


_PATTERNS: dict[str, Callable[[str], bool]] = {}


def _pattern(pattern: str) -> Callable[[str], bool]:
    """``pattern`` (the CRD's, Go RE2 syntax) as a "does it match anywhere" test."""
    found = _PATTERNS.get(pattern)
    if found is None:
        found = _PATTERNS[pattern] = _matcher(pattern)
    return found


def _matcher(pattern: str) -> Callable[[str], bool]:
    """RE2's own matcher without the ``re2`` module's span decoding (~1 us instead of ~6 us).

    A CRD pattern needs only yes/no, so the regexp is compiled with ``never_capture`` and
    ``RE2::Match`` is called directly; without that low-level API, ``re2.search``.
    """
    low_level = getattr(re2, "_re2", None)
    options = re2.Options()
    options.never_capture = True
    if low_level is None or not hasattr(low_level, "RE2"):
        search = re2.compile(pattern, options).search
        return lambda text: search(text) is not None
    regexp = low_level.RE2(pattern.encode(), options)
    if not regexp.ok():
        raise re2.error(regexp.error())
    unanchored = low_level.RE2.Anchor.UNANCHORED
    no_match = (-1, -1)

    def matches(text: str) -> bool:
        encoded = text.encode()
        return bool(regexp.Match(unanchored, encoded, 0, len(encoded))[0] != no_match)

    return matches


_MEMO_LIMIT = 4096  # per memo generation (see volcano_py.kube.memo)
_ARRAY_MEMO_LIMIT = 64
_memo: GenerationMemo[tuple[int, str], tuple[str, ...]] = GenerationMemo(_MEMO_LIMIT)


def _run_rules(rules: list[_Rule], value: Any, path: str) -> list[Cause]:
    """The rules' failures for ``value``; memoised on (rule set, canonical JSON of value)."""
    encoded = _canonical(value)
    if encoded is None:
        return [Cause(path, m) for m in _evaluate_rules(rules, value)]
    key = (id(rules), encoded)
    messages = _memo.get(key)
    if messages is None:
        messages = _evaluate_rules(rules, value)
        _memo.put(key, messages)
    return [Cause(path, m) for m in messages]


def _canonical(value: Any) -> str | None:
    """``value``'s JSON with sorted keys (None when it has none, e.g. an int beyond 64 bits)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    except (TypeError, orjson.JSONEncodeError):
        return None


def _evaluate_rules(rules: list[_Rule], value: Any) -> tuple[str, ...]:
    messages = []
    activation = {"self": value}
    safe = cel.int64_safe(value)
    for rule in rules:
        try:
            ok = cel.evaluate(rule.program, activation, checked=safe)
        except cel.CelError as e:
            messages.append(f"Invalid value: {_show(value)}: {e}")
            continue
        if not ok:
            messages.append(f"Invalid value: {rule.message}")
    return tuple(messages)


def load_crd(path: Path = CRD_PATH) -> dict[str, Any]:
    """The CustomResourceDefinition document in ``path``."""
    for doc in yaml.safe_load_all(path.read_text()):
        if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
            return doc
    raise ValueError(f"{path}: no CustomResourceDefinition")


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _is_type(value: Any, kind: str) -> bool:
    if kind == "object":
        return isinstance(value, Mapping)
    if kind == "array":
        return isinstance(value, list)
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    return True


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _show(value: Any) -> str:
    """A value as ``field.Invalid`` prints it: strings quoted (JSON), numbers bare."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
