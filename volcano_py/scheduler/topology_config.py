"""Topology asked for, but the running configuration has no ``network-topology-aware``.

Without the plugin a job's network topology is not enforced: the allocate action's only
gradient is the whole cluster (as in Volcano, which says nothing; Volcano's Helm chart
configuration has no ``network-topology-aware``). volcano-py schedules such a job as
configured but says so:

- once per configuration load: a log line (``ConfWatch``) and a ``/readyz`` detail line
  (``load_message``);
- once per PodGroup that asks for topology: a Warning Event ``NetworkTopologyNotConfigured``
  (``CycleResult.warnings``, told once by ``podgroup_warnings``) and the note in its
  condition's message (``job_message``, passed to ``status.podgroup_status``).

Likewise a hard-mode job on a tree with **no HyperNode at its tier or below** (every rack
retired, discovery not run yet): Volcano places it at the virtual cluster top, i.e. across
the whole cluster, and so do we (waiting would strand every hard job of a cluster whose
topology is being rebuilt, and a job that asked for one rack of a tree that has no racks
cannot be told apart from one that asked of a tree that never had them), but not silently
(issue 44): a Warning Event ``NetworkTopologyTierMissing`` once per PodGroup and the note in
its condition (``missing_tier_message``).
"""

from __future__ import annotations

from collections.abc import Mapping

from volcano_py.api.constants import CLUSTER_TOP_HYPERNODE, NETWORK_TOPOLOGY_AWARE_PLUGIN
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.framework.conf import SchedulerConf

NOT_CONFIGURED_REASON = "NetworkTopologyNotConfigured"
TIER_MISSING_REASON = "NetworkTopologyTierMissing"


def enforces_topology(conf: SchedulerConf) -> bool:
    """Whether ``conf`` runs the ``network-topology-aware`` plugin."""
    return any(
        option.name == NETWORK_TOPOLOGY_AWARE_PLUGIN for tier in conf.tiers for option in tier
    )


def load_message(conf: SchedulerConf) -> str:
    """The load-time line when ``conf`` cannot honour topology, else ``""``."""
    if enforces_topology(conf):
        return ""
    return (
        f"the scheduler configuration has no {NETWORK_TOPOLOGY_AWARE_PLUGIN} plugin: "
        "PodGroups that ask for network topology are placed without it"
    )


def job_message(job: JobInfo) -> str:
    """What a PodGroup asking for topology is told when the plugin is not configured."""
    tier = "" if job.highest_tier is None else f", highest tier {job.highest_tier}"
    if job.highest_tier_name:
        tier += f", highest tier name {job.highest_tier_name!r}"
    return (
        f"network topology (mode {job.mode}{tier}) is not enforced: the running scheduler "
        f"configuration has no {NETWORK_TOPOLOGY_AWARE_PLUGIN} plugin"
    )


def missing_tier_message(job: JobInfo, by_tier: Mapping[int, tuple[str, ...]]) -> str:
    """The note for a hard job whose tree has no HyperNode at its tier or below, else ``""``.

    Only for a job to place, or placed at the cluster top. ``by_tier``: the session tree's
    HyperNodes per tier (the virtual cluster top included).
    """
    hard, highest = job.is_hard_topology_mode()
    if not hard or not by_tier or max(by_tier) > highest:
        return ""  # the cluster top is out of its reach: it waits, and its fit says why
    placed = job.allocated_hypernode
    if placed != CLUSTER_TOP_HYPERNODE and (placed or not job.pending_tasks()):
        return ""  # placed in a HyperNode before the tree emptied: not spread by it
    for tier, names in by_tier.items():
        if tier <= highest and any(name != CLUSTER_TOP_HYPERNODE for name in names):
            return ""
    return (
        f"network topology (mode hard, highest tier {highest}): the HyperNode tree has no "
        f"HyperNode at tier {highest} or below, so the job is placed across the whole "
        "cluster, as Volcano does; create or discover HyperNodes of that tier to confine it"
    )
