"""``backfill``: place best-effort tasks (no requests at all) that allocate left pending.

Volcano's backfill: for every schedulable job (Inqueue or Running, valid, its queue Open and
not overused), each pending task whose request is empty goes to the feasible node with the
best score — the same predicates and scores as allocate, over every node (no topology
search: a best-effort pod takes no resources a gang could need). The job's placements are
committed when the job is ready (gang), else discarded. A pod with DRA resource claims is
never placed (``dra_claims``).
"""

from __future__ import annotations

from collections import Counter

from volcano_py.scheduler.actions.allocate import SCHEDULABLE_PHASES
from volcano_py.scheduler.actions.dra_claims import claim_names
from volcano_py.scheduler.actions.placement import select_node
from volcano_py.scheduler.actions.queue_quota import queue_refusal
from volcano_py.scheduler.framework.session import Session


class BackfillAction:
    """Best-effort tasks onto any feasible node."""

    name = "backfill"

    def execute(self, ssn: Session) -> None:
        """One pass over the jobs with best-effort pending tasks."""
        jobs = [
            job
            for job in ssn.jobs.values()
            if job.phase in SCHEDULABLE_PHASES
            and any(t.resreq.is_empty() for t in job.pending_tasks())
        ]
        jobs.sort(key=ssn.job_order_key())
        for job in jobs:
            if ssn.job_valid(job) is not None or queue_refusal(ssn, job) is not None:
                continue
            stmt = ssn.statement()
            for task in job.pending_tasks():
                if not task.resreq.is_empty() or claim_names(task):
                    continue
                nodes = ssn.node_list()
                index = select_node(ssn, task, nodes, Counter())
                if index is not None:
                    stmt.allocate(task, nodes[index].name)
            if len(stmt) and ssn.job_ready(job):
                stmt.commit()
            else:
                stmt.discard()
