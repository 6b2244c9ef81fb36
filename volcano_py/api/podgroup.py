"""Typed view of ``scheduling.volcano.sh/v1beta1`` PodGroup.

A PodGroup is the scheduler's unit of gang scheduling: ``minMember`` pods (and, per task,
``minTaskMember``) must fit together, within ``minResources``, in ``queue``, and, when
``networkTopology`` is set, within one HyperNode no higher than ``highestTierAllowed`` (or the
tier named ``highestTierName``). pg-controller writes PodGroups, the scheduler reads them and
writes ``status``.

``PodGroup.from_dict`` reads an object the API server accepted: it checks types and shapes,
names the field that is wrong, and is lenient where the API server is (an unknown
``status.phase`` is kept as written). Field names are Volcano's ``PodGroupSpec`` and
``PodGroupStatus`` JSON names.

``spec.subGroupPolicy[]`` partitions the gang (``SubGroupPolicy``): pods matching a policy's
``labelSelector`` are grouped by the values of its ``matchLabelKeys`` into SubJobs of
``subGroupSize`` pods, each placed within its own ``networkTopology``; ``minSubGroups`` of them
must be ready for the job to be. The defaults are the CRD's (``subGroupSize`` 1,
``minSubGroups`` 0, ``mode`` hard).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, cast

from volcano_py.api.constants import DEFAULT_QUEUE, NetworkTopologyMode, PodGroupPhase
from volcano_py.api.errors import FieldError, child, index, invalid, key
from volcano_py.api.meta import (
    Condition,
    OwnerReference,
    annotations_of,
    labels_of,
    metadata,
    owner_references_of,
    read_int,
    read_list,
    read_object,
    read_only,
    read_section,
    read_str,
)
from volcano_py.api.quantity import Quantity, parse_resource_list
from volcano_py.api.selectors import LabelSelector

_PHASES = {phase.value: phase for phase in PodGroupPhase}
_NO_COUNTS: Mapping[str, int] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class NetworkTopology:
    """``spec.networkTopology``: how tightly the job must sit in the HyperNode tree."""

    mode: NetworkTopologyMode = NetworkTopologyMode.HARD
    highest_tier_allowed: int | None = None
    highest_tier_name: str | None = None

    @classmethod
    def from_dict(cls, data: Any, field: str) -> NetworkTopology:
        """Read the object; a missing ``mode`` is ``hard`` (the CRD's default)."""
        data = read_object(data, field)
        raw_mode = data.get("mode")
        if raw_mode is None or raw_mode == "":
            mode = NetworkTopologyMode.HARD
        else:
            try:
                mode = NetworkTopologyMode(raw_mode)
            except ValueError:
                raise FieldError(child(field, "mode"), "must be one of hard, soft") from None
        name = data.get("highestTierName")
        if name is not None and not isinstance(name, str):
            raise FieldError(child(field, "highestTierName"), "must be a string")
        return cls(
            mode=mode,
            highest_tier_allowed=read_int(
                data.get("highestTierAllowed"), child(field, "highestTierAllowed")
            ),
            highest_tier_name=name or None,
        )

    def to_dict(self) -> dict[str, Any]:
        """Back to JSON."""
        out: dict[str, Any] = {"mode": str(self.mode)}
        if self.highest_tier_allowed is not None:
            out["highestTierAllowed"] = self.highest_tier_allowed
        if self.highest_tier_name is not None:
            out["highestTierName"] = self.highest_tier_name
        return out


MAX_POLICY_NAME_LENGTH = 253


@dataclass(frozen=True, slots=True)
class SubGroupPolicy:
    """One ``spec.subGroupPolicy[]`` entry: how a slice of the gang is partitioned."""

    name: str = ""
    sub_group_size: int = 1
    min_sub_groups: int = 0
    label_selector: LabelSelector | None = None
    match_label_keys: tuple[str, ...] = ()
    network_topology: NetworkTopology | None = None

    @classmethod
    def from_dict(cls, data: Any, field: str) -> SubGroupPolicy:
        """Read one entry with the CRD's defaults and bounds.

        Raises:
            FieldError: naming the entry's field that is wrong.
        """
        data = read_object(data, field)
        name = read_str(data, "name", field)
        if len(name) > MAX_POLICY_NAME_LENGTH:
            raise FieldError(
                child(field, "name"), f"must be at most {MAX_POLICY_NAME_LENGTH} characters"
            )
        size = read_int(data.get("subGroupSize"), child(field, "subGroupSize"))
        if size is not None and size < 1:
            raise FieldError(child(field, "subGroupSize"), f"must be at least 1, got {size}")
        minimum = read_int(data.get("minSubGroups"), child(field, "minSubGroups"))
        if minimum is not None and minimum < 0:
            raise FieldError(child(field, "minSubGroups"), f"must not be negative, got {minimum}")
        keys_field = child(field, "matchLabelKeys")
        keys = read_list(data.get("matchLabelKeys"), keys_field)
        for i, item in enumerate(keys):
            if not isinstance(item, str) or not item:
                raise FieldError(index(keys_field, i), "must be a non-empty string")
        selector = data.get("labelSelector")
        topology = data.get("networkTopology")
        return cls(
            name=name,
            sub_group_size=1 if size is None else size,
            min_sub_groups=minimum or 0,
            label_selector=None
            if selector is None
            else LabelSelector.from_dict(selector, child(field, "labelSelector")),
            match_label_keys=tuple(keys),
            network_topology=None
            if topology is None
            else NetworkTopology.from_dict(topology, child(field, "networkTopology")),
        )

    def match_values(self, labels: Mapping[str, str]) -> tuple[str, ...] | None:
        """The pod's values of ``matchLabelKeys`` when this policy takes the pod, else None.

        As Volcano: the selector (when set) must match, every key must carry a non-empty
        value, and a policy without ``matchLabelKeys`` takes no pod (they stay in the job's
        default SubJob).
        """
        if self.label_selector is not None and not self.label_selector.matches(labels):
            return None
        values = []
        for name in self.match_label_keys:
            value = labels.get(name)
            if not value:
                return None
            values.append(value)
        return tuple(values) or None


def read_sub_group_policies(data: Any, field: str) -> tuple[SubGroupPolicy, ...]:
    """``spec.subGroupPolicy``: every entry read, names unique.

    Raises:
        FieldError: naming the entry (``spec.subGroupPolicy[2].subGroupSize``) that is wrong.
    """
    policies = tuple(
        SubGroupPolicy.from_dict(item, index(field, i))
        for i, item in enumerate(read_list(data, field))
    )
    seen: set[str] = set()
    for i, policy in enumerate(policies):
        if policy.name in seen:
            raise FieldError(
                child(index(field, i), "name"), f"duplicate policy name {policy.name!r}"
            )
        seen.add(policy.name)
    return policies


@dataclass(frozen=True, slots=True)
class PodGroup:
    """The fields of a PodGroup the controllers and the scheduler read."""

    name: str
    namespace: str
    uid: str
    resource_version: str
    creation_timestamp: str
    min_member: int
    min_task_member: Mapping[str, int]
    min_resources: Mapping[str, Quantity]
    queue: str
    priority_class_name: str
    network_topology: NetworkTopology | None
    sub_group_policy: tuple[SubGroupPolicy, ...]
    # A PodGroupPhase when recognised, the raw string otherwise, "" when unset.
    phase: PodGroupPhase | str
    conditions: tuple[Condition, ...]
    running: int
    succeeded: int
    failed: int
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    owner_references: tuple[OwnerReference, ...]

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any]) -> PodGroup:
        """Build the view from the API server's JSON.

        Raises:
            FieldError: naming the field whose type or shape is wrong.
        """
        obj = read_object(obj, "")
        meta = metadata(obj)
        spec = read_section(obj, "spec")
        status = read_section(obj, "status")
        topology = spec.get("networkTopology")
        phase = read_str(status, "phase", "status")
        return cls(
            name=read_str(meta, "name", "metadata"),
            namespace=read_str(meta, "namespace", "metadata"),
            uid=read_str(meta, "uid", "metadata"),
            resource_version=read_str(meta, "resourceVersion", "metadata"),
            creation_timestamp=read_str(meta, "creationTimestamp", "metadata"),
            min_member=read_int(spec.get("minMember"), "spec.minMember") or 0,
            min_task_member=read_min_task_member(spec.get("minTaskMember")),
            min_resources=read_only(read_min_resources(spec.get("minResources"))),
            queue=read_str(spec, "queue", "spec"),
            priority_class_name=read_str(spec, "priorityClassName", "spec"),
            network_topology=None
            if topology is None
            else NetworkTopology.from_dict(topology, "spec.networkTopology"),
            sub_group_policy=read_sub_group_policies(
                spec.get("subGroupPolicy"), "spec.subGroupPolicy"
            ),
            phase=_PHASES.get(phase, phase),
            conditions=tuple(
                cast(Condition, read_object(item, index("status.conditions", i)))
                for i, item in enumerate(read_list(status.get("conditions"), "status.conditions"))
            ),
            running=read_int(status.get("running"), "status.running") or 0,
            succeeded=read_int(status.get("succeeded"), "status.succeeded") or 0,
            failed=read_int(status.get("failed"), "status.failed") or 0,
            labels=read_only(labels_of(obj)),
            annotations=read_only(annotations_of(obj)),
            owner_references=tuple(owner_references_of(obj)),
        )

    @property
    def key(self) -> str:
        """``namespace/name``, the cache key."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @property
    def effective_queue(self) -> str:
        """``spec.queue``, or ``default`` when unset (what Volcano's defaulting webhook sets)."""
        return self.queue or DEFAULT_QUEUE

    @property
    def has_network_topology(self) -> bool:
        """Whether ``spec.networkTopology`` is set."""
        return self.network_topology is not None

    @property
    def is_hard_topology_mode(self) -> bool:
        """``spec.networkTopology.mode`` is ``hard`` (Volcano's ``IsHardTopologyMode``)."""
        return (
            self.network_topology is not None
            and self.network_topology.mode is NetworkTopologyMode.HARD
        )


def read_min_task_member(data: Any) -> Mapping[str, int]:
    """``spec.minTaskMember``: task name -> count (Volcano's ``TaskMinAvailable``).

    Raises:
        FieldError: ``spec.minTaskMember[<task>]`` when a count is not a non-negative integer.
    """
    if data is None:
        return _NO_COUNTS
    data = read_object(data, "spec.minTaskMember")
    counts: dict[str, int] = {}
    for task, value in data.items():
        count = read_int(value, key("spec.minTaskMember", str(task)))
        if count is not None and count < 0:
            raise FieldError(key("spec.minTaskMember", str(task)), "must not be negative")
        counts[str(task)] = 0 if count is None else count
    return MappingProxyType(counts)


def read_min_resources(value: Any) -> dict[str, Quantity]:
    """``spec.minResources``: quantities, none negative (the CRD's pattern refuses a sign too).

    Volcano accepts ``cpu: "-1"`` and then counts the gang as needing less than nothing.
    """
    resources = parse_resource_list(value, "spec.minResources")
    for name, amount in resources.items():
        if amount.sign < 0:
            raise invalid(key("spec.minResources", name), value[name], "must be >= 0")
    return resources
