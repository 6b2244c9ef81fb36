"""``Snapshot``: what the scheduler cache hands a session (Volcano's ``ClusterInfo``).

``SchedulerCache.snapshot`` builds one per cycle; ``framework.open_session`` opens a session on
it, and the simulator and the tree views read it directly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from volcano_py.scheduler.api.awaited_gangs import AwaitedGangs
from volcano_py.scheduler.api.hypernode_info import HyperNodeTree
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.node_info import NodeInfo
from volcano_py.scheduler.api.queue_info import QueueInfo
from volcano_py.scheduler.api.volumes import VolumeListing


@dataclass(slots=True)
class Snapshot:
    """Nodes (shared copy-on-write), jobs (the session's own), the HyperNode tree, queues."""

    nodes: dict[str, NodeInfo]
    jobs: dict[str, JobInfo]
    tree: HyperNodeTree
    # each job's change counter when the snapshot was taken (``SchedulerCache.settle``)
    job_versions: dict[str, int] = field(default_factory=dict)
    queues: dict[str, QueueInfo] = field(default_factory=dict)
    # claims, PersistentVolumes and StorageClasses (``api/volumes.py``)
    volumes: VolumeListing = field(default_factory=VolumeListing)
    # admitted gangs whose pods are not all there yet, kept across cycles (``awaited_gangs``)
    awaited_gangs: AwaitedGangs = field(default_factory=AwaitedGangs)
