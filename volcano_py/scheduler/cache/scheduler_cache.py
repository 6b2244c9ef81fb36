"""``SchedulerCache``: the scheduler's incremental model of the cluster, fed by informers.

Contract:

- **Incremental.** Pod, Node, PodGroup and HyperNode events update ``NodeInfo`` accounting,
  job membership and the HyperNode index in O(1) per event (a Node event re-checks that node
  against the regex/label members only). Nothing is rebuilt per cycle.
- **Every bound pod uses its node**, whoever scheduled it. Pending pods count only when their
  ``schedulerName`` is ours and they carry ``scheduling.k8s.io/group-name`` (they are tasks of
  that PodGroup); other pending pods are ignored.
- **Snapshots are cheap.** ``snapshot()`` shares the ``NodeInfo`` objects with the session
  copy-on-write in both directions (the cache clones a node before changing one a snapshot
  holds, the session clones before allocating on one); only pending tasks are copied. A cycle
  never deep-copies the 50,000 pods.
- **Assumed binds.** ``assume(task, node)`` marks a pod Binding on its node before the bind
  call, so the next cycle does not place it again; ``forget`` rolls it back when the bind
  fails; the informer's update with ``spec.nodeName`` makes it final.
- **Settled jobs stay out of cycles.** A job the last cycle left with nothing to do (Running or
  later, no pending task, no status to write, no failure) is *settled* by ``settle``; a
  cycle's ``snapshot(active_only=True)`` leaves it out until an event touches it (its PodGroup
  or one of its tasks changes, which bumps the job's change counter and unsettles it). So a
  cycle costs O(jobs that need attention), not O(every PodGroup in the cluster): with 4,000
  running gangs the scheduler was rebuilding and re-checking all of them twice a second. A
  job touched while a cycle ran is not settled (its counter moved since the snapshot), nor
  is one deleted and created again meanwhile (the counter is one for the whole cache, so a
  new job never repeats a version its predecessor had).
  Running jobs' tasks still count on their nodes, which is all other jobs need of them.
- **Implicit jobs** (``implicit_jobs.py``, with a classifier): a bare pod of ours whose
  PodGroup would be a plain gang of one is a job whose PodGroup exists only here.
- **Jobs that cannot be placed are parked** (``park``, ``parking.py``): left out until they
  change or an event they wait for happens, so thousands of waiting gangs do not cost every
  cycle. The cache only *reports* events (``ClusterEvent``); which events can un-park a job
  is declared beside the check that failed (``api/wake_hints.py``).
- **Native groups** (``api/native_groups.py``): a ``scheduling.k8s.io`` PodGroup is kept as
  it came (``native_podgroup``) and, for the jobs, as its Volcano-shaped view with the
  scheduler's own status (``keep_native_status``). A Volcano PodGroup of the same
  namespace/name wins: the native one waits behind it and comes back when it is deleted.
  A root ``CompositePodGroup`` is one job whose tasks are its child PodGroups' pods
  (``composites.py``, ``api/native_composite.py``); its view is rebuilt when a child changes.
  A Job controller's default group (``job_default``: basic, no constraints) is never a job:
  pg-controller gives its pods a Volcano PodGroup of its name, as Volcano would.
- Cached objects are the informer's dicts, read-only. ``changed`` is set on every event that
  could let something be scheduled (the loop wakes early).

The parts own their state and are called under this cache's one lock: ``nodes.py`` (nodes and
the tasks placed on them, copy-on-write), ``jobs.py`` (PodGroups, their tasks, versions and
settled set, with ``implicit_jobs.py`` and ``allocated_index.py``), ``natives.py`` and
``composites.py`` (native PodGroups, CompositePodGroups and their children), ``parking.py``
(parked jobs and event epochs), ``volumes.py`` (claims, PersistentVolumes and StorageClasses, a
snapshot's ``VolumeListing``), ``snapshot.py`` (what a cycle gets). ``SchedulerCache`` routes
the informers' events to them.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from functools import partial

from volcano_py.api import JSON
from volcano_py.api.constants import CLUSTER_TOP_HYPERNODE, DEFAULT_SCHEDULER_NAME
from volcano_py.api.meta import object_key
from volcano_py.api.native_composite import (
    as_native_composite,
    is_native_composite,
    parent_name,
)
from volcano_py.api.native_groups import (
    as_native,
    is_native,
    is_native_view,
    job_default,
    pod_group_name,
    volcano_view,
    workload_problem,
    workload_templates,
)
from volcano_py.api.resources import (
    HYPERNODES,
    NATIVE_COMPOSITES,
    NATIVE_PODGROUPS,
    NATIVE_WORKLOADS,
    NODES,
    PERSISTENTVOLUMECLAIMS,
    PERSISTENTVOLUMES,
    PODGROUPS,
    PODS,
    QUEUES,
    STORAGECLASSES,
    APIResource,
)
from volcano_py.kube.clock import Clock
from volcano_py.kube.informer import EventHandler, HandlerRegistration, SharedInformerFactory
from volcano_py.scheduler.api.awaited_gangs import AwaitedGangs
from volcano_py.scheduler.api.hypernode_info import HyperNodeIndex
from volcano_py.scheduler.api.nominated import nomination, with_nomination
from volcano_py.scheduler.api.queue_info import QueueInfo
from volcano_py.scheduler.api.snapshot import Snapshot
from volcano_py.scheduler.api.task_info import TaskInfo, TaskStatus
from volcano_py.scheduler.api.wake_hints import ALL_EVENTS, ClusterEvent
from volcano_py.scheduler.cache.composites import CompositeGroups
from volcano_py.scheduler.cache.implicit_jobs import Classifier
from volcano_py.scheduler.cache.jobs import JobStore
from volcano_py.scheduler.cache.key_index import KeyIndex
from volcano_py.scheduler.cache.lost_members import LostMembers
from volcano_py.scheduler.cache.natives import NativeGroups
from volcano_py.scheduler.cache.nodes import NodeStore
from volcano_py.scheduler.cache.nominations import AssumedNominations
from volcano_py.scheduler.cache.parking import ParkedJobs, places, told_only
from volcano_py.scheduler.cache.snapshot import take_snapshot
from volcano_py.scheduler.cache.volumes import CLAIM, CLASS, VOLUME, VolumeStore

log = logging.getLogger(__name__)

_Handler = Callable[[JSON], None]  # an informer add/delete handler


def _on_update(upsert: Callable[[JSON], None]) -> Callable[[JSON, JSON], None]:
    def on_update(_old: JSON, new: JSON) -> None:
        upsert(new)

    return on_update


def _state_of(queue: JSON) -> object:
    return (queue.get("status") or {}).get("state")


def _state(task: TaskInfo | None) -> tuple[object, ...] | None:
    """What of a task matters for scheduling decisions."""
    if task is None:
        return None
    return (task.status, task.node_name, task.job, task.template)


def _native_group(task: TaskInfo) -> str:
    """``namespace/name`` of the native PodGroup ``task``'s pod names ("" for none)."""
    group = pod_group_name(task.pod)
    return f"{task.namespace}/{group}" if group else ""


class SchedulerCache:
    """Nodes with their tasks, jobs with theirs, and the HyperNode index."""

    def __init__(
        self,
        scheduler_name: str = DEFAULT_SCHEDULER_NAME,
        implicit: Classifier | None = None,
        clock: Clock | None = None,
    ) -> None:
        """An empty cache for pods with ``spec.schedulerName == scheduler_name``.

        ``implicit``: the classifier of bare pods run as implicit jobs (none without it).
        ``clock``: what parking's time limit is measured on (the scheduler's).
        """
        self.scheduler_name = scheduler_name
        self.changed = threading.Event()
        self._lock = threading.RLock()
        self.nodes = NodeStore()
        self.jobs = JobStore(implicit)
        # jobs that could not be placed, left out until an event they wait for (they are
        # settled in ``jobs`` too)
        self._parked = ParkedJobs(clock=clock)
        # running gangs short of a member, held for a grace before Unknown (lost_members.py)
        self.lost_members = LostMembers(clock)
        # admitted gangs short of pods: others' surplus waits for them (api/awaited_gangs.py)
        self.awaited_gangs = AwaitedGangs(clock)
        self.hypernodes = HyperNodeIndex()
        self.volumes = VolumeStore()  # claims, PersistentVolumes, StorageClasses
        self._pods: dict[str, JSON] = {}
        self._tasks: dict[str, TaskInfo] = {}
        # "namespace/name" of a native PodGroup -> the keys of the cached tasks naming it
        self._naming_group = KeyIndex()
        self._assumed: dict[str, str] = {}
        self._queues: dict[str, JSON] = {}
        self._native = NativeGroups()  # native PodGroups as they came, by key
        self._shadowed: dict[str, JSON] = {}  # native ones behind a Volcano one of their name
        self._composites = CompositeGroups()  # native CompositePodGroups and their children
        # the Workloads native PodGroups name (key -> template names); None: not read
        self._workloads: dict[str, frozenset[str]] | None = None
        self._nominations = AssumedNominations()  # written, echo not yet seen (nominations.py)
        # pod key -> monotonic time its eviction was refused (a PodDisruptionBudget)
        self.eviction_refused: dict[str, float] = {}

    # -- informer wiring --------------------------------------------------------------------

    def attach(
        self,
        informers: SharedInformerFactory,
        *,
        native: bool = False,
        composite: bool = False,
        workloads: bool = False,
    ) -> list[HandlerRegistration]:
        """Register handlers on a ``SharedInformerFactory``; returns the registrations.

        ``native``: the API server serves ``scheduling.k8s.io/v1beta1`` PodGroups (read them);
        ``composite``: and ``v1alpha3`` CompositePodGroups; ``workloads``: and ``v1beta1``
        Workloads (a PodGroup naming a missing one waits: ``read_workloads``).
        """
        wiring: list[tuple[APIResource, _Handler, _Handler]] = [
            (NODES, self.update_node, self.delete_node),
            (PODS, self.update_pod, self.delete_pod),
            (PODGROUPS, self.update_podgroup, self.delete_podgroup),
            (HYPERNODES, self.update_hypernode, self.delete_hypernode),
            (QUEUES, self.update_queue, self.delete_queue),
        ]
        if native:
            wiring.append(
                (NATIVE_PODGROUPS, self.update_native_podgroup, self.delete_native_podgroup)
            )
        if composite:
            wiring.append((NATIVE_COMPOSITES, self.update_composite, self.delete_composite))
        if workloads:
            self.read_workloads()
            wiring.append((NATIVE_WORKLOADS, self.update_workload, self.delete_workload))
        for resource, kind in (
            (PERSISTENTVOLUMECLAIMS, CLAIM),
            (PERSISTENTVOLUMES, VOLUME),
            (STORAGECLASSES, CLASS),
        ):
            wiring.append(
                (resource, partial(self.update_volume, kind), partial(self.delete_volume, kind))
            )
        registrations = []
        for resource, upsert, delete in wiring:
            handler = EventHandler(on_add=upsert, on_update=_on_update(upsert), on_delete=delete)
            registrations.append(informers.informer(resource).add_event_handler(handler))
        return registrations

    def update_volume(self, kind: str, obj: JSON) -> None:
        """A claim, PersistentVolume or StorageClass (``kind``) was added or changed."""
        with self._lock:
            if self.volumes.update(kind, obj):
                self._parked.event(ClusterEvent.VOLUME_CHANGED)
        self.changed.set()

    def delete_volume(self, kind: str, obj: JSON) -> None:
        """A claim, PersistentVolume or StorageClass (``kind``) went away."""
        with self._lock:
            self.volumes.delete(kind, obj)
            self._parked.event(ClusterEvent.VOLUME_CHANGED)
        self.changed.set()

    # -- nodes ------------------------------------------------------------------------------

    def update_node(self, obj: JSON) -> None:
        """A Node was added or changed."""
        name = (obj.get("metadata") or {}).get("name", "")
        with self._lock:
            node, added = self.nodes.update(name, obj)
            changed = not added and self.nodes.fit_changed(node, obj)
            if not added:
                node.set_node(obj)
            self.hypernodes.set_node(name, node.labels)
            if added:
                self._parked.event(ClusterEvent.NODE_ADDED)
            elif changed:
                self._parked.event(ClusterEvent.NODE_CHANGED)
            wake = self._a_job_may_move()
        if wake:
            self.changed.set()

    def delete_node(self, obj: JSON) -> None:
        """A Node went away (its pods stay known until they are deleted)."""
        name = (obj.get("metadata") or {}).get("name", "")
        with self._lock:
            self.nodes.delete(name)
            self.hypernodes.delete_node(name)
            wake = self._a_job_may_move()
        if wake:
            self.changed.set()

    def _a_job_may_move(self) -> bool:
        """Whether a change of the cluster's shape (a Node, a HyperNode) can matter to a cycle.

        Only to a job a cycle would look at or one parked until such a change. With none
        (every job settled, or no job: label discovery creating 10,000 racks, or nodes
        joining an idle cluster), the change wakes no cycle; the next periodic cycle, or the
        first event of a job, sees it. Called under the lock.
        """
        return bool(self._parked) or not self.jobs.all_settled()

    # -- settling and parking -----------------------------------------------------------------

    def settle(self, versions: dict[str, int]) -> None:
        """Leave these jobs out of cycles until they change (``versions``: from the snapshot).

        A placed job whose allocated HyperNode no longer exists is never settled: it stays
        in cycles until the session has recovered its HyperNode from where its pods run
        and the annotation has been rewritten (``topology.py``).
        """
        with self._lock:
            for job, version in versions.items():
                if self.jobs.current(job, version) and not self.jobs.stranded(job, self.hypernodes):
                    self.jobs.settle(job)

    def park(
        self,
        versions: dict[str, int],
        events: Mapping[str, frozenset[ClusterEvent]] | None = None,
    ) -> None:
        """Leave these unplaceable jobs out of cycles until an event they wait for.

        ``events``: per job, the cluster events that can un-park it (every event for a job
        not named; ``api/wake_hints.py``). A job that changes itself comes back at once, as a
        settled one does (``parking.py``).
        """
        waits = events or {}
        with self._lock:
            for job, version in versions.items():
                if self.jobs.current(job, version):
                    self.jobs.settle(job)
                    self._parked.park(job, waits.get(job, ALL_EVENTS))

    def unpark_all(self) -> None:
        """Every parked job is looked at again (the scheduler configuration changed)."""
        with self._lock:
            self.jobs.unsettle(self._parked.clear())

    def is_parked(self, job: str) -> bool:
        """Whether cycles leave ``job`` out until an event it waits for."""
        with self._lock:
            return job in self._parked

    def unschedulable_count(self, looked_at: list[str]) -> int:
        """Jobs that wait: the parked ones, and those of ``looked_at`` not parked (one lock)."""
        with self._lock:
            parked = self._parked
            return len(parked) + sum(1 for job in looked_at if job not in parked)

    def is_settled(self, job: str) -> bool:
        """Whether cycles currently leave ``job`` out as done (parked jobs are not settled)."""
        with self._lock:
            return self.jobs.is_settled(job) and job not in self._parked

    # -- pods -------------------------------------------------------------------------------

    def _drop_task(self, key: str) -> None:
        task = self._tasks.pop(key, None)
        if task is None:
            return
        if task.node_name:
            self.nodes.remove_task(key, task)
        if task.job:
            self.jobs.remove_task(key, task)
            self._parked.discard(task.job)
            self._naming_group.move(key, _native_group(task), "")

    def _add_task(self, key: str, pod: JSON) -> None:
        task = TaskInfo(pod)
        assumed = self._assumed.get(key)
        if assumed is not None:
            if task.node_name or task.status in (TaskStatus.SUCCEEDED, TaskStatus.FAILED):
                del self._assumed[key]
            else:
                task.node_name = assumed
                task.status = TaskStatus.BINDING
        ours = (pod.get("spec") or {}).get("schedulerName") == self.scheduler_name
        if not task.node_name and not ours:
            return
        if task.job:
            task.job = self._composites.job_of(task.job)  # a child PodGroup's: its parent's
        elif ours:
            task.job = self.jobs.job_of(pod, bool(task.node_name))
        if not task.node_name and not task.job:
            return
        self._tasks[key] = task
        if task.job:
            self._naming_group.move(key, "", _native_group(task))
        if task.node_name:
            self.nodes.add_task(key, task)
        if task.job and ours:
            self.jobs.add_task(key, task)
            self._parked.discard(task.job)

    def update_pod(self, pod: JSON) -> None:
        """A Pod was added or changed (wakes the loop only when its placement state moved)."""
        key = object_key(pod)
        with self._lock:
            before = self._tasks.get(key)
            if before is not None and not before.node_name and told_only(self._pods.get(key), pod):
                # our own PodScheduled=False write coming back: the job did not change
                self._pods[key] = before.pod = pod
                return
            self._pods[key] = pod
            self._drop_task(key)
            self._add_task(key, pod)
            after = self._tasks.get(key)
            self._parked.pod_changed(before, after)
            if before is not None and before.job != (after.job if after else ""):
                self._forget_implicit(before.job)
        if _state(before) != _state(after) or places(before, after):
            self.changed.set()

    def delete_pod(self, pod: JSON) -> None:
        """A Pod was deleted (its resources are free again)."""
        key = object_key(pod)
        with self._lock:
            self._pods.pop(key, None)
            self._assumed.pop(key, None)
            task = self._tasks.get(key)
            self._parked.pod_changed(task, None)
            self._drop_task(key)
            if task is not None:
                self._forget_implicit(task.job)
        self.changed.set()

    def assume(self, key: str, node: str) -> None:
        """Mark a pod as Binding on ``node`` until the informer shows the binding."""
        with self._lock:
            pod = self._pods.get(key)
            if pod is None:
                return
            self._assumed[key] = node
            before = self._tasks.get(key)
            self._drop_task(key)
            self._add_task(key, pod)
            self._parked.pod_changed(before, self._tasks.get(key))

    def forget(self, key: str) -> None:
        """Roll an assumed bind back: the pod is pending again."""
        with self._lock:
            if self._assumed.pop(key, None) is None:
                return
            self._parked.event(ClusterEvent.BIND_ROLLED_BACK)
            pod = self._pods.get(key)
            self._drop_task(key)
            if pod is not None:
                self._add_task(key, pod)
        self.changed.set()

    def is_assumed(self, key: str) -> bool:
        """Whether a bind for this pod is in flight or unconfirmed."""
        with self._lock:
            return key in self._assumed

    def pods(self) -> list[JSON]:
        """Every cached pod (read-only dicts)."""
        with self._lock:
            return list(self._pods.values())

    def pod(self, key: str) -> JSON | None:
        """The cached Pod dict."""
        with self._lock:
            return self._pods.get(key)

    # -- podgroups ----------------------------------------------------------------------------

    def update_podgroup(self, pg: JSON) -> None:
        """A PodGroup was added or changed (status-only changes do not wake the loop).

        A native one (``scheduling.k8s.io``) is kept and its Volcano-shaped view is the job's;
        while a Volcano PodGroup of the same name exists, the native one waits behind it. A
        Job controller's default group (``job_default``) is never a job: its pods wait for the
        Volcano PodGroup of its name that pg-controller makes for them.
        """
        if is_native_composite(pg):
            self.update_composite(pg)
            return
        if is_native(pg) and parent_name(pg):
            self.update_native_podgroup(pg)
            return
        key = object_key(pg)
        with self._lock:
            if is_native(pg):
                held = self.jobs.podgroup(key)
                if job_default(pg) or (held is not None and not is_native_view(held)):
                    log.info("podgroup %s: a Volcano PodGroup of that name wins", key)
                    self._shadowed[key] = pg
                    return
                self._native.put(key, pg)
                pg = self._native_view(pg, (held or {}).get("status"))
            else:
                pg = self._nominations.shown(key, pg)
                shadowed = self._native.pop(key)
                if shadowed is not None:
                    self._shadowed[key] = shadowed
            self._put_podgroup(key, pg)

    def assume_nomination(self, pg: JSON) -> None:
        """``pg``'s nominated-HyperNode annotation is being written: show it now.

        As a bind is assumed: on the cached PodGroup now, and on every one the watch
        delivers until the echo (``nominations.py``). No wake-up: nothing else changed.
        """
        key = object_key(pg)
        with self._lock:
            current = self.jobs.podgroup(key)
            value = nomination(pg)
            if current is None or key in self.jobs.implicit or nomination(current) == value:
                return
            self._nominations.assume(key, value)
            self.jobs.update_podgroup(key, with_nomination(current, value))

    def update_native_podgroup(self, pg: JSON) -> None:
        """A ``scheduling.k8s.io`` PodGroup from its informer (a listed item has no kind).

        One naming a parent CompositePodGroup is a child: part of its parent's job.
        """
        if not parent_name(pg):
            self.update_podgroup(as_native(pg))
            return
        with self._lock:
            new = not self._composites.has_child(object_key(pg))
            parent = self._composites.put_child(as_native(pg))
            if new:
                self._refile(pg)
            self._put_composite(parent)

    def delete_native_podgroup(self, pg: JSON) -> None:
        """A ``scheduling.k8s.io`` PodGroup was deleted."""
        if not parent_name(pg):
            self.delete_podgroup(as_native(pg))
            return
        with self._lock:
            parent = self._composites.remove_child(pg)
            self._refile(pg)
            self._put_composite(parent)

    def update_composite(self, composite: JSON) -> None:
        """A ``scheduling.k8s.io/v1alpha3`` CompositePodGroup was added or changed."""
        composite = as_native_composite(composite)
        key = object_key(composite)
        with self._lock:
            self._composites.put(composite)
            self._native.put(key, composite)  # its condition is written as a PodGroup's
            self._put_composite(key)

    def delete_composite(self, composite: JSON) -> None:
        """A CompositePodGroup was deleted: its children's pods wait for it again."""
        composite = as_native_composite(composite)
        with self._lock:
            self._composites.remove(composite)
            self.delete_podgroup(composite)

    # -- Workloads (what native PodGroups' ``spec.workloadRef`` names) --------------------------

    def read_workloads(self) -> None:
        """Workloads are read from now on: a native PodGroup naming a missing one waits."""
        with self._lock:
            if self._workloads is None:
                self._workloads = {}
                self._review_workload(None)

    def update_workload(self, workload: JSON) -> None:
        """A ``scheduling.k8s.io/v1beta1`` Workload was added or changed."""
        key = object_key(workload)
        templates = workload_templates(workload)
        with self._lock:
            if self._workloads is None:
                self._workloads = {}
            if self._workloads.get(key) != templates:
                self._workloads[key] = templates
                self._review_workload(key)

    def delete_workload(self, workload: JSON) -> None:
        """A Workload was deleted: the PodGroups naming it wait for it again."""
        key = object_key(workload)
        with self._lock:
            if self._workloads is not None and self._workloads.pop(key, None) is not None:
                self._review_workload(key)

    def _native_view(self, native: JSON, status: JSON | None = None) -> JSON:
        """``volcano_view`` of ``native``, saying why it waits for its Workload, if it does."""
        return volcano_view(native, status, workload_problem(native, self._workloads))

    def _review_workload(self, key: str | None) -> None:
        """The views of the native PodGroups naming Workload ``key`` (every one: None) redone.

        A view whose waiting reason changed is put again, which un-parks its job and wakes
        the loop: the group places at the next cycle once its Workload and template exist.
        """
        for pg_key, native in self._native.naming(key):
            held = self.jobs.podgroup(pg_key)
            view = self._native_view(native, (held or {}).get("status"))
            if held is None or held.get("metadata") != view.get("metadata"):
                self._put_podgroup(pg_key, view)
                self.changed.set()

    def _put_composite(self, key: str) -> None:
        """The composite job ``key``'s view rebuilt with its children (none when not cached)."""
        view = self._composites.view(key, (self.jobs.podgroup(key) or {}).get("status"))
        if view is not None:
            self._put_podgroup(key, view)

    def _refile(self, child: JSON) -> None:
        """The cached pods of a child PodGroup filed again (it joined or left its parent).

        The pods naming it are found by an index (``_naming_group``): a scan of every cached
        task per child cost 500 children 12.8 s of CPU under the lock at 20,000 pods.
        """
        for key in self._naming_group.keys(object_key(child)):
            pod = self._pods.get(key)
            if pod is not None:
                self._drop_task(key)
                self._add_task(key, pod)

    def _put_podgroup(self, key: str, pg: JSON) -> None:
        old = self.jobs.update_podgroup(key, pg)
        self._parked.discard(key)
        respec = old is not None and old.get("spec") != pg.get("spec")
        if respec:
            self._parked.event(ClusterEvent.PODGROUP_SPEC_CHANGED)
        if old is None or respec:
            self.changed.set()

    def delete_podgroup(self, pg: JSON) -> None:
        """A PodGroup was deleted (a native one behind a Volcano one of its name comes back)."""
        key = object_key(pg)
        with self._lock:
            if is_native(pg) and key not in self._native:
                self._shadowed.pop(key, None)
                return  # it waited behind a Volcano PodGroup, which stays
            self._native.pop(key)
            self._nominations.forget(key)
            self.jobs.remove_podgroup(key)
            self._parked.discard(key)
            self._parked.event(ClusterEvent.PODGROUP_DELETED)
            behind = None if is_native(pg) else self._shadowed.pop(key, None)
            if behind is not None and not job_default(behind):
                self._native.put(key, behind)
                self._put_podgroup(key, self._native_view(behind))

    def podgroup(self, key: str) -> JSON | None:
        """The cached PodGroup dict."""
        with self._lock:
            return self.jobs.podgroup(key)

    def podgroup_object(self, key: str) -> JSON | None:
        """The cached PodGroup when it is an API object (None for an implicit job's)."""
        with self._lock:
            return None if key in self.jobs.implicit else self.jobs.podgroup(key)

    def is_implicit(self, key: str) -> bool:
        """Whether the job's PodGroup exists only in this cache (``implicit_jobs.py``)."""
        with self._lock:
            return key in self.jobs.implicit

    def keep_implicit_status(self, pg: JSON) -> None:
        """An implicit job's new status, kept here instead of written (no version bump)."""
        with self._lock:
            self.jobs.keep_implicit_status(object_key(pg), pg)

    def waiting_for_native_group(self) -> list[TaskInfo]:
        """Pending pods of ours naming a native PodGroup (or its parent) that does not exist.

        Not those of a Job controller's default group: they wait for their Volcano PodGroup.
        """
        with self._lock:
            return [
                t
                for t in self.jobs.pending_without_podgroup()
                if pod_group_name(t.pod) and t.job not in self._shadowed
            ]

    def native_children(self, key: str) -> list[JSON]:
        """The child PodGroups of the CompositePodGroup job ``key`` (none for other jobs)."""
        with self._lock:
            return self._composites.children_of(key)

    def native_podgroup(self, key: str) -> JSON | None:
        """The cached native PodGroup behind the job ``key`` (None for a Volcano one)."""
        with self._lock:
            return self._native.get(key)

    def keep_native_status(self, view: JSON) -> None:
        """A native group's new Volcano status, kept here (its object has no such fields)."""
        with self._lock:
            key = object_key(view)
            if key in self._native:
                self.jobs.keep_status(key, view)

    def _forget_implicit(self, job: str) -> None:
        """Drop an implicit job whose pod left it (deleted, or joined a real group)."""
        if self.jobs.forget_implicit(job):
            self._parked.discard(job)

    def podgroup_keys(self) -> list[str]:
        """The ``namespace/name`` of every cached PodGroup."""
        with self._lock:
            return self.jobs.podgroup_keys()

    # -- hypernodes and queues ----------------------------------------------------------------

    def update_hypernode(self, hn: JSON) -> None:
        """A HyperNode was added or changed.

        A new one may be where jobs recorded at the cluster top now run: they are looked at
        again.
        """
        name = (hn.get("metadata") or {}).get("name", "")
        with self._lock:
            added = name not in self.hypernodes
            generation = self.hypernodes.generation
            if self.hypernodes.set_hypernode(hn):  # a new domain, or members moved
                self._parked.event(ClusterEvent.HYPERNODE_CHANGED)
            if added:
                self.jobs.unsettle(self.jobs.holders(CLUSTER_TOP_HYPERNODE))
            # a status write (nodeCount, conditions) changes no placement
            wake = self.hypernodes.generation != generation and self._a_job_may_move()
        if wake:
            self.changed.set()

    def delete_hypernode(self, hn: JSON) -> None:
        """A HyperNode was deleted: jobs allocated to it are looked at again (recovered)."""
        name = (hn.get("metadata") or {}).get("name", "")
        with self._lock:
            self.hypernodes.delete_hypernode(name)
            self.jobs.unsettle(self.jobs.holders(name))
            self._parked.event(ClusterEvent.HYPERNODE_CHANGED)
            wake = self._a_job_may_move()
        if wake:
            self.changed.set()

    def update_queue(self, queue: JSON) -> None:
        """A Queue was added or changed (a spec or state change may let jobs in)."""
        name = str((queue.get("metadata") or {}).get("name", ""))
        with self._lock:
            old = self._queues.get(name)
            self._queues[name] = queue
            if (
                old is None
                or old.get("spec") != queue.get("spec")
                or _state_of(old) != _state_of(queue)
            ):
                self.jobs.unsettle_all()
                self._parked.clear()
                self.changed.set()

    def delete_queue(self, queue: JSON) -> None:
        """A Queue was deleted (its PodGroups wait on a missing queue)."""
        with self._lock:
            self._queues.pop(str((queue.get("metadata") or {}).get("name", "")), None)
            self.jobs.unsettle_all()
            self._parked.clear()
        self.changed.set()

    def queue_infos(self) -> dict[str, QueueInfo]:
        """Every queue with its usage and PodGroup counts (for the status writer)."""
        with self._lock:
            return self.jobs.queue_infos(self._queues.values())

    # -- snapshot -----------------------------------------------------------------------------

    def snapshot(self, *, active_only: bool = False, tree_if_jobs: bool = False) -> Snapshot:
        """Nodes (shared copy-on-write), jobs with copied pending tasks, the HyperNode tree.

        ``active_only``: leave settled jobs out (what a scheduling cycle asks for).
        ``tree_if_jobs``: a snapshot with no job gets the tree as last built, not rebuilt
        (a cycle's: nothing it does without a job reads the tree).
        """
        with self._lock:
            snapshot = take_snapshot(
                self.nodes,
                self.jobs,
                self.hypernodes,
                self._queues.values(),
                self._parked,
                active_only=active_only,
                volumes=self.volumes.listing(),
                tree_if_jobs=tree_if_jobs,
            )
        snapshot.awaited_gangs = self.awaited_gangs
        return snapshot
