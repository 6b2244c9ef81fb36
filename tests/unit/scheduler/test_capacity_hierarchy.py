"""capacity with ``enableHierarchy: true``: shares add up down the tree as Volcano computes."""

from __future__ import annotations

import math
from typing import Any

from tests.unit.scheduler.helpers import session
from tests.unit.scheduler.objects import node, queue
from volcano_py.scheduler.framework.framework import close_session

CONF = """
actions: "enqueue, allocate"
tiers:
- plugins:
  - name: gang
  - name: capacity
    enableHierarchy: %s
"""


def _attrs(hierarchy: bool) -> dict[str, Any]:
    objects = [
        node("n1", {"cpu": 16}),
        queue("eng", parent="root", capability={"cpu": "8"}, deserved={"cpu": "4"},
              guarantee={"cpu": "4"}),
        queue("a", parent="eng", deserved={"cpu": "3"}, guarantee={"cpu": "3"}),
        queue("c", parent="eng", deserved={"cpu": "1"}),
        queue("ops", parent="root", deserved={"cpu": "2"}),
    ]  # fmt: skip
    ssn = session(objects, CONF % ("true" if hierarchy else "false"))
    [plugin] = [p for p in ssn.plugins if p.name == "capacity"]
    attrs: dict[str, Any] = dict(plugin.attrs)  # type: ignore[attr-defined]
    close_session(ssn)
    return attrs


def test_children_share_what_their_parent_really_has_after_sibling_guarantees() -> None:
    attrs = _attrs(True)
    root, eng, a, c, ops = (attrs[n] for n in ("root", "eng", "a", "c", "ops"))
    assert root.guarantee == {"cpu": 4000.0}  # the children's guarantees, summed
    assert root.deserved == {"cpu": 6000.0}  # eng 4 + ops 2
    assert root.real_capability["cpu"] == math.inf  # root names no capability
    assert eng.real_capability["cpu"] == 8000.0  # its capability
    assert a.real_capability["cpu"] == 8000.0  # (8 - 3) + its own 3, capped by eng's 8
    assert c.real_capability["cpu"] == 5000.0  # (8 - 3) + 0: a's guarantee is a's
    assert c.capability["cpu"] == 8000.0  # the dimension it does not name is eng's
    assert c.deserved == {"cpu": 1000.0}
    assert ops.real_capability["cpu"] == math.inf  # root's unlimited capability


def test_without_the_switch_capacity_stays_flat() -> None:
    attrs = _attrs(False)
    assert attrs["c"].real_capability["cpu"] == 16000.0 - 7000.0  # the cluster minus all guarantees
