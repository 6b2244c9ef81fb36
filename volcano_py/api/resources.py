"""The API resources volcano-py reads and writes, as group/version/plural descriptors.

A ``APIResource`` is pure data: the kube layer turns it into URL paths, the informer factory
keys its informers by it. Nothing here performs I/O.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class APIResource:
    """One API resource (a GVR plus the facts needed to address it)."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool

    @property
    def api_version(self) -> str:
        """``group/version``, or just ``version`` for the core group."""
        return f"{self.group}/{self.version}" if self.group else self.version

    def __str__(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural


PODS = APIResource("", "v1", "pods", "Pod", namespaced=True)
NODES = APIResource("", "v1", "nodes", "Node", namespaced=False)
NAMESPACES = APIResource("", "v1", "namespaces", "Namespace", namespaced=False)
CONFIGMAPS = APIResource("", "v1", "configmaps", "ConfigMap", namespaced=True)
SECRETS = APIResource("", "v1", "secrets", "Secret", namespaced=True)
EVENTS = APIResource("", "v1", "events", "Event", namespaced=True)
SERVICEACCOUNTS = APIResource("", "v1", "serviceaccounts", "ServiceAccount", namespaced=True)
SERVICES = APIResource("", "v1", "services", "Service", namespaced=True)
PODTEMPLATES = APIResource("", "v1", "podtemplates", "PodTemplate", namespaced=True)
PERSISTENTVOLUMECLAIMS = APIResource(
    "", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", namespaced=True
)
PERSISTENTVOLUMES = APIResource("", "v1", "persistentvolumes", "PersistentVolume", namespaced=False)
STORAGECLASSES = APIResource(
    "storage.k8s.io", "v1", "storageclasses", "StorageClass", namespaced=False
)
LEASES = APIResource("coordination.k8s.io", "v1", "leases", "Lease", namespaced=True)
DEPLOYMENTS = APIResource("apps", "v1", "deployments", "Deployment", namespaced=True)
REPLICASETS = APIResource("apps", "v1", "replicasets", "ReplicaSet", namespaced=True)
STATEFULSETS = APIResource("apps", "v1", "statefulsets", "StatefulSet", namespaced=True)
DAEMONSETS = APIResource("apps", "v1", "daemonsets", "DaemonSet", namespaced=True)
JOBS = APIResource("batch", "v1", "jobs", "Job", namespaced=True)
# Kubernetes' own gang object (served behind the GenericWorkload gate; ``api/native_groups.py``)
NATIVE_PODGROUPS = APIResource("scheduling.k8s.io", "v1beta1", "podgroups", "PodGroup", True)
# the Workload a native PodGroup's ``spec.workloadRef`` names (served with the PodGroups)
NATIVE_WORKLOADS = APIResource("scheduling.k8s.io", "v1beta1", "workloads", "Workload", True)
# their parent (the CompositePodGroup gate; ``api/native_composite.py``)
NATIVE_COMPOSITES = APIResource(
    "scheduling.k8s.io", "v1alpha3", "compositepodgroups", "CompositePodGroup", True
)
CRDS = APIResource(
    "apiextensions.k8s.io",
    "v1",
    "customresourcedefinitions",
    "CustomResourceDefinition",
    namespaced=False,
)
VALIDATING_WEBHOOK_CONFIGURATIONS = APIResource(
    "admissionregistration.k8s.io",
    "v1",
    "validatingwebhookconfigurations",
    "ValidatingWebhookConfiguration",
    namespaced=False,
)
MUTATING_WEBHOOK_CONFIGURATIONS = APIResource(
    "admissionregistration.k8s.io",
    "v1",
    "mutatingwebhookconfigurations",
    "MutatingWebhookConfiguration",
    namespaced=False,
)
VALIDATING_ADMISSION_POLICIES = APIResource(
    "admissionregistration.k8s.io",
    "v1",
    "validatingadmissionpolicies",
    "ValidatingAdmissionPolicy",
    namespaced=False,
)
VALIDATING_ADMISSION_POLICY_BINDINGS = APIResource(
    "admissionregistration.k8s.io",
    "v1",
    "validatingadmissionpolicybindings",
    "ValidatingAdmissionPolicyBinding",
    namespaced=False,
)
HYPERNODES = APIResource("topology.volcano.sh", "v1alpha1", "hypernodes", "HyperNode", False)
PODGROUPS = APIResource("scheduling.volcano.sh", "v1beta1", "podgroups", "PodGroup", True)
QUEUES = APIResource("scheduling.volcano.sh", "v1beta1", "queues", "Queue", False)
NETWORKPOLICIES = APIResource(
    "networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", namespaced=True
)
# Volcano Jobs ("vcjobs"); not in BY_KIND, whose "Job" is batch/v1.
VCJOBS = APIResource("batch.volcano.sh", "v1alpha1", "jobs", "Job", True)
COMMANDS = APIResource("bus.volcano.sh", "v1alpha1", "commands", "Command", True)

BY_KIND: dict[str, APIResource] = {
    r.kind: r
    for r in (
        PODS,
        NODES,
        NAMESPACES,
        CONFIGMAPS,
        SECRETS,
        EVENTS,
        SERVICEACCOUNTS,
        PODTEMPLATES,
        LEASES,
        DEPLOYMENTS,
        REPLICASETS,
        STATEFULSETS,
        DAEMONSETS,
        JOBS,
        CRDS,
        VALIDATING_WEBHOOK_CONFIGURATIONS,
        MUTATING_WEBHOOK_CONFIGURATIONS,
        VALIDATING_ADMISSION_POLICIES,
        VALIDATING_ADMISSION_POLICY_BINDINGS,
        HYPERNODES,
        PODGROUPS,
        QUEUES,
    )
}
