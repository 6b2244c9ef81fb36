"""The scheduler in process, on a snapshot file: what ``simulate``, ``explain`` and ``tree`` run.

``load_objects`` reads Nodes, HyperNodes, PodGroups and Pods from YAML or JSON: one object, a
``List``, or a multi-document stream. ``Simulator`` feeds them to a ``SchedulerCache`` (pods
with ``spec.nodeName`` are already bound and use their node) and runs the real cycle — same
session, actions and plugins — with a ``MemoryWriter`` until a cycle changes nothing. A
partitioned PodGroup's result also lists its SubJobs (``subJobs``: pods and the HyperNode
holding them).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from volcano_py.api import JSON
from volcano_py.api.constants import DEFAULT_SCHEDULER_NAME, JOB_ALLOCATED_HYPERNODE_ANNOTATION
from volcano_py.api.native_groups import view_workload
from volcano_py.api.safeload import FILE_LIMITS, LoadError, load_any
from volcano_py.kube.changelog import ChangeLog
from volcano_py.kube.clock import Clock
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.snapshot import Snapshot
from volcano_py.scheduler.api.task_info import OCCUPYING
from volcano_py.scheduler.cache import Classifier, SchedulerCache
from volcano_py.scheduler.cache.volumes import KINDS as VOLUME_KINDS
from volcano_py.scheduler.framework.conf import DEFAULT_SCHEDULER_CONF, SchedulerConf
from volcano_py.scheduler.framework.framework import open_session
from volcano_py.scheduler.framework.registry import load_conf
from volcano_py.scheduler.framework.session import Session
from volcano_py.scheduler.scheduler import CycleResult, builtin_registries, run_cycle
from volcano_py.scheduler.sub_job_report import DEFAULT_SUB_JOB_KEY
from volcano_py.scheduler.writer import MemoryWriter

KINDS = (
    "Node",
    "HyperNode",
    "Queue",
    "CompositePodGroup",
    "Workload",
    "PodGroup",
    "PersistentVolumeClaim",
    "PersistentVolume",
    "StorageClass",
    "Pod",
    "PodDisruptionBudget",
)
MAX_CYCLES = 100


class SnapshotError(ValueError):
    """The cluster file cannot be read; the message says where."""


def parse_objects(text: str, source: str = "<input>") -> list[JSON]:
    """Objects from YAML/JSON text (a ``List``'s items are flattened; other kinds skipped)."""
    try:
        docs = load_any(text, source, FILE_LIMITS)
    except LoadError as e:
        raise SnapshotError(str(e)) from None
    objects: list[JSON] = []
    pending = list(docs)
    while pending:
        doc = pending.pop(0)
        if doc is None:
            continue
        if isinstance(doc, list):
            pending[:0] = doc
            continue
        if not isinstance(doc, dict):
            raise SnapshotError(f"{source}: expected objects, got {type(doc).__name__}")
        kind = doc.get("kind", "")
        if kind.endswith("List") and isinstance(doc.get("items"), list):
            pending[:0] = [dict(item, kind=item.get("kind") or kind[:-4]) for item in doc["items"]]
            continue
        if kind in KINDS:
            objects.append(_checked(doc, source))
    return objects


def _checked(obj: JSON, source: str) -> JSON:
    """``obj`` when its metadata, spec and status are objects (what every reader assumes)."""
    for part in ("metadata", "spec", "status"):
        if obj.get(part) is not None and not isinstance(obj[part], dict):
            meta = obj.get("metadata")
            name = meta.get("name", "") if isinstance(meta, dict) else ""
            raise SnapshotError(
                f"{source}: {obj['kind']} {name!r}: {part}: must be an object, "
                f"got {type(obj[part]).__name__}"
            )
    return obj


def load_objects(path: str | Path) -> list[JSON]:
    """Objects from a file (see ``parse_objects``).

    Raises:
        SnapshotError: when the file cannot be read or parsed.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise SnapshotError(f"{path}: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise SnapshotError(f"{path}: not UTF-8 text (byte {e.start})") from None
    return parse_objects(text, str(path))


def load_scheduler_conf(path: str | Path | None) -> SchedulerConf:
    """The conf from a file, or the default tiers.

    Raises:
        ConfError: naming the bad key.
        SnapshotError: when the file cannot be read.
    """
    plugins, actions = builtin_registries()
    text = DEFAULT_SCHEDULER_CONF
    if path is not None:
        try:
            text = Path(path).read_text()
        except OSError as e:
            raise SnapshotError(f"{path}: {e.strerror}") from None
    return load_conf(text, plugins, actions)


@dataclass(slots=True)
class SimulationResult:
    """Bindings made and the final PodGroup states."""

    bindings: dict[str, str] = field(default_factory=dict)
    podgroups: dict[str, JSON] = field(default_factory=dict)
    cycles: int = 0
    events: list[tuple[str, str, str]] = field(default_factory=list)
    evictions: dict[str, str] = field(default_factory=dict)  # victim pod -> preemptor group

    def to_json(self) -> JSON:
        """``{"bindings": {...}, "podGroups": {...}, "evictions": {...}}``."""
        return {
            "bindings": dict(sorted(self.bindings.items())),
            "podGroups": self.podgroups,
            "evictions": dict(sorted(self.evictions.items())),
        }


def sub_jobs_view(job: JobInfo, snapshot: Snapshot) -> JSON:
    """``{"<policy>/<values>": {"allocatedHyperNode", "pods"}}`` (``<default>`` for the rest).

    The allocated HyperNode is the lowest HyperNode holding the SubJob's placed pods.
    """
    tree = snapshot.tree
    view: JSON = {}
    for uid in sorted(job.sub_jobs):
        sub_job = job.sub_jobs[uid]
        lca = ""
        for task in sub_job.tasks.values():
            if task.node_name and task.status in OCCUPYING:
                leaf = tree.leaf_of(task.node_name)
                lca = tree.lca(lca, leaf) if lca else leaf
        view[uid or DEFAULT_SUB_JOB_KEY] = {
            "allocatedHyperNode": lca,
            "pods": sorted(t.name for t in sub_job.tasks.values()),
        }
    return view


def fill_cache(cache: SchedulerCache, objects: Iterable[JSON]) -> None:
    """Feed objects in dependency order: nodes, HyperNodes, Queues, PodGroups, volumes, pods.

    Raises:
        SnapshotError: naming the object (and the field, when known) that cannot be read.
    """
    by_kind: dict[str, list[JSON]] = {kind: [] for kind in KINDS}
    for obj in objects:
        by_kind[obj["kind"]].append(obj)
    feeds: dict[str, Callable[[JSON], None]] = {
        "Node": cache.update_node,
        "HyperNode": cache.update_hypernode,
        "Queue": cache.update_queue,
        "CompositePodGroup": cache.update_composite,
        "Workload": cache.update_workload,
        "PodGroup": cache.update_podgroup,
        "Pod": cache.update_pod,
        **{kind: functools.partial(cache.update_volume, kind) for kind in VOLUME_KINDS},
    }
    for kind in KINDS:
        if kind not in feeds:  # PodDisruptionBudgets: read by Simulator.cycle, not cached
            continue
        for obj in by_kind[kind]:
            try:
                feeds[kind](obj)
            # a snapshot is hand-made input: any of these means a field of the wrong shape
            except (ValueError, TypeError, AttributeError, KeyError) as e:
                meta = obj.get("metadata") or {}
                key = "/".join(str(p) for p in (meta.get("namespace"), meta.get("name")) if p)
                raise SnapshotError(f"{kind} {key or '(no name)'}: {e}") from e


def pdb_protected(cache: SchedulerCache, budgets: Iterable[JSON]) -> set[str]:
    """Bound pods a PodDisruptionBudget protects now (no disruption allowed).

    The simulator's stand-in for the API server's 429 on an eviction.

    A budget selects pods of its namespace by ``spec.selector.matchLabels``; allowed
    disruptions are ``healthy - minAvailable`` or ``maxUnavailable`` (integers, or percentages
    of the selected pods, rounded up as the disruption controller does).
    """
    protected: set[str] = set()
    pods = cache.pods()
    for pdb in budgets:
        meta, spec = pdb.get("metadata") or {}, pdb.get("spec") or {}
        ns = meta.get("namespace", "default")
        match = ((spec.get("selector") or {}).get("matchLabels")) or {}
        selected = [
            p
            for p in pods
            if (p.get("metadata") or {}).get("namespace", "default") == ns
            and (p.get("spec") or {}).get("nodeName")
            and all(
                ((p.get("metadata") or {}).get("labels") or {}).get(k) == v
                for k, v in match.items()
            )
        ]
        total = len(selected)
        if "minAvailable" in spec:
            allowed = total - _count(spec["minAvailable"], total)
        else:
            allowed = _count(spec.get("maxUnavailable", 0), total)
        if allowed <= 0:
            protected |= {
                f"{(p['metadata']).get('namespace', 'default')}/{p['metadata']['name']}"
                for p in selected
            }
    return protected


def _count(value: object, total: int) -> int:
    text = str(value)
    if text.endswith("%"):
        return -(-int(text[:-1]) * total // 100)
    return int(text)


class Simulator:
    """The real scheduler cycle over an in-memory cluster."""

    def __init__(
        self,
        objects: Iterable[JSON],
        conf: SchedulerConf | None = None,
        scheduler_name: str = DEFAULT_SCHEDULER_NAME,
        implicit: Classifier | None = None,
        clock: Clock | None = None,
        workloads: bool = False,
    ) -> None:
        """A cluster from ``objects`` with ``conf`` (default tiers when None).

        ``implicit``: bare pods run as implicit jobs, as the manager does (``implicit_jobs``).
        ``clock``: the scheduler's (parking's time limit runs on it; the process's when None).
        ``workloads``: Workloads are read even when ``objects`` hold none (the cluster serves
        them), so a native PodGroup naming one waits; else only when ``objects`` hold one.
        """
        self.plugins, self.actions = builtin_registries()
        self.conf = conf or load_conf(DEFAULT_SCHEDULER_CONF, self.plugins, self.actions)
        self.cache = SchedulerCache(scheduler_name, implicit, clock)
        if workloads:
            self.cache.read_workloads()
        objects = list(objects)
        fill_cache(self.cache, objects)
        self.budgets = [o for o in objects if o.get("kind") == "PodDisruptionBudget"]
        self.writer = MemoryWriter(self.cache)
        self.notes = ChangeLog()

    def cycle(self) -> CycleResult:
        """One cycle (pods a PodDisruptionBudget protects are not evictable in it)."""
        if self.budgets:
            now = time.monotonic()
            self.cache.eviction_refused.clear()
            for key in pdb_protected(self.cache, self.budgets):
                self.cache.eviction_refused[key] = now
        return run_cycle(self.cache, self.conf, self.plugins, self.actions, self.writer, self.notes)

    def run(self, max_cycles: int = MAX_CYCLES) -> SimulationResult:
        """Cycle until nothing changes (at most ``max_cycles``)."""
        result = SimulationResult()
        for _ in range(max_cycles):
            result.cycles += 1
            cycle = self.cycle()
            result.evictions.update(cycle.evictions)
            if not cycle.changed:
                break
        result.bindings = dict(self.writer.bindings)
        result.events = list(self.writer.events)
        snapshot = self.cache.snapshot()
        for key in sorted(snapshot.jobs):
            pg = snapshot.jobs[key].podgroup
            annotations = (pg.get("metadata") or {}).get("annotations") or {}
            status = pg.get("status") or {}
            result.podgroups[key] = {
                "phase": status.get("phase", "Pending"),
                "allocatedHyperNode": annotations.get(JOB_ALLOCATED_HYPERNODE_ANNOTATION, ""),
                "conditions": [
                    {k: c.get(k, "") for k in ("type", "status", "reason", "message")}
                    for c in status.get("conditions") or ()
                ],
            }
            workload = view_workload(pg)
            if workload:  # a native group: the Job or Workload people know it by
                result.podgroups[key]["workload"] = workload
            if snapshot.jobs[key].policies:
                result.podgroups[key]["subJobs"] = sub_jobs_view(snapshot.jobs[key], snapshot)
        return result

    def open_session(self) -> Session:
        """A session on the current state (nothing is bound; ``close_session`` it when done)."""
        return open_session(self.cache.snapshot(), self.conf, self.plugins)
