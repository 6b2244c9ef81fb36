"""What a pending gang is short of, for ``explain``: the PodGroup condition and its parts.

``shortfall(simulator, job_key)`` runs the conf's actions once on a fresh session of the
snapshot (nothing is bound or written; explain's own session stays untouched) and reports:

- ``condition``: the text the scheduler would write into the PodGroup's Unschedulable
  condition for this cycle (``ssn.job_fit``), or ``""`` when the cycle places the gang;
- ``tiers``: for a topology job that did not fit, per allowed tier the HyperNodes in reach
  and the resources the roomiest of them lacks, from ``placement.tier_reports`` — the
  function that builds the condition's ``tier 1: 0/4 fit (nvidia.com/gpu short by 16)``;
- ``subJobs``: per SubJob of a partitioned gang with pods pending, the condition's SubJob
  sentence (``allocate_sub_jobs.sub_job_failure``: per tier under the gang's HyperNode, what
  the SubJob's need lacks);
- ``predicates``: per pending task, the nodes that refuse it and why, in the condition's
  ``F/N nodes are available: <count> <reason>`` form (``fit_errors.nodes_message``), F the
  nodes that take it.

Nothing here composes a message of its own: the lines are the condition's builders.
"""

from __future__ import annotations

from collections import Counter

from volcano_py.api import JSON
from volcano_py.scheduler.actions.allocate_sub_jobs import sub_job_failure
from volcano_py.scheduler.actions.fit_errors import TierReport, nodes_message
from volcano_py.scheduler.actions.placement import tier_reports
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.resource import format_short
from volcano_py.scheduler.framework.session import Session
from volcano_py.scheduler.simulator import Simulator


def _tier_json(report: TierReport) -> JSON:
    return {
        "tier": report.tier,
        "hyperNodes": report.total,
        "fit": report.fit,
        "short": {n: format_short(n, a) for n, a in sorted(report.short.items())},
        "text": report.text(),
    }


def _sub_jobs(ssn: Session, job: JobInfo) -> list[JSON]:
    top = ssn.tree.top
    domain = ssn.hypernodes.get(job.allocated_hypernode, top) if job.allocated_hypernode else top
    out = []
    for uid, sub_job in sorted(job.sub_jobs.items()):
        if not sub_job.pending_tasks():
            continue
        text = sub_job_failure(ssn, sub_job, domain, Counter())
        out.append({"subJob": uid or "<default>", "text": text})
    return out


def predicate_lines(ssn: Session, job: JobInfo) -> dict[str, str]:
    """Per pending task refused by some node: ``F/N nodes are available: ...``.

    F counts the nodes that take the task, so the counts add up to N: a gang that waits
    although each of its pods fits somewhere says how many nodes each could use.
    """
    out: dict[str, str] = {}
    nodes = ssn.node_list()
    for task in job.pending_tasks():
        reasons: Counter[str] = Counter()
        for node in nodes:
            reason = ssn.predicate(task, node)
            if reason is not None:
                reasons[reason] += 1
        if reasons:
            available = len(nodes) - sum(reasons.values())
            out[task.key] = nodes_message(len(nodes), reasons, available)
    return out


def shortfall(simulator: Simulator, job_key: str) -> JSON:
    """The report described in the module docstring."""
    ssn = simulator.open_session()
    try:
        for name in simulator.conf.actions:
            simulator.actions.get(name).execute(ssn)
        job = ssn.jobs[job_key]
        fit = ssn.job_fit.get(job_key)
        if fit is None:
            return {"condition": "", "tiers": [], "subJobs": [], "predicates": {}}
        tiers: list[JSON] = []
        if job.with_network_topology() and not job.topology_error:
            tiers = [_tier_json(r) for r in tier_reports(ssn, job)]
        return {
            "condition": fit.message,
            "reason": fit.reason,
            "tiers": tiers,
            "subJobs": _sub_jobs(ssn, job) if job.policies else [],
            "predicates": predicate_lines(ssn, job),
        }
    finally:
        ssn.close()


def shortfall_lines(report: JSON) -> list[str]:
    """The report for people (``explain -o text``)."""
    if not report:
        return []
    if not report["condition"]:
        return ["shortfall: none, this cycle places the gang"]
    lines = [f"condition: {report['condition']}"]
    lines += [f"short: {t['text']}" for t in report["tiers"]]
    for sub in report["subJobs"]:
        lines.append(f"short: {sub['text']}")
    lines += [f"unfit: task {task}: {text}" for task, text in report["predicates"].items()]
    return lines
