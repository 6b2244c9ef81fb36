"""``allocate`` for a native group keyed by a node label that no HyperNode tier names.

A native PodGroup's ``schedulingConstraints.topology[0].key`` names a node label. When a
HyperNode tier says it stands for that label (``spec.tierName``), the group goes through the
HyperNode tree like any Volcano gang. When none does (``topology.resolve_job_topology`` sets
``job.label_key`` instead of refusing), the group is placed as kube-scheduler places it:
within one value of the label.

- **Domains**: the nodes grouped by their value of the key; a node without the label is in
  none. A gang with pods placed already keeps to the value they run in.
- **Order**: values whose idle resources cannot cover what the gang still needs are skipped
  (the pre-filter); the rest are tried fullest first (least idle of what the gang asks,
  binpack, as the HyperNode score orders HyperNodes), then by value.
- **A trial per value**: the gang's pending pods on that value's nodes in a Statement,
  committed as soon as one leaves the gang ready. Never across two values.
- **Nothing fits**: the job waits, with the key, how many values there are and, when some
  had the room, why the pods did not fit there (kube-scheduler's node reasons).
"""

from __future__ import annotations

from collections import Counter

from volcano_py.api.constants import NOT_ENOUGH_RESOURCES_REASON
from volcano_py.scheduler.actions.fit_errors import nodes_message
from volcano_py.scheduler.actions.placement import gang_prefix, place_tasks
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.node_info import NodeInfo
from volcano_py.scheduler.api.resource import Resource
from volcano_py.scheduler.api.task_info import OCCUPYING
from volcano_py.scheduler.framework.interface import JobFit
from volcano_py.scheduler.framework.session import Session

NO_TIER = "names no HyperNode tier, so the group is placed within one value of the node label"


def label_domains(
    nodes: list[NodeInfo], key: str, reserved: frozenset[str] | set[str] = frozenset()
) -> dict[str, list[NodeInfo]]:
    """The nodes (but ``reserved`` ones) by their value of the label ``key``, values sorted."""
    domains: dict[str, list[NodeInfo]] = {}
    for node in nodes:
        value = node.labels.get(key)
        if value is not None and node.name not in reserved:
            domains.setdefault(value, []).append(node)
    return dict(sorted(domains.items()))


def allocate_within_label(
    ssn: Session, job: JobInfo, reserved: frozenset[str] | set[str] = frozenset()
) -> bool:
    """Place the gang within one value of ``job.label_key`` (module doc); True if committed."""
    key = job.label_key
    domains = label_domains(ssn.node_list(), key, reserved)
    placed = {t.node_name for t in job.tasks.values() if t.node_name and t.status in OCCUPYING}
    values = {n.labels[key] for name in placed if (n := ssn.nodes.get(name)) and key in n.labels}
    if values:
        domains = {v: d for v, d in domains.items() if v in values}
    need = job.gang_min_resources()
    roomy = {v: _idle(d) for v, d in domains.items()}
    roomy = {v: idle for v, idle in roomy.items() if need.less_equal(idle)}
    reasons: Counter[str] = Counter()
    for value in sorted(roomy, key=lambda v: (_fullness(roomy[v], need), v)):
        stmt = ssn.statement()
        place_tasks(ssn, stmt, job, domains[value], reasons)
        if len(stmt) and ssn.job_ready(job):
            stmt.commit()
            return True
        stmt.discard()
    _record_failure(ssn, job, len(domains), len(roomy), reasons)
    return False


def _idle(nodes: list[NodeInfo]) -> Resource:
    idle = Resource()
    for node in nodes:
        idle.add(node.idle)
    return idle


def _fullness(idle: Resource, need: Resource) -> tuple[int, ...]:
    """Smaller first: the idle amount of each resource the gang asks for."""
    return tuple(idle.get(name) for name in need.names())


def _record_failure(
    ssn: Session, job: JobInfo, values: int, roomy: int, reasons: Counter[str]
) -> None:
    key = job.label_key
    if not values:
        text = f"topology key {key!r} {NO_TIER}, and no node has that label"
    elif not roomy:
        text = f"topology key {key!r} {NO_TIER}: none of its {values} value(s) has the room"
    else:
        said = nodes_message(sum(reasons.values()), reasons)
        text = f"topology key {key!r} {NO_TIER}: none of its {values} value(s) holds it ({said})"
    ssn.job_fit[job.key] = JobFit(
        NOT_ENOUGH_RESOURCES_REASON, gang_prefix(job) + text, frozenset(reasons)
    )
