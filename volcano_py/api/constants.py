"""Every wire-level name volcano-py shares with Volcano, byte for byte.

Annotation and label keys, component and plugin names, ConfigMap keys, paths, and the closed
sets (PodGroup phases, network topology modes, HyperNode member types).

The values are Volcano's, byte for byte, so manifests written for Volcano work unchanged.
Nothing else in the code base spells these strings out; import them from here.
"""

from __future__ import annotations

from enum import StrEnum

# --- Annotations and labels on Pods, workloads and PodGroups -------------------------------

# Pod annotation naming the PodGroup the pod belongs to (written back by pg-controller).
KUBE_GROUP_NAME_ANNOTATION = "scheduling.k8s.io/group-name"
# Workload/Pod annotation giving the PodGroup's minMember (invalid or negative -> 1).
VOLCANO_GROUP_MIN_MEMBER_ANNOTATION = "scheduling.volcano.sh/group-min-member"
# Pod annotation naming the queue the PodGroup goes to (spec.queue).
QUEUE_NAME_ANNOTATION = "scheduling.volcano.sh/queue-name"
# Volcano's short queue key, as used on Deployments in the seeds' examples.
VOLCANO_QUEUE_NAME_KEY = "volcano.sh/queue-name"
# Prefix of the upper-resource annotations a PodGroup inherits (inheritOwnerAnnotations).
ANNOTATION_PREFIX = "volcano.sh/"
# Preemption policy of the pods of a PodGroup (copied from the Pod onto the PodGroup).
POD_PREEMPTABLE = "volcano.sh/preemptable"
# Cool-down time after preemption, a Go duration such as "600s" or "10m".
COOLDOWN_TIME = "volcano.sh/cooldown-time"
# Revocable zone the pods may run in.
REVOCABLE_ZONE = "volcano.sh/revocable-zone"
# Job disruption budget: minimum available pods (wins over max-unavailable when both set).
JDB_MIN_AVAILABLE = "volcano.sh/jdb-min-available"
# Job disruption budget: maximum unavailable pods.
JDB_MAX_UNAVAILABLE = "volcano.sh/jdb-max-unavailable"
# Pod/workload annotation: network topology mode, "hard" or "soft" (default hard).
NETWORK_TOPOLOGY_MODE_ANNOTATION = "volcano.sh/network-topology-mode"
# Pod/workload annotation: highest tier a job may span, an integer.
NETWORK_TOPOLOGY_HIGHEST_TIER_ANNOTATION = "volcano.sh/network-topology-highest-tier"
# PodGroup annotation (KubeRay's spelling of the highest tier, an integer).
NETWORK_TOPOLOGY_HIGHEST_TIER_ALLOWED_ANNOTATION = (
    "volcano.sh/network-topology-highest-tier-allowed"
)
# PodGroup annotation (beyond Volcano): the highest tier by its HyperNode tierName.
NETWORK_TOPOLOGY_HIGHEST_TIER_NAME_ANNOTATION = "volcano.sh/network-topology-highest-tier-name"
# Workload annotations (beyond Volcano): an indexed workload's pods split into partitions of
# this many pods, each a SubJob (docs/podgroup.md, "Partitions").
PARTITION_SIZE_ANNOTATION = "volcano.sh/partition-size"
# Partitions the gang needs before it may start (the policy's minSubGroups; default 0).
MIN_PARTITIONS_ANNOTATION = "volcano.sh/min-partitions"
# A partition's network topology mode (hard|soft) and highest tier (an integer).
PARTITION_TOPOLOGY_MODE_ANNOTATION = "volcano.sh/partition-network-topology-mode"
PARTITION_TOPOLOGY_HIGHEST_TIER_ANNOTATION = "volcano.sh/partition-network-topology-highest-tier"
# Pod label pg-controller sets: the pod's partition, <pod index> // <partition size>.
PARTITION_ID_LABEL = "volcano.sh/partition-id"
# Where a pod's index comes from: a StatefulSet's pods, an indexed Job's pods.
STATEFULSET_POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
JOB_COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
# PodGroup annotation: the HyperNode the job's allocated tasks currently sit under (their LCA).
JOB_ALLOCATED_HYPERNODE_ANNOTATION = "volcano.sh/job-allocated-hypernode"
# the HyperNode preempt/reclaim freed for a PodGroup; allocate tries it first (volcano-py)
NOMINATED_HYPERNODE_ANNOTATION = "volcano.sh/nominated-hypernode"
# Label on pods of a Volcano Job (used by the seeds' debugging guide: -l volcano.sh/job-name=).
VOLCANO_JOB_NAME_LABEL = "volcano.sh/job-name"
# StatefulSet pod label with the revision; pg-controller matches sts.status.updateRevision.
CONTROLLER_REVISION_HASH_LABEL = "controller-revision-hash"

# --- HyperNodes and discovery ---------------------------------------------------------------

# Label on discovered HyperNodes naming the discoverer that owns them ("label", "ufm", ...).
NETWORK_TOPOLOGY_SOURCE_LABEL = "volcano.sh/network-topology-source"
# Node label for the single-node level; the label discoverer skips it in a topology type.
KUBERNETES_HOSTNAME_LABEL = "kubernetes.io/hostname"
# Discoverer source name: groups nodes by the values of configured node labels.
LABEL_DISCOVERER = "label"
# Discoverer source name: InfiniBand topology from a UFM server.
UFM_DISCOVERER = "ufm"
# UFM REST path listing all ports (GET {endpoint}/ufmRest/resources/ports, basic auth).
UFM_PORTS_PATH = "/ufmRest/resources/ports"
# a UFM-built HyperNode names all the leaf switches it groups here (comma-separated)
UFM_LEAVES_ANNOTATION = "topology.volcano-py.io/ufm-leaf-switches"
# the condition a discovered HyperNode carries while its source last failed (kept, not deleted)
STALE_CONDITION = "DiscoveryStale"
# Discovery period when a discoverer's config has no "interval": one hour.
DEFAULT_DISCOVERY_INTERVAL_SECONDS = 3600
# Key inside the controller ConfigMap holding the discovery config YAML.
CONTROLLER_CONFIG_KEY = "volcano-controller.conf"
# The controller ConfigMap is named "<release><suffix>" (default "volcano-controller-configmap").
CONTROLLER_CONFIGMAP_SUFFIX = "-controller-configmap"
# Environment variable with the namespace of the controller ConfigMap.
KUBE_POD_NAMESPACE_ENV = "KUBE_POD_NAMESPACE"
# Namespace used when KUBE_POD_NAMESPACE is unset.
DEFAULT_NAMESPACE = "volcano-system"
# Environment variable with the Helm release name that prefixes the ConfigMap name.
HELM_RELEASE_NAME_ENV = "HELM_RELEASE_NAME"
# Release name used when HELM_RELEASE_NAME is unset.
DEFAULT_RELEASE_NAME = "volcano"
# Name of the virtual HyperNode the scheduler puts above every real top-tier HyperNode.
CLUSTER_TOP_HYPERNODE = "<cluster-top-hypernode>"
# Highest spec.tier a HyperNode may carry (Volcano has no maximum). Real fabrics have a handful
# of levels (node, leaf, spine, super-spine, zone); 16 leaves room and matches the level count
# Kueue allows a Topology. Enforced by the CRD schema (`maximum`), the webhook and `validate`;
# a HyperNode that got in anyway (webhook off) is quarantined by the scheduler's tree.
MAX_HYPERNODE_TIER = 16

# --- Components -------------------------------------------------------------------------------

# Scheduler name pods must carry (spec.schedulerName) to be handled; pg-controller's default.
DEFAULT_SCHEDULER_NAME = "volcano"
# Controller names, as accepted by --controllers.
HYPERNODE_CONTROLLER_NAME = "hyperNode-controller"
PODGROUP_CONTROLLER_NAME = "pg-controller"
# Scheduler plugin names.
NETWORK_TOPOLOGY_AWARE_PLUGIN = "network-topology-aware"
GANG_PLUGIN = "gang"
# ConfigMap holding the scheduler configuration in a Volcano install.
SCHEDULER_CONFIGMAP_NAME = "volcano-scheduler-configmap"
# Admission webhook path for HyperNode CREATE/UPDATE, and the webhook's name.
HYPERNODE_VALIDATE_PATH = "/hypernodes/validate"
HYPERNODE_VALIDATE_WEBHOOK_NAME = "validatehypernode.volcano.sh"

# network-topology-aware plugin arguments (scheduler conf "arguments:" keys).
NTA_ARG_WEIGHT = "weight"
NTA_ARG_BINPACK_CPU = "hypernode.binpack.cpu"
NTA_ARG_BINPACK_MEMORY = "hypernode.binpack.memory"
# Comma-separated extra resource names; each one's weight is under the same key + "." + name.
NTA_ARG_BINPACK_RESOURCES = "hypernode.binpack.resources"
NTA_ARG_BINPACK_NORMAL_POD_ENABLE = "hypernode.binpack.normal-pod.enable"
NTA_ARG_BINPACK_NORMAL_POD_FADING = "hypernode.binpack.normal-pod.fading"
NTA_ARG_EVICT_MAX_HYPERNODES = "hypernode.gradient.evict.max-hypernodes"

# --- PodGroups ----------------------------------------------------------------------------------

# PodGroups created by pg-controller are named "podgroup-<controller owner UID or pod UID>".
PODGROUP_NAME_PREFIX = "podgroup-"
# Queue a PodGroup without spec.queue goes to.
DEFAULT_QUEUE = "default"

# PodGroup condition reasons (status.conditions[].reason).
POD_FAILED_REASON = "PodFailed"
POD_DELETED_REASON = "PodDeleted"
NOT_ENOUGH_RESOURCES_REASON = "NotEnoughResources"
NOT_ENOUGH_PODS_REASON = "NotEnoughTasks"
NOT_ENOUGH_PODS_OF_TASK_REASON = "NotEnoughPodsOfTask"
INVALID_PODGROUP_REASON = "InvalidPodGroup"
# PodGroup condition messages for the gang check.
POD_GROUP_READY_MESSAGE = "pod group is ready"
POD_GROUP_NOT_READY_MESSAGE = "pod group is not ready"


class PodGroupPhase(StrEnum):
    """``status.phase`` of a PodGroup."""

    # Accepted, but the scheduler cannot allocate enough resources yet.
    PENDING = "Pending"
    # Enqueued: controllers may create pods; between Pending and Running.
    INQUEUE = "Inqueue"
    # At least spec.minMember pods are running.
    RUNNING = "Running"
    # Part of minMember running, the rest unschedulable; waiting for the controller.
    UNKNOWN = "Unknown"
    # All pods of the PodGroup completed.
    COMPLETED = "Completed"


class PodGroupConditionType(StrEnum):
    """``status.conditions[].type`` of a PodGroup."""

    UNSCHEDULABLE = "Unschedulable"
    SCHEDULED = "Scheduled"


class NetworkTopologyMode(StrEnum):
    """``spec.networkTopology.mode`` of a PodGroup (and the mode annotation's values)."""

    # The job must fit within the allowed tier, or it is not scheduled.
    HARD = "hard"
    # Best effort: prefer the allowed tier, may cross it.
    SOFT = "soft"


class MemberType(StrEnum):
    """``spec.members[].type`` of a HyperNode."""

    NODE = "Node"
    HYPERNODE = "HyperNode"
