"""SchedulerCache accounting, snapshots, assumed binds; the cycle with bind failures."""

from __future__ import annotations

from tests.unit.scheduler.helpers import gpu_cluster
from tests.unit.scheduler.objects import node, pod, podgroup
from volcano_py.scheduler.api.resource import Resource
from volcano_py.scheduler.api.task_info import TaskInfo, TaskStatus
from volcano_py.scheduler.cache import SchedulerCache
from volcano_py.scheduler.simulator import Simulator, fill_cache
from volcano_py.scheduler.writer import MemoryWriter

GPU = "nvidia.com/gpu"


def _cache(*objects: dict[str, object]) -> SchedulerCache:
    cache = SchedulerCache()
    fill_cache(cache, list(objects))  # type: ignore[arg-type]
    return cache


def test_cache_counts_pods_bound_by_any_scheduler() -> None:
    cache = _cache(
        node("n", {GPU: 4}),
        pod("mine", "g", {GPU: 1}, node_name="n", phase="Running"),
        pod("theirs", None, {GPU: 2}, node_name="n", phase="Running", scheduler="other"),
        pod("done", None, {GPU: 1}, node_name="n", phase="Succeeded", scheduler="other"),
        pod("pending-other", None, {GPU: 1}, scheduler="other"),
    )
    n = cache.snapshot().nodes["n"]
    assert n.used == Resource(scalars={GPU: 3000})
    assert n.pods == 2


def test_cache_tasks_are_our_pending_pods_with_group_only() -> None:
    cache = _cache(
        podgroup("g", 1),
        pod("in-group", "g", {GPU: 1}),
        pod("no-group", None, {GPU: 1}),
        pod("other-scheduler", "g", {GPU: 1}, scheduler="default-scheduler"),
    )
    assert list(cache.snapshot().jobs["default/g"].tasks) == ["default/in-group"]


def test_cache_pod_deletion_frees_node() -> None:
    bound = pod("p", None, {GPU: 4}, node_name="n", phase="Running", scheduler="x")
    cache = _cache(node("n", {GPU: 4}), bound)
    cache.delete_pod(bound)
    assert cache.snapshot().nodes["n"].idle.get(GPU) == 4000


def test_cache_pod_seen_before_its_node_is_counted_when_node_arrives() -> None:
    cache = _cache(pod("p", None, {GPU: 1}, node_name="late", phase="Running", scheduler="x"))
    cache.update_node(node("late", {GPU: 4}))
    assert cache.snapshot().nodes["late"].idle.get(GPU) == 3000


def test_snapshot_is_isolated_from_later_cache_changes() -> None:
    cache = _cache(node("n", {GPU: 4}))
    snap = cache.snapshot()
    cache.update_pod(pod("p", None, {GPU: 4}, node_name="n", phase="Running", scheduler="x"))
    assert snap.nodes["n"].idle.get(GPU) == 4000
    assert cache.snapshot().nodes["n"].idle.get(GPU) == 0


def test_snapshot_copies_pending_tasks_only() -> None:
    cache = _cache(
        node("n"),
        podgroup("g", 1),
        pod("a", "g", {"cpu": 1}),
        pod("b", "g", {"cpu": 1}, node_name="n", phase="Running"),
    )
    first, second = cache.snapshot().jobs["default/g"], cache.snapshot().jobs["default/g"]
    assert first.tasks["default/a"] is not second.tasks["default/a"]
    assert first.tasks["default/b"] is second.tasks["default/b"]


def test_assume_then_forget_restores_pending_task() -> None:
    cache = _cache(node("n", {GPU: 4}), podgroup("g", 1), pod("a", "g", {GPU: 1}))
    cache.assume("default/a", "n")
    snap = cache.snapshot()
    assert snap.jobs["default/g"].tasks["default/a"].status == TaskStatus.BINDING
    assert snap.nodes["n"].idle.get(GPU) == 3000
    cache.forget("default/a")
    snap = cache.snapshot()
    assert snap.jobs["default/g"].tasks["default/a"].status == TaskStatus.PENDING
    assert snap.nodes["n"].idle.get(GPU) == 4000


def test_assumed_pod_confirmed_by_informer_update() -> None:
    cache = _cache(node("n", {GPU: 4}), podgroup("g", 1), pod("a", "g", {GPU: 1}))
    cache.assume("default/a", "n")
    cache.update_pod(pod("a", "g", {GPU: 1}, node_name="n"))
    assert not cache.is_assumed("default/a")
    assert cache.snapshot().nodes["n"].idle.get(GPU) == 3000


def test_failed_bind_rolls_back_and_job_is_retried_next_cycle() -> None:
    objects = gpu_cluster()
    objects.append(podgroup("job", 2))
    objects += [pod(f"job-{i}", "job", {GPU: 1}) for i in range(2)]
    sim = Simulator(objects)
    failures = {"default/job-1": 1}

    def fail(task: TaskInfo) -> str | None:
        if failures.get(task.key):
            failures[task.key] -= 1
            return "ServerError: boom"
        return None

    sim.writer = MemoryWriter(sim.cache, fail)
    first = sim.cycle()
    assert first.bind_errors == {"default/job-1": "ServerError: boom"}
    assert not sim.cache.is_assumed("default/job-1")
    second = sim.cycle()
    assert list(second.binds) == ["default/job-1"]
    assert set(sim.writer.bindings) == {"default/job-0", "default/job-1"}


def test_bound_pod_is_never_bound_again() -> None:
    objects = gpu_cluster()
    objects.append(podgroup("job", 1))
    objects.append(pod("job-0", "job", {GPU: 1}))
    sim = Simulator(objects)
    assert sim.cycle().binds
    for _ in range(3):
        assert not sim.cycle().binds


def test_failed_scheduling_events_are_rate_limited_per_pod() -> None:
    from volcano_py.kube.clock import FakeClock
    from volcano_py.kube.events import FakeRecorder
    from volcano_py.scheduler.writer import EVENT_INTERVAL_S, KubeWriter

    clock = FakeClock()
    recorder = FakeRecorder()
    writer = KubeWriter(None, recorder, workers=1, clock=clock)  # type: ignore[arg-type]
    try:
        p = pod("p", "g")
        for _ in range(3):
            writer.pod_unschedulable(p, None, "why")
        writer.pod_unschedulable(p, None, "another reason")
        clock.step(EVENT_INTERVAL_S + 1)
        writer.pod_unschedulable(p, None, "another reason")
    finally:
        writer.close()
    assert len(recorder.events) == 3


def test_failed_scheduling_throttle_forgets_pods_past_the_interval() -> None:
    from volcano_py.kube.clock import FakeClock
    from volcano_py.kube.events import FakeRecorder
    from volcano_py.scheduler.writer import _EVENTS_PRUNE_MIN, EVENT_INTERVAL_S, KubeWriter

    clock = FakeClock()
    recorder = FakeRecorder()
    writer = KubeWriter(None, recorder, workers=1, clock=clock)  # type: ignore[arg-type]
    try:
        for round_no in range(4):  # pods come and go; each round's names are new
            for i in range(_EVENTS_PRUNE_MIN):
                writer.pod_unschedulable(pod(f"r{round_no}-{i}", "g"), None, "why")
            clock.step(EVENT_INTERVAL_S + 1)
        writer.pod_unschedulable(pod("last", "g"), None, "why")
        assert len(writer._events) <= 2 * _EVENTS_PRUNE_MIN + 1
        fresh = pod("fresh", "g")
        writer.pod_unschedulable(fresh, None, "why")
        writer.pod_unschedulable(fresh, None, "why")  # still throttled after pruning
        assert [r["name"] for r in recorder.references].count("fresh") == 1
    finally:
        writer.close()


def test_placed_running_job_settles_and_any_change_brings_it_back() -> None:
    objects = gpu_cluster()
    objects.append(podgroup("job", 1))
    objects.append(pod("job-0", "job", {GPU: 1}))
    sim = Simulator(objects)
    assert sim.cycle().binds  # placed; its PodGroup becomes Running
    while sim.cycle().changed:
        pass
    assert sim.cache.is_settled("default/job")
    assert "default/job" not in sim.cache.snapshot(active_only=True).jobs
    assert "default/job" in sim.cache.snapshot().jobs  # tree, capacity, simulate see it
    # a second pod of the job arrives: the job is back in the next cycle and placed
    sim.cache.update_pod(pod("job-1", "job", {GPU: 1}))
    assert not sim.cache.is_settled("default/job")
    assert list(sim.cycle().binds) == ["default/job-1"]


def test_job_changed_during_a_cycle_is_not_settled_by_it() -> None:
    objects = gpu_cluster()
    objects.append(podgroup("job", 1, phase="Running"))
    objects.append(pod("job-0", "job", {GPU: 1}, node_name="gpu-0", phase="Running"))
    cache = _cache(*objects)
    snapshot = cache.snapshot(active_only=True)
    cache.update_podgroup(podgroup("job", 2, phase="Running"))  # arrives mid-cycle
    cache.settle(snapshot.job_versions)
    assert not cache.is_settled("default/job")
    cache.settle(cache.snapshot(active_only=True).job_versions)
    assert cache.is_settled("default/job")
    cache.delete_podgroup(podgroup("job", 2))
    assert not cache.is_settled("default/job")


def test_job_deleted_and_recreated_during_a_cycle_is_not_settled_by_it() -> None:
    # The cycle saw a placed, running job; while it ran, the job was deleted (its counter
    # dropped with it) and created again with a pending pod, as many changes as before.
    running = [
        podgroup("job", 1, phase="Running"),
        pod("job-0", "job", {GPU: 1}, node_name="gpu-0", phase="Running"),
    ]
    cache = _cache(*gpu_cluster(), *running)
    snapshot = cache.snapshot(active_only=True)
    cache.delete_pod(running[1])
    cache.delete_podgroup(running[0])
    cache.update_podgroup(podgroup("job", 1))
    cache.update_pod(pod("job-0", "job", {GPU: 1}))
    cache.settle(snapshot.job_versions)
    assert not cache.is_settled("default/job")  # its pending pod is looked at next cycle
    assert "default/job" in cache.snapshot(active_only=True).jobs


def test_pending_and_inqueue_jobs_never_settle() -> None:
    objects = [
        podgroup("waits-for-pods", 1, phase="Inqueue", min_resources={"cpu": 2}),
        podgroup("too-big", 1, min_resources={GPU: 64}),
        pod("too-big-0", "too-big", {GPU: 64}),
        *gpu_cluster(),
    ]
    sim = Simulator(objects)
    for _ in range(3):
        sim.cycle()
    assert not sim.cache.is_settled("default/waits-for-pods")
    assert not sim.cache.is_settled("default/too-big")
    assert sim.cache.is_parked("default/too-big")  # out of cycles until room frees
    assert not sim.cache.is_parked("default/waits-for-pods")


def test_cache_keeps_nothing_per_job_once_its_podgroup_and_pods_are_gone() -> None:
    group = podgroup("g", 2)
    pods = [pod(f"p{i}", "g", {GPU: 1}) for i in range(2)]
    cache = _cache(node("n", {GPU: 4}), group, *pods)
    # either order: the PodGroup first (garbage collection) or the pods first
    cache.delete_podgroup(group)
    for p in pods:
        cache.delete_pod(p)
    assert cache.jobs._job_tasks == {}
    assert cache.jobs.versions == {}
    again = _cache(node("n", {GPU: 4}), group, *pods)
    for p in pods:
        again.delete_pod(p)
    again.delete_podgroup(group)
    assert again.jobs._job_tasks == {}
    assert again.jobs.versions == {}


def test_a_settled_gang_follows_its_replaced_hypernode_and_is_rewritten_once() -> None:
    from tests.unit.scheduler.objects import hypernode

    objects = gpu_cluster()
    objects.append(podgroup("gang", 2, mode="hard", highest_tier=1))
    objects += [pod(f"gang-{i}", "gang", {GPU: 4}) for i in range(2)]
    sim = Simulator(objects)
    while sim.cycle().changed:
        pass
    annotation = "volcano.sh/job-allocated-hypernode"

    def allocated() -> str:
        pg = sim.cache.podgroup("default/gang")
        assert pg is not None
        return str(pg["metadata"]["annotations"].get(annotation, ""))

    old = allocated()
    assert old.startswith("tor-")
    assert sim.cache.is_settled("default/gang")
    placed = sorted(n for n in sim.writer.bindings.values())
    # the discovery retires the old tree first: for a moment the nodes have no leaf
    for obj in objects:
        if obj.get("kind") == "HyperNode":
            sim.cache.delete_hypernode(obj)
    assert not sim.cache.is_settled("default/gang")
    written: list[str] = []
    update = sim.writer.update_podgroup

    def counting(pg: dict) -> None:
        written.append(pg["metadata"]["name"])
        update(pg)

    sim.writer.update_podgroup = counting  # type: ignore[method-assign]
    sim.cycle()
    assert allocated() == old  # not pinned to the cluster top meanwhile
    sim.cache.settle(sim.cache.snapshot(active_only=True).job_versions)
    assert not sim.cache.is_settled("default/gang")  # still stranded: stays in cycles
    # then the new tree arrives under new names
    sim.cache.update_hypernode(hypernode("rack-new", 1, nodes=placed, tier_name="tor"))
    sim.cycle()
    assert allocated() == "rack-new"
    while sim.cycle().changed:
        pass
    assert sim.cache.is_settled("default/gang")
    assert written == ["gang"]  # the annotation, rewritten once


def test_pod_conditions_are_written_off_the_cycle_and_coalesced_per_pod() -> None:
    """``pod_unschedulable`` returns before the PATCH; a newer condition replaces an unsent one."""
    import threading

    from volcano_py.scheduler.status_writes import StatusWrites
    from volcano_py.scheduler.writer import KubeWriter

    gate = threading.Event()
    patched: list[tuple[str, str]] = []

    class SlowClient:
        def patch(self, resource, name, body, namespace, **kwargs):  # type: ignore[no-untyped-def]
            gate.wait(30)
            patched.append((name, body["status"]["conditions"][0]["message"]))
            return {}

    writer = KubeWriter(SlowClient(), None, workers=1)  # type: ignore[arg-type]
    writer.pod_conditions.close()
    writer.pod_conditions = StatusWrites(writer._patch_pod_condition, workers=1, name="test")
    try:
        for i in range(3):
            writer.pod_unschedulable(pod(f"p{i}", "g"), {"message": "first"}, "first")
        writer.pod_unschedulable(pod("p2", "g"), {"message": "newer"}, "newer")
        assert len(patched) == 0  # nothing waited for the API server
        gate.set()
        assert writer.pod_conditions.flush(30)
    finally:
        writer.close()
    # one thread, blocked on p0 until the gate opens: p2's first condition was still unsent
    assert patched == [("p0", "first"), ("p1", "first"), ("p2", "newer")]


def test_binds_are_foreground_from_their_submission_to_their_answer() -> None:
    """Background writes give way to binds still queued for a worker, and a closed pool's
    refusal leaves nothing counted (``kube/foreground.py``)."""
    import threading

    import pytest

    from volcano_py.kube.foreground import Foreground
    from volcano_py.scheduler.writer import KubeWriter

    gate = threading.Event()
    posted: list[str] = []

    class HeldClient:
        def create(self, resource, body, namespace, **kwargs):  # type: ignore[no-untyped-def]
            gate.wait(30)
            posted.append(kwargs["subresource_of"])
            return {}

    fg = Foreground()
    writer = KubeWriter(HeldClient(), None, workers=1, foreground=fg)  # type: ignore[arg-type]
    tasks = [TaskInfo(pod(f"p{i}", "g")) for i in range(3)]
    for task in tasks:
        task.node_name = "n1"
    try:
        wait = writer.start_binds(tasks)
        assert not fg.pause(0)  # three due, whether or not the one worker took the first
        gate.set()
        assert wait() == {}
        assert fg.pause(0)
    finally:
        writer.close()
    assert posted == ["p0", "p1", "p2"]
    with pytest.raises(RuntimeError):
        writer.start_binds(tasks)  # the pool is shut down
    assert fg.pause(0)


def test_a_bind_that_fails_still_ends_its_foreground_call() -> None:
    from volcano_py.kube.errors import Conflict
    from volcano_py.kube.foreground import Foreground
    from volcano_py.scheduler.writer import KubeWriter

    class RefusingClient:
        def create(self, resource, body, namespace, **kwargs):  # type: ignore[no-untyped-def]
            raise Conflict(409, "Conflict", "pod is already bound")

    fg = Foreground()
    writer = KubeWriter(RefusingClient(), None, workers=1, foreground=fg)  # type: ignore[arg-type]
    task = TaskInfo(pod("p0", "g"))
    task.node_name = "n1"
    try:
        errors = writer.start_binds([task])()
    finally:
        writer.close()
    assert list(errors) == [task.key]
    assert fg.pause(0)
