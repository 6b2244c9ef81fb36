"""Writing a cycle's preempt/reclaim decisions (called by ``run_cycle`` after the binds).

For every chosen victim: the writer evicts it (Eviction API; ``MemoryWriter`` deletes it from
the cache) with an event naming the preemptor and the domain. A refused eviction (a
PodDisruptionBudget's 429) is remembered for ``REFUSED_TTL_S`` so the next cycles leave that pod
out and choose another bundle or domain; the preemptor's remaining victims are then not evicted
in this cycle, and it is not nominated (its domain may change). Every other preemptor's PodGroup
gets the ``volcano.sh/nominated-hypernode`` annotation (``allocate`` tries that HyperNode first)
and its pending pods ``status.nominatedNodeName`` from the trial placement.
"""

from __future__ import annotations

import copy
import time

from volcano_py.api.constants import NOMINATED_HYPERNODE_ANNOTATION
from volcano_py.scheduler.binder import Writer
from volcano_py.scheduler.cache import SchedulerCache
from volcano_py.scheduler.framework.session import Session

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
        pod = cache.pod(eviction.task.uid)
        if pod is None or eviction.preemptor in refused:
            continue
        message = (
            f"{eviction.action}: evicted for PodGroup {eviction.preemptor} "
            f"in HyperNode {eviction.domain}"
        )
        error = writer.evict(pod, message)
        if error is not None:
            cache.eviction_refused[eviction.task.uid] = time.monotonic()
            refused.add(eviction.preemptor)
            ssn.nominations.pop(eviction.preemptor, None)
            continue
        done[eviction.task.uid] = eviction.preemptor
    for uid, domain in ssn.nominations.items():
        job = ssn.jobs[uid]
        pg = copy.copy(job.podgroup)
        meta = dict(pg.get("metadata") or {})
        meta["annotations"] = {
            **(meta.get("annotations") or {}),
            NOMINATED_HYPERNODE_ANNOTATION: domain,
        }
        pg["metadata"] = meta
        job.podgroup = pg
        for task_uid, node in ssn.nominated_nodes.get(uid, {}).items():
            pod = cache.pod(task_uid)
            if pod is not None:
                writer.nominate(pod, node)
    return done
