"""Volcano's admission rules for Queues (``scheduling.volcano.sh/v1beta1``), as pure functions.

``validate(queue, old, view)`` (CREATE / UPDATE) and ``validate_delete(name, view)`` return
the problems found, each naming its field; empty means allowed. ``default_patch(queue)`` is
the JSON patch of Volcano's mutating webhook. ``view`` is a ``ClusterView``: the cached
Queues, a count of each queue's PodGroups and the cluster's allocatable total.

Volcano's rules (``pkg/webhooks/admission/queues``), our wording:

- quantities in ``capability``, ``deserved`` and ``guarantee.resource`` are quantities and not
  negative; ``deserved >= guarantee`` and ``deserved <= capability`` per resource;
- ``spec.weight`` within 1..65535 (the CRD's bounds; 0 is defaulted to 1 by the mutation);
- ``status.state``, when set, is ``Open`` or ``Closed``;
- the ``volcano.sh/hierarchy`` and ``volcano.sh/hierarchy-weights`` annotations have as many
  parts as each other, every weight a number > 0, no empty or repeated part (a repeated
  name is a loop), and no other queue's hierarchy lies under this one's path;
- ``spec.parent`` is not the queue itself, exists, does not loop back, and (on a change of
  parent) a parent without child queues holds no allocated pods; a child's capability does
  not exceed its nearest ancestor's, the children's guarantees and deserved shares add up
  to no more than their parent's;
- ``root`` and ``default`` cannot be deleted, nor a queue with child queues.

Ours, beyond Volcano: an *open* queue that PodGroups still name cannot be deleted (close it
first). A closed or closing one can, as in Volcano (whose own e2e cleanup closes a queue and
deletes it while the spec's standalone PodGroups still name it).

Ours, beyond Volcano: a ``guarantee.resource`` amount larger than the whole cluster's
allocatable of that resource can never be honoured (it reserved everything and stalled every
other queue); it is refused, naming the field and the cluster's total. A cluster with no
nodes yet is not judged.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from volcano_py.api import JSON
from volcano_py.api.constants import DEFAULT_QUEUE
from volcano_py.api.errors import FieldError
from volcano_py.api.quantity import ZERO, Quantity, add_resource_lists, parse_resource_list
from volcano_py.api.queue import HIERARCHY_ANNOTATION, HIERARCHY_WEIGHTS_ANNOTATION, ROOT_QUEUE

MAX_WEIGHT = 65535
STATES = ("Open", "Closed")


@dataclass(frozen=True, slots=True)
class ClusterView:
    """What the rules read besides the object: caches in the manager, fakes in tests."""

    queues: Callable[[], Sequence[Mapping[str, Any]]]
    podgroups_in: Callable[[str], int] = lambda name: 0
    allocatable: Callable[[], Mapping[str, Quantity]] = dict

    def get(self, name: str) -> Mapping[str, Any] | None:
        """The cached Queue ``name``."""
        return next((q for q in self.queues() if _name(q) == name), None)

    def children(self, name: str) -> list[Mapping[str, Any]]:
        """The queues whose ``spec.parent`` is ``name``."""
        return [q for q in self.queues() if _spec(q).get("parent") == name and _name(q) != name]


def _name(queue: Mapping[str, Any]) -> str:
    return str((queue.get("metadata") or {}).get("name") or "")


def _spec(queue: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = queue.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def _annotations(queue: Mapping[str, Any]) -> Mapping[str, Any]:
    return (queue.get("metadata") or {}).get("annotations") or {}


def _guarantee(spec: Mapping[str, Any]) -> Any:
    guarantee = spec.get("guarantee")
    return guarantee.get("resource") if isinstance(guarantee, Mapping) else None


def _amounts(spec: Mapping[str, Any]) -> tuple[dict[str, dict[str, Quantity]], list[str]]:
    """Capability, deserved and guarantee parsed; problems for unreadable or negative ones."""
    problems: list[str] = []
    parsed: dict[str, dict[str, Quantity]] = {}
    for key, path, raw in (
        ("capability", "spec.capability", spec.get("capability")),
        ("deserved", "spec.deserved", spec.get("deserved")),
        ("guarantee", "spec.guarantee.resource", _guarantee(spec)),
    ):
        try:
            amounts = parse_resource_list(raw, path)
        except FieldError as e:
            problems.append(str(e))
            amounts = {}
        for resource, amount in sorted(amounts.items()):
            if amount < ZERO:
                problems.append(
                    f"{path}[{resource}]: Invalid value: {amount}: must not be negative"
                )
        parsed[key] = {r: a for r, a in amounts.items() if a >= ZERO}
    return parsed, problems


def _quantity_rules(amounts: Mapping[str, Mapping[str, Quantity]]) -> list[str]:
    problems = []
    capability, deserved, guarantee = (
        amounts["capability"],
        amounts["deserved"],
        amounts["guarantee"],
    )
    for resource, amount in sorted(guarantee.items()):
        have = deserved.get(resource)
        if have is None:
            problems.append(
                f"spec.deserved[{resource}]: Invalid value: <nil>: deserved"
                f"[{resource}] must be >= guarantee[{resource}]={amount}"
            )
        elif have < amount:
            problems.append(
                f"spec.deserved[{resource}]: Invalid value: {have}: deserved"
                f"[{resource}]={have} must be >= guarantee[{resource}]={amount}"
            )
    for resource, amount in sorted(deserved.items()):
        limit = capability.get(resource)
        if limit is not None and amount > limit:
            problems.append(
                f"spec.deserved[{resource}]: Invalid value: {amount}: deserved"
                f"[{resource}]={amount} must be <= capability[{resource}]={limit}"
            )
    return problems


def _honourable(
    guarantee: Mapping[str, Quantity], allocatable: Mapping[str, Quantity]
) -> list[str]:
    if not allocatable:
        return []
    problems = []
    for resource, amount in sorted(guarantee.items()):
        total = allocatable.get(resource, ZERO)
        if amount > total:
            problems.append(
                f"spec.guarantee.resource[{resource}]: Invalid value: {amount}: the whole "
                f"cluster has {total} allocatable; a guarantee it can never honour would "
                "reserve everything and starve every other queue"
            )
    return problems


def _hierarchy_annotations(queue: Mapping[str, Any], view: ClusterView) -> list[str]:
    annotations = _annotations(queue)
    hierarchy = str(annotations.get(HIERARCHY_ANNOTATION) or "")
    weights = str(annotations.get(HIERARCHY_WEIGHTS_ANNOTATION) or "")
    if not hierarchy and not weights:
        return []
    field = "metadata.annotations"
    paths, parts = hierarchy.split("/"), weights.split("/")
    if len(paths) != len(parts):
        return [
            f"{field}: Invalid value: {hierarchy!r}: {HIERARCHY_ANNOTATION} must have the "
            f"same length with {HIERARCHY_WEIGHTS_ANNOTATION} ({weights!r})"
        ]
    if any(not p for p in paths):
        return [f"{field}[{HIERARCHY_ANNOTATION}]: Invalid value: {hierarchy!r}: empty part"]
    if len(set(paths)) != len(paths):
        return [
            f"{field}[{HIERARCHY_ANNOTATION}]: Invalid value: {hierarchy!r}: a queue name "
            "repeats, the hierarchy would loop"
        ]
    for weight in parts:
        try:
            value = float(weight)
        except ValueError:
            return [
                f"{field}[{HIERARCHY_WEIGHTS_ANNOTATION}]: Invalid value: {weights!r}: "
                f"{weight!r} is not a number"
            ]
        if not value > 0:
            return [
                f"{field}[{HIERARCHY_WEIGHTS_ANNOTATION}]: Invalid value: {weights!r}: "
                f"{weight} must be larger than 0"
            ]
    for other in view.queues():
        theirs = str(_annotations(other).get(HIERARCHY_ANNOTATION) or "")
        if theirs and _name(other) != _name(queue) and theirs.startswith(hierarchy + "/"):
            return [
                f"{field}[{HIERARCHY_ANNOTATION}]: Invalid value: {hierarchy!r}: it may "
                f"not be a prefix of {theirs!r}, the hierarchy of queue {_name(other)}"
            ]
    return []


def _allocated_pods(queue: Mapping[str, Any]) -> int:
    allocated = (queue.get("status") or {}).get("allocated") or {}
    try:
        pods = parse_resource_list(allocated).get("pods", ZERO)
    except FieldError:
        return 0
    return pods.value()


def _parent_rules(queue: Mapping[str, Any], view: ClusterView) -> list[str]:
    name, parent = _name(queue), str(_spec(queue).get("parent") or "")
    if not parent or parent == ROOT_QUEUE:
        return []
    if parent == name:
        return [f"spec.parent: Invalid value: {parent!r}: a queue cannot be its own parent"]
    seen = [name]
    current = parent
    while current and current != ROOT_QUEUE:
        if current in seen:
            return [
                f"spec.parent: Invalid value: {parent!r}: the hierarchy would loop "
                f"({' -> '.join([*seen, current])})"
            ]
        seen.append(current)
        found = view.get(current)
        if found is None:
            return [f"spec.parent: Not found: {current!r}: the parent queue does not exist"]
        current = str(_spec(found).get("parent") or "")
    parent_queue = view.get(parent)
    assert parent_queue is not None
    pods = _allocated_pods(parent_queue)
    if not view.children(parent) and pods:
        return [
            f"spec.parent: Invalid value: {parent!r}: queue {parent} cannot become a "
            f"parent, it has {pods} allocated pods"
        ]
    return []


def _tree_sums(
    queue: Mapping[str, Any], view: ClusterView, amounts: Mapping[str, Mapping[str, Quantity]]
) -> list[str]:
    """A child within its ancestors' capability; children's sums within their parent's."""
    parent = str(_spec(queue).get("parent") or "")
    problems: list[str] = []
    if parent and parent != ROOT_QUEUE and view.get(parent) is not None:
        ancestor = view.get(parent)
        while ancestor is not None and problems == []:
            limit, _ = _amounts(_spec(ancestor))
            for resource, amount in sorted(amounts["capability"].items()):
                cap = limit["capability"].get(resource)
                if cap is not None and cap > ZERO and amount > cap:
                    problems.append(
                        f"spec.capability[{resource}]: Invalid value: {amount}: "
                        f"exceeds ancestor {_name(ancestor)}'s capability {cap}"
                    )
            if limit["capability"]:
                break
            up = str(_spec(ancestor).get("parent") or "")
            ancestor = view.get(up) if up and up != ROOT_QUEUE else None
        siblings = [
            _amounts(_spec(q))[0] for q in view.children(parent) if _name(q) != _name(queue)
        ]
        problems += _children_sum(view.get(parent) or {}, [*siblings, amounts])
    return problems


def _children_sum(
    parent: Mapping[str, Any], children: list[Mapping[str, Mapping[str, Quantity]]]
) -> list[str]:
    limits, _ = _amounts(_spec(parent))
    problems = []
    for key, path in (("guarantee", "spec.guarantee.resource"), ("deserved", "spec.deserved")):
        if not limits[key]:
            continue
        total = add_resource_lists(*(child[key] for child in children))
        for resource, amount in sorted(total.items()):
            limit = limits[key].get(resource)
            if limit is not None and amount > limit:
                problems.append(
                    f"{path}[{resource}]: Invalid value: the children of queue "
                    f"{_name(parent)} add up to {amount}, more than its {limit}"
                )
    return problems


def validate(
    queue: Mapping[str, Any], old: Mapping[str, Any] | None, view: ClusterView
) -> list[str]:
    """The problems with a created (``old`` None) or updated Queue."""
    spec = _spec(queue)
    amounts, problems = _amounts(spec)
    problems += _quantity_rules(amounts)
    weight = spec.get("weight")
    if weight is not None and (
        not isinstance(weight, int) or isinstance(weight, bool) or not 1 <= weight <= MAX_WEIGHT
    ):
        problems.append(
            f"spec.weight: Invalid value: {weight!r}: must be between 1 and {MAX_WEIGHT}"
        )
    state = (queue.get("status") or {}).get("state")
    if state and state not in STATES:
        problems.append(
            f"status.state: Invalid value: {state!r}: must be one of {', '.join(STATES)}"
        )
    problems += _hierarchy_annotations(queue, view)
    parent_moved = old is None or _spec(old).get("parent") != spec.get("parent")
    if parent_moved and _name(queue) != ROOT_QUEUE:
        problems += _parent_rules(queue, view)
    if not problems and _name(queue) != ROOT_QUEUE:
        problems += _tree_sums(queue, view, amounts)
    if not problems and (old is None or _guarantee(_spec(old)) != _guarantee(spec)):
        problems += _honourable(amounts["guarantee"], view.allocatable())
    return problems


def validate_delete(name: str, view: ClusterView, state: str = "Open") -> list[str]:
    """The problems with deleting queue ``name`` (``state``: its ``status.state``)."""
    if name in (ROOT_QUEUE, DEFAULT_QUEUE):
        return [f"queue {name!r} can not be deleted"]
    children = sorted(_name(q) for q in view.children(name))
    if children:
        return [
            f"queue {name} can not be deleted because it has {len(children)} child "
            f"queues: {', '.join(children)}"
        ]
    held = view.podgroups_in(name) if state not in ("Closed", "Closing") else 0
    if held:
        return [
            f"queue {name} can not be deleted: {held} PodGroups still name it; close it "
            "(vcctl queue operate -a close) and let them finish first"
        ]
    return []


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def default_patch(queue: Mapping[str, Any]) -> list[JSON]:
    """Volcano's mutation on CREATE: hierarchy rooted at ``root``, ``reclaimable``, ``weight``."""
    patch: list[JSON] = []
    annotations = _annotations(queue)
    hierarchy = str(annotations.get(HIERARCHY_ANNOTATION) or "")
    weights = str(annotations.get(HIERARCHY_WEIGHTS_ANNOTATION) or "")
    if hierarchy and weights and not hierarchy.startswith(ROOT_QUEUE):
        for key, value in (
            (HIERARCHY_ANNOTATION, f"root/{hierarchy}"),
            (HIERARCHY_WEIGHTS_ANNOTATION, f"1/{weights}"),
        ):
            patch.append(
                {"op": "add", "path": f"/metadata/annotations/{_escape(key)}", "value": value}
            )
    spec = _spec(queue)
    if "spec" not in queue:
        patch.append({"op": "add", "path": "/spec", "value": {}})
    if spec.get("reclaimable") is None:
        patch.append({"op": "add", "path": "/spec/reclaimable", "value": True})
    if not spec.get("weight"):
        patch.append({"op": "add", "path": "/spec/weight", "value": 1})
    return patch
