"""``take_snapshot``: what a cycle (or a view) gets of the cache, cheaply.

Nodes are shared copy-on-write (``NodeStore.share``), jobs are built fresh with their pending
tasks copied (``JobStore.job_infos``), the HyperNode tree is built from the index, queues
carry their usage. A cycle's snapshot (``active_only``) first brings back the parked jobs
that are due (``ParkedJobs.release``) and leaves settled ones out; it also marks the parking
epoch it saw, so room freed while the cycle runs brings back what it parks. Other readers
(the view, capacity metrics) leave the epoch alone. The cache calls it under its lock.

A cycle's snapshot with no job in it (an idle cluster, or one whose jobs are all settled or
parked) takes the tree as last built (``tree_if_jobs``): nothing a cycle does without a job
reads it, and rebuilding it for every HyperNode event while discovery created 10,000 racks
was most of the process's CPU. The first cycle with a job builds it once for every event
since.
"""

from __future__ import annotations

from collections.abc import Iterable

from volcano_py.api import JSON
from volcano_py.scheduler.api.hypernode_info import HyperNodeIndex
from volcano_py.scheduler.api.snapshot import Snapshot
from volcano_py.scheduler.api.volumes import VolumeListing
from volcano_py.scheduler.cache.jobs import JobStore
from volcano_py.scheduler.cache.nodes import NodeStore
from volcano_py.scheduler.cache.parking import ParkedJobs


def take_snapshot(
    nodes: NodeStore,
    jobs: JobStore,
    hypernodes: HyperNodeIndex,
    queues: Iterable[JSON],
    parked: ParkedJobs,
    *,
    active_only: bool,
    volumes: VolumeListing | None = None,
    tree_if_jobs: bool = False,
) -> Snapshot:
    """Nodes (shared copy-on-write), jobs with copied pending tasks, the HyperNode tree.

    ``tree_if_jobs``: with no job in the snapshot, the tree as last built (see the module
    docstring).
    """
    if active_only:  # a cycle's (other readers, the view, must not move the epoch)
        jobs.unsettle(parked.release())
        parked.looking()
    shared = nodes.share()
    job_infos, versions = jobs.job_infos(active_only)
    tree = hypernodes.last_built() if tree_if_jobs and not job_infos else hypernodes.build()
    snapshot = Snapshot(shared, job_infos, tree, versions, jobs.queue_infos(queues))
    if volumes is not None:
        snapshot.volumes = volumes
    return snapshot
