"""The HyperNode tree as data for people: per HyperNode its place, nodes and resources.

``tree_report(cache)`` turns the scheduler cache's HyperNode tree into the JSON ``volcano-py
tree`` prints: per HyperNode ``tier``, ``tierName``, ``parent``, ``children``, ``nodes`` (the
real nodes under it), ``nodeCount``, ``allocatable`` and ``free`` (cpu, memory, gpu), plus the
tree's ``ready`` flag and ``errors``. The virtual cluster top is left out (roots have parent
``""``). ``text_tree`` draws it as an indented outline. ``hypernode_usage(snapshot)`` is the
computation underneath, shared with the manager's live topology view (``volcano_py.ui``).
"""

from __future__ import annotations

from dataclasses import dataclass

from volcano_py.api import JSON
from volcano_py.api.constants import CLUSTER_TOP_HYPERNODE
from volcano_py.scheduler.api.hypernode_info import HyperNodeInfo
from volcano_py.scheduler.api.resource import Resource, format_amount
from volcano_py.scheduler.api.snapshot import Snapshot
from volcano_py.scheduler.cache import SchedulerCache


@dataclass(slots=True)
class HyperNodeUsage:
    """One HyperNode's place in the tree and the resources of the real nodes under it."""

    info: HyperNodeInfo
    parent: str
    nodes: list[str]
    allocatable: Resource
    free: Resource


def gpus(res: Resource) -> int:
    """The GPUs in ``res`` (every scalar resource whose name ends in ``gpu``)."""
    return sum(amount for name, amount in res.scalars.items() if name.endswith("gpu"))


def _summary(res: Resource) -> JSON:
    return {
        "cpu": format_amount("cpu", res.milli_cpu),
        "memory": format_amount("memory", res.memory),
        "gpu": format_amount("gpu", gpus(res)),
    }


def hypernode_usage(snapshot: Snapshot) -> dict[str, HyperNodeUsage]:
    """Per HyperNode (sorted by name, the virtual top left out) its nodes and resources.

    The one computation behind ``volcano-py tree`` and the manager's topology view.
    """
    tree = snapshot.tree
    usage: dict[str, HyperNodeUsage] = {}
    # lowest tier first, so a HyperNode adds up its children's sums and its own nodes: each
    # node is added once per tree, not once per ancestor (10,000 nodes under 3 tiers: a third)
    for name in sorted(tree.hypernodes, key=lambda n: (tree.hypernodes[n].tier, n)):
        if name == CLUSTER_TOP_HYPERNODE:
            continue
        info = tree.hypernodes[name]
        under = tree.real_nodes.get(name, ())
        allocatable, free = Resource(), Resource()
        rest = set(under)
        children = [usage[c] for c in info.children if c in usage]
        for child in children:
            rest.difference_update(child.nodes)
        if sum(len(child.nodes) for child in children) + len(rest) == len(under):
            for child in children:  # the children's nodes are apart: their sums add up
                allocatable.add(child.allocatable)
                free.add(child.free)
        else:
            rest = set(under)  # a node under two children: count each node once
        for node_name in rest:
            node = snapshot.nodes.get(node_name)
            if node is not None:
                allocatable.add(node.allocatable)
                free.add(node.idle)
        parent = "" if info.parent == CLUSTER_TOP_HYPERNODE else info.parent
        usage[name] = HyperNodeUsage(info, parent, sorted(under), allocatable, free)
    return dict(sorted(usage.items()))


def tree_report(cache: SchedulerCache) -> JSON:
    """The tree with per-HyperNode resources (see the module docstring)."""
    snapshot = cache.snapshot()
    tree = snapshot.tree
    hypernodes: JSON = {}
    for name, use in hypernode_usage(snapshot).items():
        hypernodes[name] = {
            "tier": use.info.tier,
            "tierName": use.info.tier_name,
            "parent": use.parent,
            "children": list(use.info.children),
            "nodes": use.nodes,
            "nodeCount": len(use.nodes),
            "allocatable": _summary(use.allocatable),
            "free": _summary(use.free),
        }
    return {
        "ready": tree.ready,
        "errors": list(tree.errors),
        "quarantined": dict(tree.quarantined),
        "hyperNodes": hypernodes,
    }


def broken_names(report: JSON) -> set[str]:
    """HyperNodes named in the tree's errors."""
    names = set()
    for error in report["errors"]:
        for name in report["hyperNodes"]:
            if name in error.replace(",", " ").split():
                names.add(name)
    return names


def text_tree(report: JSON) -> str:
    """An indented outline, roots first (highest tier), children below."""
    hns = report["hyperNodes"]
    quarantined = report.get("quarantined") or {}
    # Quarantine keeps the tree usable: only the quarantined are at fault, not the HyperNodes
    # their errors also name (the first claimant of a node keeps it and works).
    broken = broken_names(report) if not report["ready"] else set()
    if not report["ready"]:
        state = "NOT READY"
    elif quarantined or report["errors"]:
        state = (
            f"partly usable: {len(quarantined)} HyperNode(s) quarantined (left out of "
            "scheduling), the rest schedules"
        )
    else:
        state = "ready"
    lines = [f"HyperNode tree: {state}"]
    lines += [f"  error: {e}" for e in report["errors"]]
    lines += [
        f"  quarantined: {name} (left out of scheduling: {why})"
        for name, why in sorted(quarantined.items())
    ]
    roots = sorted(
        (n for n, h in hns.items() if not h["parent"]), key=lambda n: (-hns[n]["tier"], n)
    )
    seen: set[str] = set()
    stack = [(n, 0) for n in reversed(roots)]
    while stack:
        name, depth = stack.pop()
        if name in seen:
            lines.append("  " * (depth + 1) + f"{name} (cycle)")
            continue
        seen.add(name)
        h = hns[name]
        tier = f"tier {h['tier']}" + (f"/{h['tierName']}" if h["tierName"] else "")
        free, alloc = h["free"], h["allocatable"]
        flag = "  [BROKEN]" if name in broken else ""
        lines.append(
            "  "
            * (depth + 1)
            + f"{name} ({tier}, {h['nodeCount']} nodes; free cpu {free['cpu']}/{alloc['cpu']}, "
            f"memory {free['memory']}/{alloc['memory']}, gpu {free['gpu']}/{alloc['gpu']}){flag}"
        )
        stack += [(c, depth + 1) for c in reversed(h["children"]) if c in hns]
    orphans = sorted(set(hns) - seen)
    if orphans:
        lines.append("  not reachable from a root: " + ", ".join(orphans))
    return "\n".join(lines) + "\n"
