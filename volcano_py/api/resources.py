"""The API resources volcano-py reads and writes, as group/version/plural descriptors.

A ``Resource`` is pure data: the kube layer turns it into URL paths, the informer factory
keys its informers by it. Nothing here performs I/O.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Resource:
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

    @property
    def list_kind(self) -> str:
        """The kind of the List this resource's collection returns."""
        return f"{self.kind}List"

    def __str__(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural


PODS = Resource("", "v1", "pods", "Pod", namespaced=True)
NODES = Resource("", "v1", "nodes", "Node", namespaced=False)
NAMESPACES = Resource("", "v1", "namespaces", "Namespace", namespaced=False)
CONFIGMAPS = Resource("", "v1", "configmaps", "ConfigMap", namespaced=True)
SECRETS = Resource("", "v1", "secrets", "Secret", namespaced=True)
EVENTS = Resource("", "v1", "events", "Event", namespaced=True)
SERVICEACCOUNTS = Resource("", "v1", "serviceaccounts", "ServiceAccount", namespaced=True)
SERVICES = Resource("", "v1", "services", "Service", namespaced=True)
PODTEMPLATES = Resource("", "v1", "podtemplates", "PodTemplate", namespaced=True)
LEASES = Resource("coordination.k8s.io", "v1", "leases", "Lease", namespaced=True)
DEPLOYMENTS = Resource("apps", "v1", "deployments", "Deployment", namespaced=True)
REPLICASETS = Resource("apps", "v1", "replicasets", "ReplicaSet", namespaced=True)
STATEFULSETS = Resource("apps", "v1", "statefulsets", "StatefulSet", namespaced=True)
DAEMONSETS = Resource("apps", "v1", "daemonsets", "DaemonSet", namespaced=True)
JOBS = Resource("batch", "v1", "jobs", "Job", namespaced=True)
CRDS = Resource(
    "apiextensions.k8s.io",
    "v1",
    "customresourcedefinitions",
    "CustomResourceDefinition",
    namespaced=False,
)
VALIDATING_WEBHOOK_CONFIGURATIONS = Resource(
    "admissionregistration.k8s.io",
    "v1",
    "validatingwebhookconfigurations",
    "ValidatingWebhookConfiguration",
    namespaced=False,
)
VALIDATING_ADMISSION_POLICIES = Resource(
    "admissionregistration.k8s.io",
    "v1",
    "validatingadmissionpolicies",
    "ValidatingAdmissionPolicy",
    namespaced=False,
)
VALIDATING_ADMISSION_POLICY_BINDINGS = Resource(
    "admissionregistration.k8s.io",
    "v1",
    "validatingadmissionpolicybindings",
    "ValidatingAdmissionPolicyBinding",
    namespaced=False,
)
HYPERNODES = Resource("topology.volcano.sh", "v1alpha1", "hypernodes", "HyperNode", False)
PODGROUPS = Resource("scheduling.volcano.sh", "v1beta1", "podgroups", "PodGroup", True)
QUEUES = Resource("scheduling.volcano.sh", "v1beta1", "queues", "Queue", False)
NETWORKPOLICIES = Resource(
    "networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", namespaced=True
)
# Volcano Jobs ("vcjobs"); not in BY_KIND, whose "Job" is batch/v1.
VCJOBS = Resource("batch.volcano.sh", "v1alpha1", "jobs", "Job", True)
COMMANDS = Resource("bus.volcano.sh", "v1alpha1", "commands", "Command", True)

BY_KIND: dict[str, Resource] = {
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
        VALIDATING_ADMISSION_POLICIES,
        VALIDATING_ADMISSION_POLICY_BINDINGS,
        HYPERNODES,
        PODGROUPS,
        QUEUES,
    )
}
