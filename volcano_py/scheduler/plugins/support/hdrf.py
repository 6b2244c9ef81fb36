"""Volcano's hierarchical DRF (``drf`` with ``enableHierarchy: true``): the queue tree.

A queue joins the tree through its annotations ``volcano.sh/hierarchy`` (``root/eng/prod``)
and ``volcano.sh/hierarchy-weights`` (``1/2/8``): one node per path part below ``root``, each
with the weight at its position (a weight below 1, or not a number, counts as 1; a node
keeps the weight of the first queue that named it). A job is a leaf under its queue's node
(a queue without the annotation puts its jobs straight under ``root``). The tree is
rebuilt from the session's allocations at session open and kept up to date by ``drf``'s
event handlers. What each node holds (``update``), as Volcano's ``updateHierarchicalShare``:

- a leaf holds its job's placed tasks; it is **saturated** when, for a resource it holds,
  it holds all its tasks ask for, or when a resource it holds and asks for is fully
  allocated in the cluster (no longer *demanding*);
- an inner node takes the smallest dominant share ``m`` among its non-empty, unsaturated
  children, scales each such child's holding to share ``m`` (``holding * m / share``), adds
  the saturated children's holdings unscaled, and its share is the dominant share of that
  sum; it is saturated when all its children are.

``HierarchicalDrf`` ties a tree to a session: built from the jobs' holdings at session open,
followed by ``drf``'s allocate/deallocate handlers (``follow``), asked for the queue order
and for reclaim victims. Every change recomputes the whole tree, as Volcano does: opt-in,
O(jobs) per placed task.

``compare(left, right)`` is Volcano's ``compareQueues``: walk both queues' paths from
``root`` level by level (as deep as the shorter path); at each level an unsaturated node
goes before a saturated one, then the lower ``share / weight`` goes first; equal values
look one level down. A queue whose path is not in the tree yet compares as an empty node.

Shares are over the cluster's allocatable (cpu, memory and the scalars; ``pods`` is not a
resource here, see ``api/resource.py``, where Volcano counts one per task).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.api.queue_info import QueueInfo
from volcano_py.scheduler.api.resource import Resource
from volcano_py.scheduler.api.task_info import TaskInfo
from volcano_py.scheduler.framework.session import Session
from volcano_py.scheduler.plugins.support.queue_attr import Amounts, amounts


def dominant_share(held: Amounts, total: Amounts) -> float:
    """The largest ratio of ``held`` to ``total`` over the dimensions ``total`` has."""
    best = 0.0
    for name, amount in total.items():
        if amount > 0:
            best = max(best, held.get(name, 0.0) / amount)
    return best


def parse_weight(raw: str) -> float:
    """One part of ``volcano.sh/hierarchy-weights``: a number, at least 1."""
    try:
        weight = float(raw)
    except ValueError:
        return 1.0
    return weight if weight >= 1 else 1.0


@dataclass(slots=True, eq=False)
class HNode:
    """A node of the tree: a queue path part (``children`` set) or a job (``request`` set)."""

    name: str
    weight: float = 1.0
    held: Amounts = field(default_factory=dict)
    share: float = 0.0
    saturated: bool = False
    request: Amounts | None = None  # a job leaf: what all its tasks ask for
    children: dict[str, HNode] | None = None

    def clone(self) -> HNode:
        """A deep copy."""
        return HNode(
            self.name,
            self.weight,
            dict(self.held),
            self.share,
            self.saturated,
            self.request,
            None if self.children is None else {k: c.clone() for k, c in self.children.items()},
        )


EMPTY = HNode("")


class HdrfTree:
    """The queue tree of one session with its shares."""

    def __init__(self, total: Resource) -> None:
        """An empty tree (``root`` alone) over a cluster of ``total`` allocatable."""
        self.total = amounts(total)
        self.root = HNode("root", children={})

    def clone(self) -> HdrfTree:
        """A deep copy (reclaim tries moves on one)."""
        copy = HdrfTree(Resource())
        copy.total = self.total
        copy.root = self.root.clone()
        return copy

    def set_job(
        self, job: str, hierarchy: str, weights: str, held: Resource, request: Resource
    ) -> None:
        """Put job ``job`` (holding ``held`` of ``request``) under its queue's path."""
        node = self.root
        parts, weight_parts = hierarchy.split("/"), weights.split("/")
        for i, part in enumerate(parts[1:], start=1):
            assert node.children is not None
            child = node.children.get(part)
            if child is None or child.children is None:
                raw = weight_parts[i] if i < len(weight_parts) else "1"
                child = HNode(part, parse_weight(raw), children={})
                node.children[part] = child
            node = child
        assert node.children is not None
        node.children[job] = HNode(job, held=amounts(held), request=amounts(request))

    def update(self, allocated: Resource) -> None:
        """Recompute every node's holding, share and saturation (``allocated``: the cluster's)."""
        demanding = {name for name, amount in self.total.items() if allocated.get(name) < amount}
        self._update(self.root, demanding)

    def _update(self, node: HNode, demanding: set[str]) -> None:
        if node.children is None:
            node.share = dominant_share(node.held, self.total)
            node.saturated = _leaf_saturated(node, demanding)
            return
        smallest = 1.0
        for child in node.children.values():
            self._update(child, demanding)
            if child.share != 0 and not child.saturated:
                smallest = min(smallest, child.share)
        held: Amounts = {}
        for child in node.children.values():
            if child.share == 0:
                continue
            factor = 1.0 if child.saturated else smallest / child.share
            for name, amount in child.held.items():
                held[name] = held.get(name, 0.0) + amount * factor
        node.held = held
        node.share = dominant_share(held, self.total)
        node.saturated = all(c.saturated for c in node.children.values())

    def compare(self, left: str, right: str) -> float:
        """Negative when the queue at path ``left`` goes first, positive when ``right`` does."""
        lparts, rparts = left.split("/"), right.split("/")
        lnode = rnode = self.root
        depth = min(len(lparts), len(rparts))
        for i in range(depth):
            if lnode.saturated != rnode.saturated:
                return 1.0 if lnode.saturated else -1.0
            lvalue, rvalue = lnode.share / lnode.weight, rnode.share / rnode.weight
            if lvalue != rvalue:
                return lvalue - rvalue
            if i < depth - 1:
                lnode = _child(lnode, lparts[i + 1])
                rnode = _child(rnode, rparts[i + 1])
        return 0.0


def _child(node: HNode, name: str) -> HNode:
    return (node.children or {}).get(name, EMPTY)


def _leaf_saturated(leaf: HNode, demanding: set[str]) -> bool:
    """Volcano's ``resourceSaturated`` over the resources the job holds."""
    request = leaf.request or {}
    for name, amount in leaf.held.items():
        asked = request.get(name, 0.0)
        if asked and amount >= asked:
            return True
        if asked and name not in demanding:
            return True
    return False


class HierarchicalDrf:
    """The tree of one session: queue order and reclaim victims by hierarchical shares."""

    def __init__(self, ssn: Session, total: Resource, held: dict[str, Resource]) -> None:
        """The tree of every job of ``ssn``; ``held``: drf's per-job holdings (kept by drf)."""
        self.ssn = ssn
        self.held = held
        self.tree = HdrfTree(total)
        self.allocated = Resource()  # what the session's jobs hold, summed
        self.requests: dict[str, Resource] = {}
        for job in ssn.jobs.values():
            request = Resource()
            for task in job.tasks.values():
                request.add(task.resreq)
            self.requests[job.key] = request
            self.allocated.add(held.get(job.key) or Resource())
            self._set(self.tree, job, held.get(job.key) or Resource())
        self.tree.update(self.allocated)

    def _path(self, job: JobInfo) -> tuple[str, str]:
        queue = self.ssn.queues.get(job.queue)
        return ("", "") if queue is None else (queue.hierarchy, queue.hierarchy_weights)

    def _set(self, tree: HdrfTree, job: JobInfo, held: Resource) -> None:
        hierarchy, weights = self._path(job)
        request = self.requests.get(job.key) or Resource()
        tree.set_job(job.key, hierarchy, weights, held, request)

    def follow(self, task: TaskInfo, sign: int) -> None:
        """``task`` was placed (``sign`` 1) or taken back (-1); drf has updated ``held``."""
        job = self.ssn.jobs.get(task.job)
        if job is None:
            return
        if sign > 0:
            self.allocated.add(task.resreq)
        else:
            self.allocated.sub(task.resreq)
        self._set(self.tree, job, self.held.get(job.key) or Resource())
        self.tree.update(self.allocated)

    def queue_order(self, left: QueueInfo, right: QueueInfo) -> int:
        """The queue lower in the tree's weighted shares first (0: equal all the way down)."""
        result = self.tree.compare(left.hierarchy, right.hierarchy)
        return -1 if result < 0 else (1 if result > 0 else 0)

    def reclaimable(self, reclaimer: TaskInfo, candidates: list[TaskInfo]) -> list[TaskInfo]:
        """The candidates whose queue would still be ahead of the reclaimer's after the move.

        Volcano's hdrf reclaim: on a copy of the tree, the reclaimer's job holds its task
        too; for each candidate in turn its job lets go of it, and it is a victim when the
        reclaimer's queue then still comes first (``compare`` negative).
        """
        job = self.ssn.jobs.get(reclaimer.job)
        queue = None if job is None else self.ssn.queues.get(job.queue)
        if job is None or queue is None:
            return []
        tree, allocated = self.tree.clone(), self.allocated.clone()
        mine = (self.held.get(job.key) or Resource()).clone().add(reclaimer.resreq)
        allocated.add(reclaimer.resreq)
        self._set(tree, job, mine)
        victims = []
        for task in candidates:
            owner = self.ssn.jobs.get(task.job)
            theirs = None if owner is None else self.ssn.queues.get(owner.queue)
            if owner is None or theirs is None:
                continue
            held = self.held.get(owner.key) or Resource()
            allocated.sub(task.resreq)
            self._set(tree, owner, held.clone().sub(task.resreq))
            tree.update(allocated)
            ahead = tree.compare(queue.hierarchy, theirs.hierarchy)
            allocated.add(task.resreq)
            self._set(tree, owner, held)
            if ahead < 0:
                victims.append(task)
        return victims
