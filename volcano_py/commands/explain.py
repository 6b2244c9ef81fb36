"""``volcano-py explain --cluster FILE --job NS/PODGROUP [--scheduler-conf FILE] [-o json|text]``.

The debugging guide of the topology design doc as a command. It opens one session on the
snapshot and, binding nothing, prints for the job:

- its network topology (mode, highest tier after tierName translation, any topology error)
  and allocated HyperNode (annotation, or recovered from its bound pods);
- the session's tiers (the virtual ``<cluster-top-hypernode>`` included);
- the hypernode gradients (tier → HyperNodes, after the eligibility pre-filter) and the
  hypernode order scores of those HyperNodes;
- for each pending task, every node's predicate result (with the reason) and its score from
  each node-order plugin and in total — the values the plugins hand the framework;
- when the conf runs ``preempt``/``reclaim`` (or ``gangpreempt``/``gangreclaim``), per
  action and per candidate domain (cheapest lower bound first): the victims it would evict,
  the cost (pods, highest victim priority, gangs touched) and why a domain is out;
- what the gang is short of (``explain_shortfall``): the PodGroup condition this cycle would
  write, per tier the resources the roomiest HyperNode lacks, per SubJob the same, and per
  pending task how many nodes refuse it and why.

JSON keys: ``tiers``, ``highestTierAllowed``, ``allocatedHyperNode``, ``gradients``
(``[{"tier", "hyperNodes"}]``), ``hyperNodeScores``, ``tasks``
(``{"<ns>/<pod>": {"nodes": {"<node>": {"feasible", "reason", "scores", "total"}}}}``),
``evictions`` (``{"<action>": [{"hyperNode", "tier", "lowerBound", "feasible", "victims",
"cost", "note"}]}``), ``shortfall`` (``{"condition", "reason", "tiers": [{"tier",
"hyperNodes", "fit", "short", "text"}], "subJobs": [{"subJob", "text"}], "predicates":
{"<ns>/<pod>": "0/N nodes are available: ..."}}``).
Exit 0; 1 when the job is not in the snapshot; 2 on unusable input.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import orjson

from volcano_py.api import JSON
from volcano_py.commands.explain_shortfall import shortfall, shortfall_lines
from volcano_py.commands.snapshot_args import add_snapshot_arguments, load_simulator
from volcano_py.scheduler.actions.eviction import eviction_report
from volcano_py.scheduler.actions.preempt import victim_scope
from volcano_py.scheduler.framework.framework import close_session
from volcano_py.scheduler.framework.session import Session
from volcano_py.scheduler.scheduler import EVICTING_ACTIONS
from volcano_py.scheduler.sub_job_report import sub_job_lines, sub_job_report


def add_parser(subparsers: Any) -> None:
    """Register ``explain``."""
    parser = subparsers.add_parser(
        "explain",
        help="show how the scheduler sees one job (gradients, scores, predicates)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_snapshot_arguments(parser)
    parser.add_argument("--job", required=True, metavar="NS/PODGROUP", help="the PodGroup")
    parser.add_argument("-o", "--output", choices=("json", "text"), default="json")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Explain one job."""
    simulator = load_simulator(args)
    if simulator is None:
        return 2
    ssn = simulator.open_session()
    try:
        if args.job not in ssn.jobs:
            known = ", ".join(sorted(ssn.jobs)) or "none"
            sys.stderr.write(f"error: no PodGroup {args.job} in {args.cluster} (known: {known})\n")
            return 1
        report = explain(ssn, args.job)
        report["evictions"] = evictions(ssn, args.job, simulator.conf.actions)
    finally:
        close_session(ssn)
    report["shortfall"] = shortfall(simulator, args.job)
    if args.output == "json":
        sys.stdout.write(orjson.dumps(report, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        sys.stdout.write(text(report))
    return 0


def explain(ssn: Session, job_key: str) -> JSON:
    """The report for one job of an open session (nothing is allocated)."""
    job = ssn.jobs[job_key]
    hard, highest = job.is_hard_topology_mode()
    gradients: list[JSON] = []
    scores: dict[str, float] = {}
    if job.with_network_topology() and not job.topology_error:
        for gradient in ssn.hypernode_gradient_for_job(job, ssn.tree.top):
            names = [hn.name for hn in gradient]
            gradients.append({"tier": gradient[0].tier if gradient else None, "hyperNodes": names})
            scores.update(ssn.hypernode_order_map(job, {n: ssn.nodes_in(n) for n in names}))
    tasks: JSON = {}
    for task in job.pending_tasks():
        nodes: JSON = {}
        feasible = []
        for node in ssn.node_list():
            reason = ssn.predicate(task, node)
            nodes[node.name] = {"feasible": reason is None, "reason": reason or "", "scores": {}}
            if reason is None:
                feasible.append(node)
                nodes[node.name]["scores"] = ssn.node_order_scores(task, node)
        for plugin, batch in ssn.batch_node_scores(task, feasible).items():
            for node in feasible:
                nodes[node.name]["scores"][plugin] = batch.get(node.name, 0.0)
        for entry in nodes.values():
            entry["total"] = sum(entry["scores"].values()) if entry["feasible"] else None
        tasks[task.key] = {"nodes": nodes}
    return {
        "job": job_key,
        "mode": str(job.mode) if job.mode else "",
        "hardMode": hard,
        "topologyError": job.topology_error,
        "hyperNodesReady": ssn.hypernodes_ready,
        "tiers": list(ssn.hypernode_tiers),
        "highestTierAllowed": highest if hard else job.highest_tier,
        "allocatedHyperNode": job.allocated_hypernode,
        "gradients": gradients,
        "hyperNodeScores": dict(sorted(scores.items())),
        "subJobs": sub_job_report(ssn, job),
        "tasks": tasks,
    }


def evictions(ssn: Session, job_key: str, actions: tuple[str, ...]) -> JSON:
    """Per eviction action of the conf, the candidate domains for the job (nothing written)."""
    out: JSON = {}
    for action in actions:
        if action in EVICTING_ACTIONS:
            victim_fn, scope = victim_scope(ssn, action)
            out[action] = eviction_report(ssn, ssn.jobs[job_key], victim_fn, scope)
    return out


def text(report: JSON) -> str:
    """The report for people."""
    lines = [
        f"job {report['job']}: mode={report['mode'] or 'none'} "
        f"highestTierAllowed={report['highestTierAllowed']} "
        f"allocatedHyperNode={report['allocatedHyperNode'] or '-'}",
        f"tiers: {report['tiers']} (HyperNodes ready: {report['hyperNodesReady']})",
    ]
    lines += shortfall_lines(report.get("shortfall") or {})
    if report["topologyError"]:
        lines.append(f"topology error: {report['topologyError']}")
    elif report["mode"] and not report["gradients"]:
        lines.append("gradients: no HyperNode within the allowed tier passes the pre-filter")
    for gradient in report["gradients"]:
        ranked = sorted(
            gradient["hyperNodes"], key=lambda n: (-report["hyperNodeScores"].get(n, 0.0), n)
        )
        shown = ", ".join(f"{n} ({report['hyperNodeScores'].get(n, 0.0):.1f})" for n in ranked)
        lines.append(f"gradient tier {gradient['tier']}: {shown}")
    lines += sub_job_lines(report.get("subJobs") or {})
    for task, entry in report["tasks"].items():
        lines.append(f"task {task}:")
        ranked = sorted(
            entry["nodes"].items(),
            key=lambda kv: (not kv[1]["feasible"], -(kv[1]["total"] or 0.0), kv[0]),
        )
        for node, info in ranked:
            if info["feasible"]:
                parts = ", ".join(f"{p}={s:.1f}" for p, s in info["scores"].items())
                lines.append(f"  {node}: total {info['total']:.1f} ({parts})")
            else:
                lines.append(f"  {node}: not feasible: {info['reason']}")
    for action, domains in (report.get("evictions") or {}).items():
        lines.append(f"{action}: {len(domains)} candidate domain(s)")
        for d in domains:
            head = f"  {d['hyperNode']} (tier {d['tier']}, lower bound {d['lowerBound']})"
            if "cost" in d:
                c = d["cost"]
                head += (
                    f": {'feasible' if d['feasible'] else 'not feasible'}, evicts {c['pods']} "
                    f"pod(s) of {c['gangs']} job(s), max priority {c['maxVictimPriority']}"
                )
            if d.get("note"):
                head += f" [{d['note']}]"
            lines.append(head)
            if d.get("victims"):
                lines.append("    victims: " + ", ".join(d["victims"]))
    return "\n".join(lines) + "\n"
