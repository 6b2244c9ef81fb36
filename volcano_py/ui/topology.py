"""``topology_json``: the live topology view's data, built from one scheduler-cache snapshot.

Pure: a ``Snapshot`` (nodes, jobs, the HyperNode tree) and the HyperNode objects in, plain
JSON out; no client, no clock (the caller stamps the time). The per-HyperNode figures come
from ``scheduler.treeview.hypernode_usage``, the computation ``volcano-py tree`` prints, so
the page and the command never disagree. The shape (documented in docs/ui.md):

- ``tree``: ``ready``, ``errors``, ``quarantined`` (name -> reason, left out of scheduling);
- ``hyperNodes``: name -> ``label`` (what it stands for: the label value or UFM leaf
  switches, ``ui.owners.hypernode_label``; "" for a hand-made one), ``tier``, ``tierName``,
  ``parent`` ("" for a root), ``children``,
  ``nodes`` (the real nodes directly in it, not under a child), ``nodeCount`` (all under it),
  ``gpu`` (devices) / ``cpu`` (millicores) / ``memory`` (bytes) as ``[free, total]``,
  ``source`` (the discovery source label, "" when hand-made) and ``stale`` (the ``DiscoveryStale``
  condition's ``reason``/``message``/``since``, or null);
- ``roots``: parentless HyperNodes, highest tier first;
- ``tiers``: per tier its name, HyperNode count and the largest free share one HyperNode of
  it holds now (``gpu``, ``cpu``, ``memory`` and where) — the biggest gang that tier can take;
- ``gangs``: every PodGroup with ``namespace``, ``name``, ``queue``, ``owner`` (the workload,
  ``{"kind", "name", "apiVersion"}`` or null, ``ui.owners.gang_owner``), ``phase``,
  ``minMember``, ``placed`` / ``pending`` task counts, ``hyperNode`` (its
  ``volcano.sh/job-allocated-hypernode``, else the lowest HyperNode holding its placed tasks),
  ``highestTierAllowed`` / ``highestTierName`` and, while unplaced, the ``Unschedulable``
  condition's ``reason`` and ``message`` (the per-tier text the scheduler wrote, so a
  follower shows what the leader decided), and ``subJobs`` for a partitioned gang
  (``{"<policy>/<values>": {"hyperNode", "pods"}}``, the lowest HyperNode holding each
  SubJob's placed pods; ``{}`` for a flat gang);
- ``queues``: per Queue ``name``, ``state``, ``weight``, ``allocated`` and (the dimensions
  the spec names) ``deserved`` / ``capability`` as ``{gpu, cpu, memory}``, ``pendingGangs``
  and ``runningGangs``, ``podGroups`` (the counts per phase, as ``Queue.status`` has them);
  ``deserved`` is the one ``proportion`` / ``capacity`` computed at the last session when the
  spec sets none (``deservedFrom``: ``spec``, ``computed`` or ``unset``);
- ``discovery``: per source label the HyperNodes it owns and how many are stale, and the
  stale ones listed;
- ``summary``: counts for the header.
"""

from __future__ import annotations

from collections.abc import Iterable

from volcano_py.api import JSON
from volcano_py.api.constants import (
    CLUSTER_TOP_HYPERNODE,
    NETWORK_TOPOLOGY_SOURCE_LABEL,
    STALE_CONDITION,
    PodGroupConditionType,
    PodGroupPhase,
)
from volcano_py.metrics import QUEUE_PHASES
from volcano_py.scheduler.api.hypernode_info import HyperNodeTree
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.resource import CPU, MEMORY, Resource
from volcano_py.scheduler.api.snapshot import Snapshot
from volcano_py.scheduler.api.task_info import READY, TaskStatus
from volcano_py.scheduler.plugins.support.queue_metrics import computed_deserved
from volcano_py.scheduler.simulator import sub_jobs_view
from volcano_py.scheduler.treeview import HyperNodeUsage, gpus, hypernode_usage
from volcano_py.ui.owners import gang_owner, hypernode_label


def _stale(obj: JSON | None) -> JSON | None:
    for cond in ((obj or {}).get("status") or {}).get("conditions") or ():
        if cond.get("type") == STALE_CONDITION and cond.get("status") == "True":
            return {
                "reason": cond.get("reason") or "",
                "message": cond.get("message") or "",
                "since": cond.get("lastTransitionTime") or "",
            }
    return None


def _source(obj: JSON | None) -> str:
    labels = ((obj or {}).get("metadata") or {}).get("labels") or {}
    return str(labels.get(NETWORK_TOPOLOGY_SOURCE_LABEL) or "")


def _whole(milli: int) -> int | float:
    """GPUs from the cache's milli-units (a fraction only when one is shared)."""
    return milli // 1000 if milli % 1000 == 0 else milli / 1000


def _hypernode(use: HyperNodeUsage, tree: HyperNodeTree) -> JSON:
    under_children: set[str] = set()
    for child in use.info.children:
        under_children |= tree.real_nodes.get(child, frozenset())
    alloc, free = use.allocatable, use.free
    return {
        "label": hypernode_label(use.info.obj, use.info.tier_name),
        "tier": use.info.tier,
        "tierName": use.info.tier_name,
        "parent": use.parent,
        "children": list(use.info.children),
        "nodes": [n for n in use.nodes if n not in under_children],
        "nodeCount": len(use.nodes),
        "gpu": [_whole(gpus(free)), _whole(gpus(alloc))],
        "cpu": [free.milli_cpu, alloc.milli_cpu],
        "memory": [free.memory, alloc.memory],
        "source": _source(use.info.obj),
        "stale": _stale(use.info.obj),
    }


def _tiers(hypernodes: JSON) -> list[JSON]:
    tiers: dict[int, JSON] = {}
    for name, hn in hypernodes.items():
        entry = tiers.setdefault(
            hn["tier"],
            {"tier": hn["tier"], "tierName": hn["tierName"], "hyperNodes": 0, "largestFree": {}},
        )
        entry["hyperNodes"] += 1
        entry["tierName"] = entry["tierName"] or hn["tierName"]
        best = entry["largestFree"]
        for resource in ("gpu", "cpu", "memory"):
            free = hn[resource][0]
            if resource not in best or free > best[resource][0]:
                best[resource] = [free, name]
    return [tiers[t] for t in sorted(tiers)]


def _condition(job: JobInfo) -> JSON:
    """The PodGroup's ``Unschedulable=True`` condition (empty when it has none)."""
    for cond in (job.podgroup.get("status") or {}).get("conditions") or ():
        if cond.get("type") == PodGroupConditionType.UNSCHEDULABLE and cond.get("status") == "True":
            return dict(cond)
    return {}


def _domain(job: JobInfo, tree: HyperNodeTree) -> str:
    """The HyperNode that holds the gang: the annotation, else its placed tasks' LCA."""
    if job.allocated_hypernode:
        return job.allocated_hypernode
    lca = ""
    for task in job.tasks.values():
        if task.status in READY and task.node_name:
            lca = tree.lca(lca, tree.leaf_of(task.node_name))
    return "" if lca == CLUSTER_TOP_HYPERNODE else lca


def _sub_jobs(job: JobInfo, snapshot: Snapshot) -> JSON:
    """A partitioned gang's SubJobs: ``{key: {"hyperNode", "pods"}}`` (``{}`` for a flat one)."""
    if not job.has_sub_group_policy():
        return {}
    return {
        key: {"hyperNode": view["allocatedHyperNode"], "pods": len(view["pods"])}
        for key, view in sub_jobs_view(job, snapshot).items()
    }


def _gang(job: JobInfo, snapshot: Snapshot) -> JSON:
    tree = snapshot.tree
    placed = sum(1 for t in job.tasks.values() if t.status in READY)
    pending = sum(1 for t in job.tasks.values() if t.status == TaskStatus.PENDING)
    cond = _condition(job) if job.phase != PodGroupPhase.RUNNING else {}
    return {
        "namespace": job.namespace,
        "name": job.name,
        "queue": job.queue,
        "owner": gang_owner(job),
        "phase": job.phase,
        "minMember": job.min_member,
        "placed": placed,
        "pending": pending,
        "hyperNode": _domain(job, tree),
        "highestTierAllowed": job.highest_tier,
        "highestTierName": job.highest_tier_name,
        "reason": cond.get("reason", ""),
        "message": cond.get("message", ""),
        "subJobs": _sub_jobs(job, snapshot),
    }


def _amounts(res: Resource, names: Iterable[str] | None = None) -> JSON:
    """``gpu`` (devices), ``cpu`` (millicores), ``memory`` (bytes); only ``names`` when given."""
    out: JSON = {"gpu": _whole(gpus(res)), "cpu": res.milli_cpu, "memory": res.memory}
    if names is None:
        return out
    wanted = {"gpu" if n.endswith("gpu") else n for n in names}
    return {k: v for k, v in out.items() if k in wanted}


def _queues(snapshot: Snapshot, gangs: list[JSON]) -> list[JSON]:
    pending: dict[str, int] = {}
    for g in gangs:
        if g["phase"] != PodGroupPhase.RUNNING and (g["pending"] or g["message"]):
            pending[g["queue"]] = pending.get(g["queue"], 0) + 1
    computed = computed_deserved()
    out = []
    for name, info in sorted(snapshot.queues.items()):
        deserved, source = _deserved(info.deserved, computed.get(name))
        out.append(
            {
                "name": name,
                "state": info.state.value,
                "weight": info.weight,
                "allocated": _amounts(info.allocated),
                "deserved": deserved,
                "deservedFrom": source,
                "capability": _amounts(info.capability, info.capability_names),
                "pendingGangs": pending.get(name, 0),
                "runningGangs": info.phases.get(PodGroupPhase.RUNNING, 0),
                "podGroups": {p.lower(): info.phases.get(p, 0) for p in QUEUE_PHASES},
            }
        )
    return out


def _deserved(spec: Resource, computed: dict[str, float] | None) -> tuple[JSON, str]:
    """The spec's deserved when it names some, else the quota plugin's; and which it is."""
    names = [n for n, _ in spec.items()]
    if names:
        return _amounts(spec, names), "spec"
    if computed:
        res = Resource(int(computed.get(CPU, 0)), int(computed.get(MEMORY, 0)))
        res.scalars = {n: int(v) for n, v in computed.items() if n not in (CPU, MEMORY)}
        return _amounts(res, [n for n, v in computed.items() if v > 0]), "computed"
    return {}, "unset"


def _discovery(objects: Iterable[JSON]) -> JSON:
    sources: dict[str, JSON] = {}
    stale: list[JSON] = []
    for obj in objects:
        source = _source(obj)
        if not source:
            continue
        entry = sources.setdefault(source, {"hyperNodes": 0, "stale": 0})
        entry["hyperNodes"] += 1
        condition = _stale(obj)
        if condition is not None:
            entry["stale"] += 1
            name = (obj.get("metadata") or {}).get("name", "")
            stale.append({"hyperNode": name, "source": source, **condition})
    stale.sort(key=lambda s: str(s["hyperNode"]))
    return {"sources": dict(sorted(sources.items())), "stale": stale}


def topology_json(snapshot: Snapshot, hypernode_objects: Iterable[JSON]) -> JSON:
    """The view's data (see the module docstring); ``hypernode_objects``: every HyperNode."""
    tree = snapshot.tree
    hypernodes = {name: _hypernode(use, tree) for name, use in hypernode_usage(snapshot).items()}
    roots = sorted(
        (n for n, h in hypernodes.items() if not h["parent"]),
        key=lambda n: (-hypernodes[n]["tier"], n),
    )
    gangs = [_gang(snapshot.jobs[key], snapshot) for key in sorted(snapshot.jobs)]
    running = sum(1 for g in gangs if g["phase"] == PodGroupPhase.RUNNING)
    return {
        "tree": {
            "ready": tree.ready,
            "errors": list(tree.errors),
            "quarantined": dict(sorted(tree.quarantined.items())),
        },
        "hyperNodes": hypernodes,
        "roots": roots,
        "tiers": _tiers(hypernodes),
        "gangs": gangs,
        "queues": _queues(snapshot, gangs),
        "discovery": _discovery(hypernode_objects),
        "summary": {
            "nodes": len(snapshot.nodes),
            "hyperNodes": len(hypernodes),
            "gangs": len(gangs),
            "runningGangs": running,
            "unschedulableGangs": sum(1 for g in gangs if g["message"]),
        },
    }
