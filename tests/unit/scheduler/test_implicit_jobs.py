"""Implicit jobs: a bare pod is scheduled with a PodGroup that lives only in the cache.

It is enqueued and bound like any job, its status is kept in the cache and never written,
it counts in its queue and settles once running; it is forgotten when its pod goes or joins
a real group, and a real PodGroup of its name replaces it. Without a classifier (Volcano's
behaviour) a bare pod waits for a PodGroup.
"""

from __future__ import annotations

import copy
from typing import Any

from tests.unit.scheduler.objects import node, pod, podgroup, queue
from volcano_py.api.constants import KUBE_GROUP_NAME_ANNOTATION
from volcano_py.controllers.podgroup.implicit import implicit_podgroup
from volcano_py.scheduler.simulator import Simulator

JOB = "default/podgroup-web"


class CountingWriterSim(Simulator):
    """A simulator whose writer counts PodGroup writes."""

    def __init__(self, objects: list[dict[str, Any]], **kwargs: Any) -> None:
        super().__init__(objects, **kwargs)
        self.podgroup_writes: list[str] = []
        write = self.writer.update_podgroup

        def counted(pg: dict[str, Any]) -> None:
            self.podgroup_writes.append(pg["metadata"]["name"])
            write(pg)

        self.writer.update_podgroup = counted  # type: ignore[method-assign]


def _sim(*objects: dict[str, Any]) -> CountingWriterSim:
    cluster = [node("n1", {"cpu": 4}), *objects]
    return CountingWriterSim(cluster, implicit=implicit_podgroup)


def test_a_bare_pod_is_bound_without_any_podgroup_write() -> None:
    sim = _sim(pod("web", requests={"cpu": 1}))
    assert sim.cache.is_implicit(JOB)
    assert sim.cache.podgroup_object(JOB) is None
    result = sim.cycle()
    assert result.binds == {"default/web": "n1"}
    assert sim.podgroup_writes == []
    pg = sim.cache.podgroup(JOB)
    assert pg is not None
    assert pg["status"]["phase"] == "Running"  # kept in the cache, as decided
    sim.cycle()
    assert JOB not in sim.cache.snapshot(active_only=True).jobs  # settled
    assert sim.podgroup_writes == []


def test_without_a_classifier_a_bare_pod_waits_for_its_podgroup() -> None:
    sim = Simulator([node("n1", {"cpu": 4}), pod("web", requests={"cpu": 1})])
    assert sim.cycle().binds == {}
    assert sim.cache.podgroup(JOB) is None


def test_it_counts_in_its_queue_and_a_full_queue_holds_it_pending() -> None:
    capped = queue("capped", capability={"cpu": 1})
    first = pod("a", requests={"cpu": 1})
    first["metadata"]["annotations"]["scheduling.volcano.sh/queue-name"] = "capped"
    second = copy.deepcopy(first)
    second["metadata"]["name"] = "b"
    sim = _sim(capped, first)
    assert sim.cycle().binds == {"default/a": "n1"}
    assert sim.cache.queue_infos()["capped"].allocated.get("cpu") == 1000
    sim.cache.update_pod(second)
    for _ in range(2):
        assert sim.cycle().binds == {}
    pg = sim.cache.podgroup("default/podgroup-b")
    assert pg is not None
    assert pg["status"]["phase"] == "Pending"
    assert sim.podgroup_writes == []


def test_it_is_forgotten_when_its_pod_is_deleted() -> None:
    sim = _sim(pod("web", requests={"cpu": 1}))
    sim.cycle()
    assert sim.cache.queue_infos()["default"].phases["Running"] == 1
    bound = sim.cache.pod("default/web")
    assert bound is not None
    sim.cache.delete_pod(bound)
    assert sim.cache.podgroup(JOB) is None
    assert not sim.cache.is_implicit(JOB)
    assert sim.cache.queue_infos()["default"].phases["Running"] == 0
    assert sim.cache.podgroup_keys() == []


def test_a_pod_that_joins_a_real_group_leaves_its_implicit_job() -> None:
    sim = _sim(podgroup("team", 1), pod("web", requests={"cpu": 1}))
    assert sim.cache.is_implicit(JOB)
    grouped = copy.deepcopy(sim.cache.pod("default/web"))
    assert grouped is not None
    grouped["metadata"]["annotations"][KUBE_GROUP_NAME_ANNOTATION] = "team"
    sim.cache.update_pod(grouped)
    assert sim.cache.podgroup(JOB) is None
    assert sim.cycle().binds == {"default/web": "n1"}
    assert sim.podgroup_writes == ["team"]


def test_a_real_podgroup_of_its_name_replaces_it_and_is_written() -> None:
    sim = _sim(pod("web", requests={"cpu": 1}))
    real = podgroup("podgroup-web", 1)
    sim.cache.update_podgroup(real)
    assert not sim.cache.is_implicit(JOB)
    assert sim.cache.podgroup_object(JOB) is real
    assert sim.cycle().binds == {"default/web": "n1"}
    assert "podgroup-web" in sim.podgroup_writes


def test_a_pod_bound_before_a_restart_is_a_running_job() -> None:
    sim = _sim(pod("web", requests={"cpu": 1}, node_name="n1", phase="Running"))
    pg = sim.cache.podgroup(JOB)
    assert pg is not None
    assert pg["status"]["phase"] == "Running"
    assert sim.cache.queue_infos()["default"].allocated.get("cpu") == 1000
    sim.cycle()
    assert sim.podgroup_writes == []


def test_a_pod_of_another_scheduler_is_not_an_implicit_job() -> None:
    sim = _sim(pod("web", requests={"cpu": 1}, scheduler="default-scheduler"))
    assert sim.cache.podgroup_keys() == []


def test_binds_start_as_each_job_is_committed_not_after_the_cycle() -> None:
    sim = _sim(*[pod(f"web-{i}", requests={"cpu": 1}) for i in range(3)])
    started: list[list[str]] = []
    start = sim.writer.start_binds

    def recorded(tasks: list[Any]) -> Any:
        started.append([t.key for t in tasks])
        assert len(sim.cache.snapshot().jobs) == 3  # the session is still open
        return start(tasks)

    sim.writer.start_binds = recorded  # type: ignore[method-assign]
    result = sim.cycle()
    assert sorted(result.binds) == ["default/web-0", "default/web-1", "default/web-2"]
    assert sorted(started) == [["default/web-0"], ["default/web-1"], ["default/web-2"]]


def test_a_failed_bind_is_rolled_back_and_retried_next_cycle() -> None:
    sim = _sim(pod("web", requests={"cpu": 1}))
    sim.writer.fail = lambda task: "Conflict: try again"
    assert sim.cycle().binds == {}
    assert not sim.cache.is_assumed("default/web")
    sim.writer.fail = None
    assert sim.cycle().binds == {"default/web": "n1"}
