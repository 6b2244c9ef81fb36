"""What ``volcano-py explain`` shows about a partitioned gang's SubJobs (nothing is allocated).

For each SubJob: its pods, its allocated HyperNode (recovered from where its pods run), and
its gradients and HyperNode scores inside the domain the job would try first — the job's
search root when part of it is placed, else the first candidate of its first gradient
(lowest tier, first by name). Order: the order a trial places them in.
"""

from __future__ import annotations

from volcano_py.api import JSON
from volcano_py.scheduler.actions.allocate_sub_jobs import ordered_sub_jobs
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.framework.session import Session

DEFAULT_SUB_JOB_KEY = "<default>"


def sub_job_report(ssn: Session, job: JobInfo) -> JSON:
    """``{"domain", "subJobs": {id: {"pods", "allocatedHyperNode", "gradients", "scores"}}}``."""
    if not job.policies or job.topology_error:
        return {}
    gradients = ssn.hypernode_gradient_for_job(job, ssn.tree.top)
    domain = None
    for gradient in gradients:
        if gradient:
            domain = min(gradient, key=lambda hn: hn.name)
            break
    waiting = {sj.uid for sj in ordered_sub_jobs(job)}
    order = ordered_sub_jobs(job) + sorted(
        (sj for sj in job.sub_jobs.values() if sj.uid not in waiting), key=lambda sj: sj.uid
    )
    report: JSON = {}
    for sub_job in order:
        entry: JSON = {
            "pods": sorted(t.name for t in sub_job.tasks.values()),
            "ready": sub_job.is_ready(),
            "subGroupSize": sub_job.min_available,
            "allocatedHyperNode": sub_job.allocated_hypernode,
            "gradients": [],
            "hyperNodeScores": {},
        }
        if domain is not None and sub_job.pending_tasks():
            for gradient in ssn.hypernode_gradient_for_sub_job(job, sub_job, domain):
                names = [hn.name for hn in gradient]
                entry["gradients"].append(
                    {"tier": gradient[0].tier if gradient else None, "hyperNodes": names}
                )
                candidates = {n: ssn.nodes_in(n) for n in names}
                entry["hyperNodeScores"].update(ssn.hypernode_order_map(job, candidates, sub_job))
        report[sub_job.uid or DEFAULT_SUB_JOB_KEY] = entry
    return {"domain": domain.name if domain is not None else "", "subJobs": report}


def sub_job_lines(report: JSON) -> list[str]:
    """The report for people."""
    if not report:
        return []
    lines = [f"SubJobs (gradients inside domain {report['domain'] or '-'}):"]
    for uid, entry in report["subJobs"].items():
        state = "ready" if entry["ready"] else f"needs {entry['subGroupSize']}"
        lines.append(
            f"  {uid}: {len(entry['pods'])} pods ({state}), "
            f"allocatedHyperNode={entry['allocatedHyperNode'] or '-'}: {', '.join(entry['pods'])}"
        )
        scores = entry["hyperNodeScores"]
        for gradient in entry["gradients"]:
            ranked = sorted(gradient["hyperNodes"], key=lambda n: (-scores.get(n, 0.0), n))
            shown = ", ".join(f"{n} ({scores.get(n, 0.0):.1f})" for n in ranked)
            lines.append(f"    gradient tier {gradient['tier']}: {shown}")
    return lines
