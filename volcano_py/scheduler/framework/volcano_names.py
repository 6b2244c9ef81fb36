"""Every action, plugin and per-plugin switch name a Volcano scheduler conf may use.

``conf.parse_conf`` checks names against these sets, not only against what volcano-py
registers, so Volcano's own chart configs (``volcano-scheduler.conf``,
``volcano-scheduler-ci.conf``) load unchanged: a Volcano name that volcano-py does not
implement yet is *accepted, not implemented* (dropped from the running tiers, logged once,
listed on ``/readyz`` and in a metric); a name no Volcano release has is an error. The
lists follow Volcano's ``pkg/scheduler/actions/factory.go``, ``pkg/scheduler/plugins/*``
(``PluginName``) and ``pkg/scheduler/conf.PluginOption``.
"""

from __future__ import annotations

VOLCANO_ACTIONS = frozenset(
    {
        "allocate",
        "backfill",
        "enqueue",
        "gangpreempt",
        "gangreclaim",
        "preempt",
        "reclaim",
        "shuffle",
    }
)

VOLCANO_PLUGINS = frozenset(
    {
        "binpack",
        "capacity",
        "cdp",
        "conformance",
        "deviceshare",
        "drf",
        "extender",
        "gang",
        "network-topology-aware",
        "nodegroup",
        "nodeorder",
        "numa-aware",
        "overcommit",
        "pdb",
        "predicates",
        "priority",
        "proportion",
        "rescheduling",
        "resource-strategy-fit",
        "resourcequota",
        "sla",
        "task-topology",
        "tdm",
        "usage",
    }
)

# Volcano's ``PluginOption`` switches (the YAML spelling, byte for byte: some say
# ``enable``, some ``enabled``) and the session extension point each one gates.
ENABLE_SWITCHES = {
    "enableJobOrder": "job_order",
    "enableHierarchy": "hierarchy",
    "enableJobReady": "job_ready",
    "enableJobPipelined": "job_pipelined",
    "enableTaskOrder": "task_order",
    "enablePreemptable": "preemptable",
    "enableReclaimable": "reclaimable",
    "enablePreemptive": "preemptive",
    "enableQueueOrder": "queue_order",
    "enabledClusterOrder": "cluster_order",
    "enablePredicate": "predicate",
    "enableBestNode": "best_node",
    "enableNodeOrder": "node_order",
    "enableTargetJob": "target_job",
    "enableReservedNodes": "reserved_nodes",
    "enableJobEnqueued": "job_enqueueable",
    "enabledVictim": "victim",
    "enableJobStarving": "job_starving",
    "enabledOverused": "overused",
    "enabledAllocatable": "allocatable",
    "enabledHyperNodeOrder": "hypernode_order",
    "enabledSubJobReady": "subjob_ready",
    "enabledSubJobPipelined": "subjob_pipelined",
    "enabledSubJobOrder": "subjob_order",
    "enabledHyperNodeGradient": "hypernode_gradient",
    # spellings volcano-py accepted before it followed Volcano's byte for byte
    "enableJobValid": "job_valid",
    "enableBatchNodeOrder": "batch_node_order",
    "enableHyperNodeOrder": "hypernode_order",
    "enableHyperNodeGradient": "hypernode_gradient",
}
