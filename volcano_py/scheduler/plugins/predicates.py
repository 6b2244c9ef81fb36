"""``predicates``: can this task run on this node?

Checks, in order, with the Kubernetes scheduler's reasons: node Ready, not unschedulable
(unless tolerated), nodeSelector and required node affinity, taints/tolerations, host ports
(``api/host_ports``: against the node's bound pods and those allocated earlier in the
session), pod count, resources (cpu, memory and every extended resource against the node's
idle), then the node affinity and zone of the pod's bound PersistentVolumes
(``support/volume_nodes.py``), then
kube-scheduler's PodTopologySpread and InterPodAffinity filters (``podconstraints``).

Everything but the pod count and resources depends only on the pod's template and the Node
object, so it is cached per (task template, node object) for the session: the pods of a gang
share one evaluation per node.
"""

from __future__ import annotations

from volcano_py.scheduler.api import host_ports
from volcano_py.scheduler.api.node_info import NodeInfo
from volcano_py.scheduler.api.resource import CPU, MEMORY
from volcano_py.scheduler.api.task_info import TaskInfo
from volcano_py.scheduler.api.volumes import VolumeListing
from volcano_py.scheduler.framework.arguments import Arguments
from volcano_py.scheduler.framework.session import Session
from volcano_py.scheduler.plugins.podconstraints import PodFilters
from volcano_py.scheduler.plugins.podconstraints.placed import PlacedPods
from volcano_py.scheduler.plugins.support.node_affinity import (
    selector_and_affinity_match,
    tolerates,
    untolerated_taint,
)
from volcano_py.scheduler.plugins.support.volume_nodes import volume_node_reason

UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}


def static_reason(task: TaskInfo, node: NodeInfo) -> str | None:
    """The template-only checks; None when they pass."""
    if not node.ready:
        return "node(s) were not ready"
    pod = task.pod
    if node.unschedulable:
        tolerations = (pod.get("spec") or {}).get("tolerations") or []
        if not any(tolerates(t, UNSCHEDULABLE_TAINT) for t in tolerations):
            return "node(s) were unschedulable"
    if not selector_and_affinity_match(pod, node.name, node.labels):
        return "node(s) didn't match Pod's node affinity/selector"
    taint = untolerated_taint(pod, node.taints)
    if taint is not None:
        return f"node(s) had untolerated taint {{{taint.get('key')}: {taint.get('value', '')}}}"
    return None


def resource_reason(task: TaskInfo, node: NodeInfo) -> str | None:
    """Pod count and resources against the node's idle; None when they fit."""
    if node.pods + 1 > node.max_tasks:
        return "Too many pods"
    req, idle = task.resreq, node.idle
    if req.milli_cpu > idle.milli_cpu:
        return f"Insufficient {CPU}"
    if req.memory > idle.memory:
        return f"Insufficient {MEMORY}"
    if req.scalars:
        scalars = idle.scalars
        for name, amount in req.scalars.items():
            if amount > 0 and amount > scalars.get(name, 0):
                return f"Insufficient {name}"
    return None


class _OutsideSession:
    """The placed pods as ``predicate`` sees them between sessions: none holds terms."""

    with_affinity = False


_NO_PLACED_PODS = _OutsideSession()


class PredicatesPlugin:
    """Node filters; static results cached per template and Node object."""

    name = "predicates"

    def __init__(self, args: Arguments) -> None:
        """No arguments are read."""
        self.args = args
        self._static: dict[tuple[str, str], tuple[object, str | None]] = {}
        self._volumes = VolumeListing()
        self._pods: PodFilters | None = None
        self._placed: PlacedPods | _OutsideSession = _NO_PLACED_PODS

    def on_session_open(self, ssn: Session) -> None:
        """Register the predicate."""
        self._pods = PodFilters(ssn)
        self._placed = self._pods.placed
        ssn.add_predicate_fn(self.name, self.predicate)
        self._volumes = ssn.volumes

    def on_session_close(self, ssn: Session) -> None:
        """Drop the caches."""
        self._static = {}
        self._pods = None
        self._placed = _NO_PLACED_PODS

    def predicate(self, task: TaskInfo, node: NodeInfo) -> str | None:
        """None when the task fits the node, else the reason."""
        key = (task.template, node.name)
        hit = self._static.get(key)
        if hit is None or hit[0] is not node.node:
            hit = (node.node, static_reason(task, node))
            self._static[key] = hit
        if hit[1] is not None:
            return hit[1]
        # the usual pod (``TaskInfo.plain``) while no placed pod may hold inter-pod terms
        # (``PlacedPods.with_affinity``, which only turns True within a session): room decides
        if task.plain and not self._placed.with_affinity:
            return resource_reason(task, node)
        if task.host_ports and node.ports and host_ports.conflict(task.host_ports, node.ports):
            return host_ports.REASON
        reason = resource_reason(task, node)
        if reason is None and task.claims:
            reason = volume_node_reason(task.namespace, task.claims, node, self._volumes)
        pods = self._pods
        # a pod without terms, while no placed pod may hold any, has nothing more to check
        if (
            reason is None
            and pods is not None
            and (task.pod_constraints or pods.placed.with_affinity)
        ):
            reason = pods.reason(task, node)
        return reason
