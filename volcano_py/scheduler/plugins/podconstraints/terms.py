"""A pod's inter-pod affinity terms and topology spread constraints, read and checked.

kube-scheduler v1.37 reads these into ``fwk.AffinityTerm`` / ``topologySpreadConstraint``;
this module is our reading of the same fields (``spec.affinity.podAffinity`` /
``podAntiAffinity`` and ``spec.topologySpreadConstraints``), with the same meaning:

- a term's ``labelSelector`` left out matches no pod, an empty one every pod; its
  ``namespaces`` and ``namespaceSelector`` both left out mean the pod's own namespace; a
  ``namespaceSelector`` of ``{}`` means every namespace;
- ``matchLabelKeys`` / ``mismatchLabelKeys`` add ``key in (value)`` / ``key notin (value)``
  for the owning pod's label values (the API server does this when the pod is created, so an
  API-server pod already has them; adding them again changes nothing);
- a spread constraint's ``minDomains`` defaults to 1, ``nodeAffinityPolicy`` to Honor,
  ``nodeTaintsPolicy`` to Ignore; ``matchLabelKeys`` merges the pod's values for those keys
  into the selector.

Input the API server would have refused (an invalid selector, a preferred weight outside
1-100, ``maxSkew`` below 1, an unknown ``whenUnsatisfiable``) raises ``TermError`` naming the
field: the predicate turns it into the pod's reason instead of placing the pod as if the
term were absent.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any

from volcano_py.api import JSON
from volcano_py.api.errors import FieldError
from volcano_py.api.selectors import LabelSelector, Operator, Requirement
from volcano_py.kube.memo import GenerationMemo

NamespaceLabels = Callable[[str], Mapping[str, str]]

NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"
MAX_WEIGHT = 100


class TermError(ValueError):
    """A term or constraint the API server would have refused; the message names the field."""


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    """One pod (anti-)affinity term: which pods, in which namespaces, over which topology."""

    selector: LabelSelector | None  # None: matches no pod (labelSelector left out)
    namespaces: frozenset[str]
    namespace_selector: LabelSelector | None  # None: no namespace by labels
    topology_key: str
    weight: int = 0  # preferred terms only

    checks: tuple[tuple[str, int, Any], ...] = dataclass_field(
        init=False, compare=False, repr=False
    )

    def __post_init__(self) -> None:
        """Flatten the selector for ``matches`` (called for every placed pod it is tried on)."""
        object.__setattr__(self, "checks", _checks(self.selector))

    def matches(self, pod: JSON, ns_labels: NamespaceLabels) -> bool:
        """Whether ``pod`` is one of the pods this term selects."""
        if self.selector is None:
            return False
        meta = pod.get("metadata") or {}
        namespace = meta.get("namespace", "")
        if namespace not in self.namespaces and (
            self.namespace_selector is None
            or not self.namespace_selector.matches(ns_labels(namespace))
        ):
            return False
        labels = meta.get("labels") or {}
        for key, op, values in self.checks:
            value = labels.get(key)
            if op == _EQUALS:
                if value != values:
                    return False
            elif op == _IN:
                if value is None or value not in values:
                    return False
            elif op == _NOT_IN:
                if value is not None and value in values:
                    return False
            elif (value is None) == (op == _EXISTS):
                return False
        return True


_EQUALS, _IN, _NOT_IN, _EXISTS, _DOES_NOT_EXIST = range(5)
_OPS = {
    Operator.IN: _IN,
    Operator.NOT_IN: _NOT_IN,
    Operator.EXISTS: _EXISTS,
    Operator.DOES_NOT_EXIST: _DOES_NOT_EXIST,
}


def _checks(selector: LabelSelector | None) -> tuple[tuple[str, int, Any], ...]:
    """A valid selector as ``(key, operator code, value or values)`` steps, in order."""
    if selector is None:
        return ()
    steps: list[tuple[str, int, Any]] = [(k, _EQUALS, v) for k, v in selector.match_labels]
    steps += [(r.key, _OPS[Operator(r.operator)], r.values) for r in selector.match_expressions]
    return tuple(steps)


@dataclass(frozen=True, slots=True)
class PodTerms:
    """Every inter-pod affinity term of one pod."""

    affinity: tuple[AffinityTerm, ...] = ()
    anti_affinity: tuple[AffinityTerm, ...] = ()
    preferred_affinity: tuple[AffinityTerm, ...] = ()
    preferred_anti_affinity: tuple[AffinityTerm, ...] = ()

    @property
    def required(self) -> bool:
        """Whether the pod has a required term."""
        return bool(self.affinity or self.anti_affinity)

    @property
    def preferred(self) -> bool:
        """Whether the pod has a preferred term."""
        return bool(self.preferred_affinity or self.preferred_anti_affinity)


NO_TERMS = PodTerms()


@dataclass(frozen=True, slots=True)
class SpreadConstraint:
    """One topology spread constraint, defaults applied and ``matchLabelKeys`` merged."""

    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    selector: LabelSelector | None  # None: counts no pod (labelSelector left out)
    min_domains: int = 1
    honor_node_affinity: bool = True
    honor_node_taints: bool = False

    def selects(self, labels: Mapping[str, str]) -> bool:
        """Whether the selector matches ``labels`` (the incoming pod's own match)."""
        return self.selector is not None and self.selector.matches(labels)

    def counts(self, pod: JSON, namespace: str) -> bool:
        """Whether an existing ``pod`` counts in a domain for a pod of ``namespace``.

        As kube-scheduler counts: same namespace, not terminating, matched by a selector
        that says something (an empty selector counts no pod, though it matches every one).
        """
        meta = pod.get("metadata") or {}
        if meta.get("namespace", "") != namespace or meta.get("deletionTimestamp"):
            return False
        selector = self.selector
        return (
            selector is not None
            and not selector.is_empty
            and selector.matches(meta.get("labels") or {})
        )


def _selector(data: Any, field: str) -> LabelSelector | None:
    if data is None:
        return None
    # not strict: from_dict's own raise of a kept error would leave a traceback cycle
    try:
        selector = LabelSelector.from_dict(data, field, strict=False)
    except FieldError as err:
        message = str(err)
    else:
        if selector.is_valid:
            return selector
        message = str(selector.errors[0])
    raise TermError(message)  # outside the handler: no traceback cycle through this frame


def _with_label_keys(
    selector: LabelSelector | None, labels: Mapping[str, str], keys: Any, op: str, field: str
) -> LabelSelector | None:
    if not keys:
        return selector
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise TermError(f"{field}: Invalid value: {keys!r}: must be a list of label keys")
    extra = tuple(Requirement(k, op, frozenset({labels[k]})) for k in keys if k in labels)
    if selector is None or not extra:
        return selector
    return dataclasses.replace(selector, match_expressions=selector.match_expressions + extra)


def _term(pod: JSON, raw: Any, field: str, weight: int = 0) -> AffinityTerm:
    if not isinstance(raw, Mapping):
        raise TermError(f"{field}: Invalid value: must be an object")
    meta = pod.get("metadata") or {}
    labels = meta.get("labels") or {}
    key = raw.get("topologyKey")
    if not isinstance(key, str) or not key:
        raise TermError(f"{field}.topologyKey: Required value: can not be empty")
    selector = _selector(raw.get("labelSelector"), f"{field}.labelSelector")
    selector = _with_label_keys(
        selector, labels, raw.get("matchLabelKeys"), Operator.IN, f"{field}.matchLabelKeys"
    )
    selector = _with_label_keys(
        selector,
        labels,
        raw.get("mismatchLabelKeys"),
        Operator.NOT_IN,
        f"{field}.mismatchLabelKeys",
    )
    ns_selector = _selector(raw.get("namespaceSelector"), f"{field}.namespaceSelector")
    namespaces = raw.get("namespaces") or []
    if not isinstance(namespaces, list) or not all(isinstance(n, str) for n in namespaces):
        raise TermError(f"{field}.namespaces: Invalid value: must be a list of names")
    if not namespaces and raw.get("namespaceSelector") is None:
        namespaces = [meta.get("namespace", "")]
    return AffinityTerm(selector, frozenset(namespaces), ns_selector, key, weight)


def _required(pod: JSON, block: Any, field: str) -> tuple[AffinityTerm, ...]:
    raw = (block or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or []
    path = f"{field}.requiredDuringSchedulingIgnoredDuringExecution"
    if not isinstance(raw, list):
        raise TermError(f"{path}: Invalid value: must be a list")
    terms = tuple(_term(pod, t, f"{path}[{i}]") for i, t in enumerate(raw))
    for i, term in enumerate(terms):
        _by_name_only(term.namespace_selector, f"{path}[{i}].namespaceSelector")
    return terms


def _by_name_only(selector: LabelSelector | None, field: str) -> None:
    """Refuse a required term's namespaceSelector on labels the scheduler does not see.

    The scheduler does not watch Namespaces: it knows each namespace's name label only. A
    required term selecting namespaces by another label cannot be decided, and deciding it
    as "no namespace matches" would let an anti-affinity term refuse nothing.
    """
    if selector is None:
        return
    keys = [k for k, _ in selector.match_labels] + [r.key for r in selector.match_expressions]
    for key in keys:
        if key != NAMESPACE_NAME_LABEL:
            raise TermError(
                f"{field}: Unsupported value: label {key!r}: namespaces are matched by "
                f"{NAMESPACE_NAME_LABEL!r} only (the scheduler does not read Namespace labels)"
            )


def _objects(raw: Any, path: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Each object of the list ``raw`` (at ``path``) with its own path."""
    if not isinstance(raw, list):
        raise TermError(f"{path}: Invalid value: must be a list")
    for i, item in enumerate(raw):
        if not isinstance(item, Mapping):
            raise TermError(f"{path}[{i}]: Invalid value: must be an object")
        yield f"{path}[{i}]", item


def _preferred(pod: JSON, block: Any, field: str) -> tuple[AffinityTerm, ...]:
    raw = (block or {}).get("preferredDuringSchedulingIgnoredDuringExecution") or []
    path = f"{field}.preferredDuringSchedulingIgnoredDuringExecution"
    terms = []
    for item_path, item in _objects(raw, path):
        weight = item.get("weight")
        if type(weight) is not int or not 1 <= weight <= MAX_WEIGHT:
            raise TermError(
                f"{item_path}.weight: Invalid value: {weight!r}: must be in the range 1-100"
            )
        terms.append(
            _term(pod, item.get("podAffinityTerm"), f"{item_path}.podAffinityTerm", weight)
        )
    return tuple(terms)


# (id(affinity), id(labels), namespace) -> (affinity, labels, terms or the error's message):
# the pods of a workload share those subtrees (kube/transforms.py), so they share one
# reading; an entry is used only while its subtrees are the very same objects
_READ: GenerationMemo[tuple[int, int, str], tuple[Any, Any, PodTerms | str]] = GenerationMemo(4096)


def pod_terms(pod: JSON) -> PodTerms:
    """The pod's inter-pod affinity terms (``TermError`` when one is invalid), memoised."""
    meta = pod.get("metadata") or {}
    affinity = (pod.get("spec") or {}).get("affinity")
    labels = meta.get("labels")
    key = (id(affinity), id(labels), meta.get("namespace", ""))
    known = _READ.get(key)
    if known is None or known[0] is not affinity or known[1] is not labels:
        try:
            result: PodTerms | str = _read_terms(pod)
        except TermError as err:
            result = str(err)
        known = (affinity, labels, result)
        _READ.put(key, known)
    if isinstance(known[2], str):
        raise TermError(known[2])
    return known[2]


def _read_terms(pod: JSON) -> PodTerms:
    affinity = (pod.get("spec") or {}).get("affinity") or {}
    if not isinstance(affinity, Mapping):
        raise TermError("spec.affinity: Invalid value: must be an object")
    pa = affinity.get("podAffinity")
    paa = affinity.get("podAntiAffinity")
    if not pa and not paa:
        return NO_TERMS
    a_path, aa_path = "spec.affinity.podAffinity", "spec.affinity.podAntiAffinity"
    return PodTerms(
        _required(pod, pa, a_path),
        _required(pod, paa, aa_path),
        _preferred(pod, pa, a_path),
        _preferred(pod, paa, aa_path),
    )


def _policy(raw: Mapping[str, Any], name: str, default: str, field: str) -> bool:
    value = raw.get(name)
    if value is None:
        return default == HONOR
    if value not in (HONOR, IGNORE):
        raise TermError(
            f'{field}.{name}: Unsupported value: {value!r}: supported values: "Honor", "Ignore"'
        )
    return bool(value == HONOR)


def spread_constraints(pod: JSON) -> tuple[SpreadConstraint, ...]:
    """The pod's topology spread constraints (``TermError`` when one is invalid)."""
    raw_list = (pod.get("spec") or {}).get("topologySpreadConstraints") or []
    labels = (pod.get("metadata") or {}).get("labels") or {}
    out = []
    for field, raw in _objects(raw_list, "spec.topologySpreadConstraints"):
        skew = raw.get("maxSkew")
        if type(skew) is not int or skew < 1:
            raise TermError(f"{field}.maxSkew: Invalid value: {skew!r}: must be greater than zero")
        key = raw.get("topologyKey")
        if not isinstance(key, str) or not key:
            raise TermError(f"{field}.topologyKey: Required value: can not be empty")
        when = raw.get("whenUnsatisfiable")
        if when not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
            raise TermError(
                f"{field}.whenUnsatisfiable: Unsupported value: {when!r}: supported values: "
                '"DoNotSchedule", "ScheduleAnyway"'
            )
        min_domains = raw.get("minDomains")
        if min_domains is not None and (type(min_domains) is not int or min_domains < 1):
            raise TermError(
                f"{field}.minDomains: Invalid value: {min_domains!r}: must be greater than zero"
            )
        selector = _selector(raw.get("labelSelector"), f"{field}.labelSelector")
        keys = raw.get("matchLabelKeys")
        selector = _with_label_keys(selector, labels, keys, Operator.IN, f"{field}.matchLabelKeys")
        out.append(
            SpreadConstraint(
                skew,
                key,
                when,
                selector,
                min_domains or 1,
                _policy(raw, "nodeAffinityPolicy", HONOR, field),
                _policy(raw, "nodeTaintsPolicy", IGNORE, field),
            )
        )
    return tuple(out)
