"""Typed view of ``scheduling.volcano.sh/v1beta1`` Queue.

A Queue holds quota for the PodGroups that name it (``spec.queue``): ``capability`` (hard
ceiling), ``guarantee`` (reserved), ``deserved`` (the capacity plugin's share), ``weight``
(the proportion plugin's share), ``reclaimable``, ``priority`` and ``parent`` (hierarchical
queues; ``root`` is the top). ``status.state`` is ``Open``, ``Closed``, ``Closing`` or
``Unknown``; a Queue with no state is Open (what Volcano's queue controller writes first).
Field names are Volcano's ``QueueSpec``/``QueueStatus`` JSON names; quantities stay raw here
and are parsed by the scheduler's ``QueueInfo``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from volcano_py.api.constants import DEFAULT_QUEUE
from volcano_py.api.errors import FieldError
from volcano_py.api.meta import metadata, read_int, read_object, read_section, read_str

ROOT_QUEUE = "root"
BUILTIN_QUEUES = (ROOT_QUEUE, DEFAULT_QUEUE)
QUEUE_CONTROLLER_NAME = "queue-controller"
# set by the queue controller on a queue it closed because its parent closed
CLOSED_BY_PARENT_ANNOTATION = "volcano.sh/closed-by-parent"
# hierarchical DRF's queue tree (``drf`` with ``enableHierarchy``): ``root/eng/prod``, ``1/2/8``
HIERARCHY_ANNOTATION = "volcano.sh/hierarchy"
HIERARCHY_WEIGHTS_ANNOTATION = "volcano.sh/hierarchy-weights"


class QueueState(StrEnum):
    """``status.state``."""

    OPEN = "Open"
    CLOSED = "Closed"
    CLOSING = "Closing"
    UNKNOWN = "Unknown"


@dataclass(frozen=True, slots=True)
class Queue:
    """The fields the scheduler reads."""

    name: str
    weight: int
    capability: Mapping[str, Any]
    guarantee: Mapping[str, Any]
    deserved: Mapping[str, Any]
    reclaimable: bool
    priority: int
    parent: str
    state: QueueState
    status: Mapping[str, Any]
    hierarchy: str = ""  # ``volcano.sh/hierarchy``
    hierarchy_weights: str = ""  # ``volcano.sh/hierarchy-weights``

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any]) -> Queue:
        """Read a Queue the API server accepted.

        Raises:
            FieldError: naming the wrong field.
        """
        spec = read_section(obj, "spec")
        status = read_section(obj, "status")
        weight = read_int(spec.get("weight"), "spec.weight")
        if weight is not None and weight < 0:
            raise FieldError("spec.weight", "must not be negative")
        guarantee = read_object(spec.get("guarantee") or {}, "spec.guarantee")
        reclaimable = spec.get("reclaimable")
        if reclaimable is not None and not isinstance(reclaimable, bool):
            raise FieldError("spec.reclaimable", "must be a boolean")
        raw_state = read_str(status, "state", "status")
        try:
            state = QueueState(raw_state) if raw_state else QueueState.OPEN
        except ValueError:
            state = QueueState.UNKNOWN
        meta = metadata(obj)
        annotations = read_object(meta.get("annotations") or {}, "metadata.annotations")
        return cls(
            name=read_str(meta, "name", "metadata"),
            # Volcano's defaulting webhook sets weight 1; 0 means "no share" only when written
            weight=1 if weight is None else weight,
            capability=read_object(spec.get("capability") or {}, "spec.capability"),
            guarantee=read_object(guarantee.get("resource") or {}, "spec.guarantee.resource"),
            deserved=read_object(spec.get("deserved") or {}, "spec.deserved"),
            reclaimable=True if reclaimable is None else reclaimable,
            priority=read_int(spec.get("priority"), "spec.priority") or 0,
            parent=read_str(spec, "parent", "spec"),
            state=state,
            status=status,
            hierarchy=read_str(annotations, HIERARCHY_ANNOTATION, "metadata.annotations"),
            hierarchy_weights=read_str(
                annotations, HIERARCHY_WEIGHTS_ANNOTATION, "metadata.annotations"
            ),
        )

    @property
    def is_open(self) -> bool:
        """Whether new PodGroups may enter."""
        return self.state is QueueState.OPEN


def queue_manifest(name: str, *, parent: str = "") -> dict[str, Any]:
    """A Queue object Volcano's scheduler would create when it is missing (weight 1, Open)."""
    spec: dict[str, Any] = {"weight": 1, "reclaimable": True}
    if parent:
        spec["parent"] = parent
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": spec,
    }
