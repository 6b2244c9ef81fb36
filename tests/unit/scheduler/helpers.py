"""Shared helpers: a simulator or an open session on a compact cluster."""

from __future__ import annotations

from typing import Any

from tests.unit.scheduler.objects import hypernode, node
from volcano_py.scheduler.framework.conf import SchedulerConf
from volcano_py.scheduler.framework.session import Session
from volcano_py.scheduler.simulator import Simulator

JSON = dict[str, Any]


def gpu_cluster(gpus: int = 4) -> list[JSON]:
    """The design doc's example: 8 nodes, 4 ToRs (tier 1), 2 spines (tier 2)."""
    objects = [node(f"node-{i}", {"nvidia.com/gpu": gpus}) for i in range(1, 9)]
    for t in range(1, 5):
        objects.append(
            hypernode(f"tor-{t}", 1, nodes=[f"node-{2 * t - 1}", f"node-{2 * t}"], tier_name="tor")
        )
    objects.append(hypernode("spine-1", 2, children=["tor-1", "tor-2"], tier_name="spine"))
    objects.append(hypernode("spine-2", 2, children=["tor-3", "tor-4"], tier_name="spine"))
    return objects


def session(objects: list[JSON], conf_text: str | None = None) -> Session:
    """An open session on ``objects`` (default conf unless ``conf_text``)."""
    conf = None
    if conf_text is not None:
        from volcano_py.scheduler.framework.registry import load_conf
        from volcano_py.scheduler.scheduler import builtin_registries

        plugins, actions = builtin_registries()
        conf = load_conf(conf_text, plugins, actions)
    return Simulator(objects, conf).open_session()


def filters_only_conf(nodeorder_arguments: dict[str, int] | None = None) -> SchedulerConf:
    """enqueue + allocate with gang, predicates and nodeorder only (no queue plugin).

    For cases about one node filter or score: a pod too big for the cluster meets the node
    filter rather than a queue's quota. ``nodeorder_arguments``: nodeorder's arguments.
    """
    from volcano_py.scheduler.framework.registry import load_conf
    from volcano_py.scheduler.scheduler import builtin_registries

    arguments = "".join(f"\n      {k}: {v}" for k, v in (nodeorder_arguments or {}).items())
    text = (
        'actions: "enqueue, allocate"\ntiers:\n- plugins:\n  - name: gang\n'
        "  - name: predicates\n  - name: nodeorder"
        + (f"\n    arguments:{arguments}" if arguments else "")
        + "\n"
    )
    return load_conf(text, *builtin_registries())
