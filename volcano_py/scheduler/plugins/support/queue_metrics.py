"""Queue metrics under Volcano's names: what the queue dashboards of Volcano's chart query.

Two recording points, as in Volcano (whose quota plugins export what they computed and whose
queue controller exports the PodGroup counts):

- ``export_queue_infos(infos)``: after every cycle, from the cache's queues (all of them, a
  queue with no PodGroup too): ``allocated``, ``request``, ``inqueue``, ``capacity`` (the
  dimensions ``spec.capability`` names; an unnamed one is unlimited and has no series),
  ``weight``, the PodGroup counts per phase and (ours) ``volcano_queue_state``, 1 for the
  queue's ``status.state``. A queue that disappeared loses its series.
- ``export_queue_attrs(attrs)``: at the close of a session, from the quota plugin
  (proportion or capacity): ``deserved``, ``real_capacity``, ``share``, ``overused``. The
  deserved amounts are also kept for the topology view (``computed_deserved``), which shows
  the share a plugin computed for a queue whose spec sets none.

Units are Volcano's: cpu in millicores, memory in bytes, other resources in milli-units. A
value of 0 is exported as 0; a scalar resource a queue no longer reports is set to 0, not
dropped (as Volcano does), so an alert on "== 0" fires.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping

from volcano_py.metrics import (
    QUEUE_OVERUSED,
    QUEUE_PHASES,
    QUEUE_PODGROUPS,
    QUEUE_RESOURCES,
    QUEUE_SHARE,
    QUEUE_STATE,
    QUEUE_STATES,
    QUEUE_WEIGHT,
    remove_series,
)
from volcano_py.scheduler.api.queue_info import QueueInfo
from volcano_py.scheduler.api.resource import CPU, MEMORY, PODS
from volcano_py.scheduler.plugins.support.queue_attr import QueueAttr, amounts

_lock = threading.Lock()
_scalars: dict[tuple[str, str], set[str]] = {}  # (kind, queue) -> scalar names ever exported
_queues: set[str] = set()
_deserved: dict[str, dict[str, float]] = {}  # queue -> what the quota plugin computed last


def set_queue_resource(kind: str, queue: str, values: Mapping[str, float]) -> None:
    """Set ``volcano_queue_<kind>_*`` of ``queue`` from amounts in ``Resource`` units."""
    cpu, memory, scalar = QUEUE_RESOURCES[kind]
    cpu.labels(queue).set(values.get(CPU, 0.0))
    memory.labels(queue).set(values.get(MEMORY, 0.0))
    current = {n for n in values if n not in (CPU, MEMORY, PODS)}
    with _lock:
        _queues.add(queue)
        known = _scalars.setdefault((kind, queue), set())
        known |= current
        names = sorted(known)
    for name in names:
        scalar.labels(queue, name).set(values.get(name, 0.0))


def export_queue_infos(infos: Mapping[str, QueueInfo]) -> None:
    """Usage, spec and PodGroup counts of every queue; drop the series of vanished queues."""
    for name, info in infos.items():
        set_queue_resource("allocated", name, amounts(info.allocated))
        set_queue_resource("request", name, amounts(info.request))
        set_queue_resource("inqueue", name, amounts(info.inqueue))
        if info.capability_names:
            capability = {n: float(info.capability.get(n)) for n in info.capability_names}
            set_queue_resource("capacity", name, capability)
        QUEUE_WEIGHT.labels(name).set(info.weight)
        for phase in QUEUE_PHASES:
            QUEUE_PODGROUPS[phase].labels(name).set(info.phases.get(phase, 0))
        for state in QUEUE_STATES:
            QUEUE_STATE.labels(name, state).set(1 if info.queue.state.value == state else 0)
    with _lock:
        gone = _queues - set(infos)
        _queues.clear()
        _queues.update(infos)
    for name in gone:
        delete_queue(name)


def export_queue_attrs(attrs: Iterable[QueueAttr]) -> None:
    """What a quota plugin computed this session: deserved, real capacity, share, overused."""
    for attr in attrs:
        set_queue_resource("deserved", attr.name, attr.deserved)
        with _lock:
            _deserved[attr.name] = dict(attr.deserved)
        if attr.real_capability is not None:
            set_queue_resource("real_capacity", attr.name, attr.real_capability)
        QUEUE_SHARE.labels(attr.name).set(attr.share)
        QUEUE_OVERUSED.labels(attr.name).set(1 if attr.deserved and attr.overused() else 0)


def delete_queue(name: str) -> None:
    """Remove every series of queue ``name`` (it was deleted)."""
    for kind, (cpu, memory, scalar) in QUEUE_RESOURCES.items():
        with _lock:
            scalars = _scalars.pop((kind, name), set())
        for gauge in (cpu, memory):
            remove_series(gauge, name)
        for resource in scalars:
            remove_series(scalar, name, resource)
    for gauge in (QUEUE_SHARE, QUEUE_WEIGHT, QUEUE_OVERUSED, *QUEUE_PODGROUPS.values()):
        remove_series(gauge, name)
    for state in QUEUE_STATES:
        remove_series(QUEUE_STATE, name, state)
    with _lock:
        _deserved.pop(name, None)


def computed_deserved() -> dict[str, dict[str, float]]:
    """The deserved amounts the quota plugin computed at the last session close, per queue."""
    with _lock:
        return {name: dict(amounts) for name, amounts in _deserved.items()}
