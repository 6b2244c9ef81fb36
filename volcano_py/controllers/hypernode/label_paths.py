"""Label paths: which nodes share which label values, the input of ``label`` discovery.

A node's path for a topology type is the values of the type's label keys from tier 1 up, cut
at the first key the node lacks. ``node_paths`` groups the nodes by path (the per-node work
is a few dict lookups; the groups are then built once per distinct path, hundreds, not once
per node, thousands); ``complete_paths`` puts a path cut short by a missing upper label under
the one longer path it belongs to. ``relabelled`` tells which of the source's HyperNodes a
result leaves out because their nodes were relabelled, not lost.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from volcano_py.api.meta import name_of
from volcano_py.controllers.hypernode.plan import member_names, tier_of

# type name -> path (label values, tier 1 first) -> names of the nodes on it
Paths = dict[str, dict[tuple[str, ...], list[str]]]


def node_paths(
    nodes: Iterable[Mapping[str, Any]], levels: Sequence[tuple[str, tuple[str, ...]]]
) -> Paths:
    """The nodes by path, per type (``levels``: each type's name and label keys)."""
    paths: Paths = {name: {} for name, _ in levels}
    for node in nodes:
        meta = node.get("metadata") or {}
        labels = meta.get("labels")
        if not labels:
            continue
        for type_name, keys in levels:
            values: list[str] = []
            for key in keys:
                value = labels.get(key)
                if value is None:
                    break
                values.append(value)
            if values:
                by_path = paths[type_name]
                path = tuple(values)
                holders = by_path.get(path)
                if holders is None:
                    by_path[path] = [meta.get("name", "")]
                else:
                    holders.append(meta.get("name", ""))
    return paths


def relabelled(
    owned: Iterable[Mapping[str, Any]], result: Iterable[Mapping[str, Any]], nodes: set[str]
) -> frozenset[str]:
    """The ``owned`` HyperNodes ``result`` leaves out on purpose: their nodes were relabelled.

    The label source's answer is a function of the labels of the nodes it can see, so a rack
    whose nodes are all still listed (``nodes``) and that the result no longer has was
    relabelled (Volcano's e2e removes the labels and expects the racks gone). A rack with a
    node that is no longer listed is not explained (nodes lost, or a cache that answers
    nothing). A higher tier is explained when each of its members is still in the result,
    explained, or not owned.
    """
    wanted = {name_of(h) for h in result}
    by_name = {name_of(h): h for h in owned}
    explained: set[str] = set()
    for name, obj in sorted(by_name.items(), key=lambda item: tier_of(item[1])):
        if name in wanted:
            continue
        members = member_names(obj)
        if tier_of(obj) == 1:
            if all(m in nodes for m in members):
                explained.add(name)
        elif all(m in wanted or m in explained or m not in by_name for m in members):
            explained.add(name)
    return frozenset(explained)


def complete_paths(paths: set[tuple[str, ...]]) -> dict[tuple[str, ...], tuple[str, ...]]:
    """For paths cut short by a missing upper label, the one longer path they belong to.

    A node without a label above its rack still belongs to that rack: when every longer path
    that starts with the short one lies on one chain (``(s0,)`` under ``(s0, s2)``), the
    short path becomes the longest of them. When two labelled parents conflict (``(s0, s2)``
    and ``(s0, s3)``) the short path stays as it is, and so do the conflicting ones.
    """
    extensions: dict[tuple[str, ...], list[tuple[str, ...]]] = defaultdict(list)
    for path in paths:
        for k in range(1, len(path)):
            extensions[path[:k]].append(path)
    completed: dict[tuple[str, ...], tuple[str, ...]] = {}
    for short, longer in extensions.items():
        if short not in paths:
            continue
        longest = max(longer, key=len)
        if all(longest[: len(other)] == other for other in longer):
            completed[short] = longest
    return completed
