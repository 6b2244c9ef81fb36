"""Writing a cycle's preempt/reclaim decisions (called by ``run_cycle`` after the binds).

For every chosen victim: the writer evicts it (Eviction API; ``MemoryWriter`` deletes it from
the cache) with an event naming the preemptor and the domain. A refused eviction (a
PodDisruptionBudget's 429) is remembered for ``REFUSED_TTL_S`` so the next cycles leave that pod
out and choose another bundle or domain; the preemptor's remaining victims are then not evicted
in this cycle, and it is not nominated (its domain may change). Every other preemptor's PodGroup
gets the ``volcano.sh/nominated-hypernode`` annotation (``allocate`` tries that HyperNode first)
and its pending pods ``status.nominatedNodeName`` from the trial placement.

A nomination is dropped again (``served_nomination``) once it has done its work: the job has
no pending pod left; or it is ready (the gang runs) and nothing in the nominated HyperNode is
still terminating, so the freed room has had its ``allocate``; or the HyperNode is gone. An
elastic job's extra pods that still do not fit then stop holding the HyperNode's nodes away
from every other job.
"""

from __future__ import annotations

import time
from typing import Any

from volcano_py.scheduler.actions.eviction import waiting_for_releases
from volcano_py.scheduler.actions.eviction_domains import CLUSTER_DOMAIN
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.nominated import with_nomination
from volcano_py.scheduler.cache import SchedulerCache
from volcano_py.scheduler.framework.session import Session
from volcano_py.scheduler.writer import Writer

REFUSED_TTL_S = 60.0


def refused_recently(cache: SchedulerCache, now: float | None = None) -> frozenset[str]:
    """Pods whose eviction was refused within the TTL (older entries are dropped)."""
    now = time.monotonic() if now is None else now
    for key, at in list(cache.eviction_refused.items()):
        if now - at > REFUSED_TTL_S:
            del cache.eviction_refused[key]
    return frozenset(cache.eviction_refused)


def write_evictions(cache: SchedulerCache, ssn: Session, writer: Writer) -> dict[str, str]:
    """Evict the session's victims and annotate the preemptors; ``{victim: preemptor}`` done."""
    done: dict[str, str] = {}
    refused: set[str] = set()  # preemptors one of whose victims could not be evicted
    for eviction in ssn.evictions:
        pod = cache.pod(eviction.task.key)
        if pod is None or eviction.preemptor in refused:
            continue
        message = (
            f"{eviction.action}: evicted for PodGroup {eviction.preemptor} "
            f"in HyperNode {eviction.domain}"
        )
        error = writer.evict(pod, message)
        if error is not None:
            cache.eviction_refused[eviction.task.key] = time.monotonic()
            refused.add(eviction.preemptor)
            ssn.nominations.pop(eviction.preemptor, None)
            continue
        done[eviction.task.key] = eviction.preemptor
    for uid, domain in ssn.nominations.items():
        job = ssn.jobs[uid]
        job.podgroup = with_nomination(job.podgroup, domain)
        for task_uid, node in ssn.nominated_nodes.get(uid, {}).items():
            pod = cache.pod(task_uid)
            if pod is not None:
                writer.nominate(pod, node)
    return done


def served_nomination(ssn: Session, job: JobInfo, pg: Any) -> Any:
    """``pg`` without the nominated-HyperNode annotation once it has served (module docstring).

    None when there is nothing to drop: no nomination, one made in this cycle, or one still
    waiting for its victims to go or its gang to be placed.
    """
    domain = job.nominated_hypernode()
    if not domain or job.key in ssn.nominations:
        return None
    gone = domain != CLUSTER_DOMAIN and domain not in ssn.real_nodes
    served = not job.pending_tasks() or (job.is_ready() and not waiting_for_releases(ssn, job))
    if not (gone or served):
        return None
    return with_nomination(pg, None)
