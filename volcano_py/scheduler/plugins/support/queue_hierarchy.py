"""Volcano's hierarchical queue shares (``capacity`` with ``enableHierarchy: true``).

``apply_hierarchy(attrs, parents, total)`` rewrites ``deserved``, ``guarantee``, capability
and real capability of every queue under ``root``, top down, as Volcano's
``checkHierarchicalQueue`` does:

- ``root``'s capability is what its spec says, a dimension it does not name unlimited; its
  real capability is its capability; its guarantee and deserved are its children's, summed;
- a child's deserved is at least its guarantee; a dimension its capability does not name is
  its parent's;
- a child's real capability is what its parent's real capability leaves after all its
  siblings' guarantees (its own included), plus its own guarantee, capped by its capability.

So guarantees and deserved shares add up down the tree, and each level shares what its
parent really has. A queue outside the tree (a parent loop the chains cut) keeps the flat
figures.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from volcano_py.api.queue import ROOT_QUEUE
from volcano_py.scheduler.api.resource import CPU, MEMORY
from volcano_py.scheduler.plugins.support.queue_attr import Amounts, QueueAttr, amounts


def apply_hierarchy(
    attrs: Mapping[str, QueueAttr], parents: Mapping[str, str], total: Amounts
) -> None:
    """Rewrite the shares of the queues under ``root``; ``parents``: queue -> its parent."""
    root = attrs.get(ROOT_QUEUE)
    if root is None:
        return
    children: dict[str, list[QueueAttr]] = {}
    for name, parent in sorted(parents.items()):
        if parent in attrs and name != ROOT_QUEUE:
            children.setdefault(parent, []).append(attrs[name])
    capability = dict(root.capability or {})
    for name in {*total, CPU, MEMORY}:
        capability.setdefault(name, math.inf)
    root.capability = capability
    root.real_capability = dict(capability)
    pending, seen = [root], {ROOT_QUEUE}
    while pending:
        attr = pending.pop()
        kids = [k for k in children.get(attr.name, []) if k.name not in seen]
        _share_out(attr, kids, is_root=attr is root)
        seen.update(k.name for k in kids)
        pending.extend(kids)


def _add(into: Amounts, more: Mapping[str, float]) -> None:
    for name, amount in more.items():
        into[name] = into.get(name, 0.0) + amount


def _share_out(attr: QueueAttr, kids: list[QueueAttr], *, is_root: bool) -> None:
    parent_cap = attr.capability or {}
    guarantees: Amounts = {}
    deserved: Amounts = {}
    for kid in kids:
        own = amounts(kid.info.deserved)
        kid.deserved = {
            n: max(own.get(n, 0.0), kid.guarantee.get(n, 0.0)) for n in {*own, *kid.guarantee}
        }
        _add(deserved, kid.deserved)
        _add(guarantees, kid.guarantee)
        cap = dict(kid.capability or {})
        for name, amount in parent_cap.items():
            cap.setdefault(name, amount)
        kid.capability = cap
    if is_root:
        attr.guarantee, attr.deserved = guarantees, deserved
    real_parent = attr.real_capability or {}
    for kid in kids:
        real = {
            n: max(0.0, real_parent.get(n, math.inf) - guarantees.get(n, 0.0))
            + kid.guarantee.get(n, 0.0)
            for n in {*real_parent, *kid.guarantee}
        }
        for name, cap_amount in (kid.capability or {}).items():
            real[name] = min(real.get(name, cap_amount), cap_amount)
        kid.real_capability = real
