"""``volcano-py explain NS/NAME [--kubeconfig FILE | --cluster FILE] [-o json|text]``.

The debugging guide of the topology design doc as a command. ``NS/NAME`` is what the user
applied: a Volcano Job, Deployment, StatefulSet, batch Job, RayCluster, PyTorchJob,
LeaderWorkerSet ... or the PodGroup itself (``explain_target``: the name is followed down the
owner references to its gang; ``--job NS/PODGROUP`` is the older spelling). Without
``--cluster`` it reads the live cluster (``--kubeconfig`` as ``tree`` takes it, then
``$KUBECONFIG``, ``~/.kube/config``, in-cluster; ``--api-wait``) and the scheduler's conf
from ``volcano-scheduler-configmap`` (``--scheduler-namespace``) as the manager reads it,
unless ``--scheduler-conf`` names a file. It opens one session on
that snapshot and, binding nothing, prints first one line saying what the gang waits for
(``summary``: the shortfall in each resource's own unit, ``nvidia.com/gpu short by 8``, or
that it is placed), then for the job:

- its network topology (mode, highest tier after tierName translation, any topology error)
  and allocated HyperNode (annotation, or recovered from its bound pods);
- the tiers the cluster's HyperNodes have (the virtual ``<cluster-top-hypernode>`` left out);
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

JSON keys: ``summary``, ``target``, ``via`` (the owner chain followed), ``workload`` (a
Kubernetes PodGroup's or CompositePodGroup's Job or Workload, ``"Job trainer"``; "" for
others), ``tiers``,
``highestTierAllowed``, ``allocatedHyperNode``, ``gradients`` (``[{"tier", "hyperNodes"}]``),
``hyperNodeScores``, ``tasks``
(``{"<ns>/<pod>": {"nodes": {"<node>": {"feasible", "reason", "scores", "total"}}}}``),
``evictions`` (``{"<action>": [{"hyperNode", "tier", "lowerBound", "feasible", "victims",
"cost", "note"}]}``), ``shortfall`` (``{"condition", "reason", "tiers": [{"tier",
"hyperNodes", "fit", "short", "text"}], "subJobs": [{"subJob", "text"}], "predicates":
{"<ns>/<pod>": "0/N nodes are available: ..."}}``). When the name stands for several gangs
(a Deployment mid-rollout has one per ReplicaSet), each is explained: text one after the
other, JSON ``{"gangs": [report, ...]}``.
Exit 0; 1 when no gang has that name (or the API server does not answer within
``--api-wait``); 2 on unusable input.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from typing import Any

import orjson

from volcano_py.api import JSON
from volcano_py.api.constants import CLUSTER_TOP_HYPERNODE
from volcano_py.api.native_groups import view_workload
from volcano_py.commands.cluster_access import CommandError, add_api_wait_argument
from volcano_py.commands.explain_shortfall import shortfall, shortfall_lines
from volcano_py.commands.explain_target import Gang, find_gangs, live_snapshot
from volcano_py.commands.snapshot_args import add_snapshot_arguments, load_simulator
from volcano_py.scheduler.actions.eviction import eviction_report
from volcano_py.scheduler.actions.preempt import victim_scope
from volcano_py.scheduler.framework.framework import close_session
from volcano_py.scheduler.framework.session import Session
from volcano_py.scheduler.scheduler import EVICTING_ACTIONS
from volcano_py.scheduler.simulator import KINDS, Simulator, SnapshotError, load_objects
from volcano_py.scheduler.sub_job_report import sub_job_lines, sub_job_report


def add_parser(subparsers: Any) -> None:
    """Register ``explain``."""
    parser = subparsers.add_parser(
        "explain",
        help="show how the scheduler sees one job (gradients, scores, predicates)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "target",
        nargs="?",
        metavar="NS/NAME",
        help="the workload (Volcano Job, Deployment, StatefulSet, Job, RayCluster, ...) or "
        "PodGroup",
    )
    add_snapshot_arguments(parser, live=True)
    parser.add_argument("--kubeconfig", help="kubeconfig for the live cluster")
    add_api_wait_argument(parser)
    parser.add_argument(
        "--scheduler-namespace",
        default="volcano-system",
        metavar="NS",
        help="live: read volcano-scheduler-configmap there, as the manager does, unless "
        "--scheduler-conf is given (default volcano-system; none: the built-in tiers)",
    )
    parser.add_argument("--job", metavar="NS/PODGROUP", help="the PodGroup (older spelling)")
    parser.add_argument("-o", "--output", choices=("json", "text"), default="json")
    parser.set_defaults(handler=run)


def _say(message: str) -> None:
    sys.stderr.write(f"volcano-py explain: {message}\n")


def run(args: argparse.Namespace) -> int:
    """Explain the gang(s) of one workload."""
    target = args.target or args.job
    namespace, _, name = (target or "").rpartition("/")
    if not namespace or not name:
        sys.stderr.write(f"error: explain needs NS/NAME, got {target!r}\n")
        return 2
    where = args.cluster or "the cluster"
    conf_text = None
    workloads = False
    try:
        if args.cluster:
            objects = load_objects(args.cluster)
        else:
            live = live_snapshot(
                args.kubeconfig, args.api_wait, namespace, args.scheduler_namespace, _say
            )
            objects, conf_text = live.objects, live.scheduler_conf
            workloads = live.workloads_served
    except (SnapshotError, OSError) as e:
        sys.stderr.write(f"error: {e}\n")
        return 2
    except CommandError as e:
        sys.stderr.write(f"error: {e}\n")
        return e.exit_code
    kept = [o for o in objects if o.get("kind") in KINDS]
    simulator = load_simulator(args, kept, conf_text, workloads)
    if simulator is None:
        return 2
    # a Job's chain is told as Job -> PodGroup: the Workload between them is read for the
    # scheduler's check only
    gangs = find_gangs(namespace, name, [o for o in objects if o.get("kind") != "Workload"])
    ssn = simulator.open_session()
    every = list(ssn.jobs)
    close_session(ssn)
    known = sorted(key for key in every if key.startswith(f"{namespace}/"))
    gangs = [g for g in gangs if f"{namespace}/{g.podgroup}" in known] or [
        Gang(name, f"PodGroup {name}") for key in known if key == target
    ]
    if not gangs:
        sys.stderr.write(
            f"error: no PodGroup {target} in {where}, and none owned by a workload of that "
            f"name ({_known(known, namespace, every)})\n"
        )
        return 1
    reports = [_report(simulator, f"{namespace}/{g.podgroup}", target, g.via) for g in gangs]
    if args.output == "json":
        out: JSON = reports[0] if len(reports) == 1 else {"gangs": reports}
        sys.stdout.write(orjson.dumps(out, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        sys.stdout.write("\n".join(text(report) for report in reports))
    return 0


def _known(known: list[str], namespace: str, jobs: Iterable[str]) -> str:
    """The PodGroups of ``namespace``, or the namespaces that have some (10 at most)."""
    if known:
        shown = ", ".join(known[:10]) + (", ..." if len(known) > 10 else "")
        return f"PodGroups in {namespace}: {shown}"
    spaces = sorted({key.split("/", 1)[0] for key in jobs})
    shown = ", ".join(spaces[:10]) + (", ..." if len(spaces) > 10 else "")
    return f"no PodGroup in {namespace}; namespaces with PodGroups: {shown or 'none'}"


def _report(simulator: Simulator, job_key: str, target: str, via: str) -> JSON:
    ssn = simulator.open_session()
    try:
        report = explain(ssn, job_key)
        report["evictions"] = evictions(ssn, job_key, simulator.conf.actions)
    finally:
        close_session(ssn)
    report["shortfall"] = shortfall(simulator, job_key)
    head = {"summary": summary(report), "target": target, "via": via}
    return head | report


def summary(report: JSON) -> str:
    """One line: what the gang waits for, in each resource's own unit, or that it is placed."""
    job = report["job"]
    found = report["shortfall"]
    if not found.get("condition"):
        pending = len(report["tasks"])
        if pending:
            return f"{job}: waits for nothing: this cycle places its {pending} pending pod(s)"
        return f"{job}: placed, no pod pending"
    tiers = [t for t in found["tiers"] if t["short"]]
    if tiers:
        roomiest = tiers[-1]
        short = ", ".join(f"{n} short by {a}" for n, a in roomiest["short"].items())
        return (
            f"{job}: waits for {short} (in the roomiest tier-{roomiest['tier']} HyperNode "
            "it may use)"
        )
    return f"{job}: waits: {found['condition']}"


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
                # a plugin may score per node and over all candidates (nodeorder): the sum
                by_plugin = nodes[node.name]["scores"]
                by_plugin[plugin] = by_plugin.get(plugin, 0.0) + batch.get(node.name, 0.0)
        for entry in nodes.values():
            entry["total"] = sum(entry["scores"].values()) if entry["feasible"] else None
        tasks[task.key] = {"nodes": nodes}
    return {
        "job": job_key,
        "workload": view_workload(job.podgroup),
        "mode": str(job.mode) if job.mode else "",
        "hardMode": hard,
        "topologyError": job.topology_error,
        "hyperNodesReady": ssn.hypernodes_ready,
        "tiers": [
            tier
            for tier in ssn.hypernode_tiers
            if any(n != CLUSTER_TOP_HYPERNODE for n in ssn.hypernodes_by_tier.get(tier, ()))
        ],
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
        report.get("summary") or f"{report['job']}",
        *([f"{report['target']}: {report['via']}"] if report.get("via") else []),
        *([f"{report['job']}: the gang of {report['workload']}"] if report.get("workload") else []),
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
