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
"""

from __future__ import annotations

from volcano_py.api.constants import NETWORK_TOPOLOGY_AWARE_PLUGIN
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.framework.conf import SchedulerConf

NOT_CONFIGURED_REASON = "NetworkTopologyNotConfigured"


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
