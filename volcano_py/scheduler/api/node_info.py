"""``NodeInfo``: one Node's schedulable state — allocatable, used, idle, tasks.

``used``/``idle`` are kept incrementally by ``add_task``/``remove_task``; every pod bound to
the node occupies it whoever scheduled it. ``generation`` increases on every change so score
caches keyed on it stay exact.
"""

from __future__ import annotations

from volcano_py.api import JSON
from volcano_py.scheduler.api.host_ports import UsedPorts, hold
from volcano_py.scheduler.api.resource import PODS, Resource
from volcano_py.scheduler.api.task_info import OCCUPYING, TaskInfo, TaskStatus


def node_ready(node: JSON) -> bool:
    """The Node's ``Ready`` condition is ``True``."""
    for cond in (node.get("status") or {}).get("conditions") or ():
        if cond.get("type") == "Ready":
            return bool(cond.get("status") == "True")
    return False


class NodeInfo:
    """A node, its capacity and the tasks on it."""

    __slots__ = (
        "affinity_pods",
        "allocatable",
        "generation",
        "idle",
        "labels",
        "max_tasks",
        "name",
        "node",
        "non_zero_used",
        "pods",
        "ports",
        "ready",
        "releasing",
        "taints",
        "tasks",
        "unschedulable",
        "used",
    )

    def __init__(self, node: JSON) -> None:
        """From a cached Node dict."""
        self.name: str = (node.get("metadata") or {}).get("name", "")
        self.tasks: dict[str, TaskInfo] = {}
        self.used = Resource()
        self.releasing = Resource()
        self.pods = 0
        self.non_zero_used = (0, 0)  # (milli-cpu, memory), TaskInfo.non_zero summed
        self.ports: UsedPorts = {}  # host ports held by the occupying pods (api/host_ports)
        # occupying tasks with inter-pod (anti-)affinity terms: nodes without any are skipped
        # when an incoming pod looks for existing pods' terms (kube's PodsWithAffinity)
        self.affinity_pods = 0
        self.generation = 0
        self.set_node(node)

    def set_node(self, node: JSON) -> None:
        """Take a new version of the Node object (capacity, labels, taints may change)."""
        status = node.get("status") or {}
        spec = node.get("spec") or {}
        allocatable = status.get("allocatable") or status.get("capacity") or {}
        self.node = node
        self.allocatable = Resource.from_list(allocatable, "status.allocatable")
        pods = allocatable.get(PODS)
        self.max_tasks = int(str(pods)) if pods is not None and str(pods).isdigit() else 110
        self.labels: dict[str, str] = dict((node.get("metadata") or {}).get("labels") or {})
        self.taints: list[JSON] = list(spec.get("taints") or ())
        self.unschedulable = bool(spec.get("unschedulable"))
        self.ready = node_ready(node)
        self.idle = self.allocatable.clone().sub(self.used)
        self.generation += 1

    def future_idle(self) -> Resource:
        """Idle plus what releasing pods will give back."""
        return self.idle.clone().add(self.releasing)

    def add_task(self, task: TaskInfo) -> None:
        """Account a task placed on this node (only occupying states use resources)."""
        self.tasks[task.key] = task
        if task.status in OCCUPYING:
            self.pods += 1
            self.affinity_pods += task.pod_affinity
            self.used.add(task.resreq)
            self.idle.sub(task.resreq)
            cpu, memory = self.non_zero_used
            self.non_zero_used = (cpu + task.non_zero[0], memory + task.non_zero[1])
            if task.host_ports:
                hold(self.ports, task.host_ports, 1)
            if task.status == TaskStatus.RELEASING:
                self.releasing.add(task.resreq)
        self.generation += 1

    def remove_task(self, task: TaskInfo) -> None:
        """Undo ``add_task`` for the task with this key (as it was when added)."""
        old = self.tasks.pop(task.key, None)
        if old is None:
            return
        if old.status in OCCUPYING:
            self.pods -= 1
            self.affinity_pods -= old.pod_affinity
            self.used.sub(old.resreq)
            self.idle.add(old.resreq)
            cpu, memory = self.non_zero_used
            self.non_zero_used = (cpu - old.non_zero[0], memory - old.non_zero[1])
            if old.host_ports:
                hold(self.ports, old.host_ports, -1)
            if old.status == TaskStatus.RELEASING:
                self.releasing.sub(old.resreq)
        self.generation += 1

    def clone(self) -> NodeInfo:
        """A copy whose task map and resources are independent (tasks are shared)."""
        copy = NodeInfo.__new__(NodeInfo)
        copy.name = self.name
        copy.node = self.node
        copy.allocatable = self.allocatable
        copy.max_tasks = self.max_tasks
        copy.labels = self.labels
        copy.taints = self.taints
        copy.unschedulable = self.unschedulable
        copy.ready = self.ready
        copy.tasks = dict(self.tasks)
        copy.used = self.used.clone()
        copy.idle = self.idle.clone()
        copy.releasing = self.releasing.clone()
        copy.pods = self.pods
        copy.non_zero_used = self.non_zero_used
        copy.ports = {k: dict(v) for k, v in self.ports.items()} if self.ports else {}
        copy.affinity_pods = self.affinity_pods
        copy.generation = self.generation
        return copy

    def __repr__(self) -> str:
        """``Node(name idle=...)``."""
        return f"Node({self.name} idle={self.idle!r})"
