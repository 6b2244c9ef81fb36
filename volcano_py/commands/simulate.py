"""``volcano-py simulate --cluster FILE [--scheduler-conf FILE] [-o json|yaml|table]``.

Runs the real scheduler — same cache, session, actions and plugins — in process on a snapshot
of Nodes, HyperNodes, PodGroups and Pods (a ``List`` or a multi-document YAML/JSON file; pods
with ``spec.nodeName`` are already bound and use their node) until a cycle changes nothing,
then prints what it bound and where every PodGroup ended up::

    {"bindings": {"<ns>/<pod>": "<node>"},
     "podGroups": {"<ns>/<name>": {"phase", "allocatedHyperNode", "conditions"}},
     "evictions": {"<ns>/<pod>": "<preemptor ns/podgroup>"}}

``evictions``: the pods ``preempt``/``reclaim`` evicted (the simulated eviction succeeds at
once unless a ``PodDisruptionBudget`` in the file forbids it).

``-o table`` is for people. Exit 0; 2 when the cluster file or the conf cannot be used.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

import orjson
import yaml

from volcano_py.commands.snapshot_args import add_snapshot_arguments, load_simulator
from volcano_py.scheduler.simulator import SimulationResult


def add_parser(subparsers: Any) -> None:
    """Register ``simulate``."""
    parser = subparsers.add_parser(
        "simulate",
        help="run the scheduler in process on a cluster snapshot",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_snapshot_arguments(parser)
    parser.add_argument("-o", "--output", choices=("json", "yaml", "table"), default="json")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Simulate and print."""
    simulator = load_simulator(args)
    if simulator is None:
        return 2
    result = simulator.run()
    sys.stdout.write(render(result, args.output))
    return 0


def render(result: SimulationResult, output: str) -> str:
    """The result as JSON, YAML or a table."""
    data = result.to_json()
    if output == "json":
        return orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n"
    if output == "yaml":
        return str(yaml.safe_dump(_plain(data), sort_keys=False))
    return table(result)


def _plain(value: Any) -> Any:
    """Enums and other str subclasses as plain strings (safe_dump refuses them)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, str):
        return str(value)
    return value


def table(result: SimulationResult) -> str:
    """PodGroups, then bindings, as aligned columns."""
    lines = []
    rows = [("PODGROUP", "PHASE", "HYPERNODE", "WHY")]
    for key, pg in result.podgroups.items():
        why = ""
        for cond in pg["conditions"]:
            if cond["type"] == "Unschedulable" and cond["status"] == "True":
                why = cond["message"]
        name = f"{key} ({pg['workload']})" if pg.get("workload") else key
        rows.append((name, str(pg["phase"]), pg["allocatedHyperNode"] or "-", why))
    lines += _columns(rows, last_free=True)
    lines.append("")
    binds = [("POD", "NODE"), *sorted(result.bindings.items())]
    lines += _columns(binds)
    if result.evictions:
        lines.append("")
        lines += _columns([("EVICTED", "FOR"), *sorted(result.evictions.items())])
    return "\n".join(lines) + "\n"


def _columns(rows: Sequence[tuple[str, ...]], last_free: bool = False) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for row in rows:
        cells = [
            cell if (last_free and i == len(row) - 1) else cell.ljust(widths[i])
            for i, cell in enumerate(row)
        ]
        out.append("  ".join(cells).rstrip())
    return out
