"""YAML scenarios (Volcano's uthelper idea): a cluster in, expected binds and phases out.

Each file in ``scenarios/`` has ``cluster`` (see ``objects.expand``), optional ``conf`` (a
``volcano-scheduler.conf`` text) and ``expect``:

- ``bindings``: exact ``{ns/pod: node}`` pairs that must be made;
- ``bound``: how many pods are bound in total; ``unbound``: pods that must stay pending;
- ``within``: ``{ns/podgroup: hypernode}`` — every pod of the group lands under it;
- ``boundAtLeast``: ``{ns/podgroup: n}`` — at least n pods of the group are bound;
- ``phases``, ``allocatedHyperNode``: per PodGroup;
- ``messages``: ``{ns/podgroup: substring}`` of its Unschedulable condition message;
- ``podMessages``: ``{ns/pod: substring}`` of a FailedScheduling event of the pod, and
  ``notInMessages``: substrings no condition message and no such event may contain;
- ``queueAllocated``: ``{queue: ResourceList}`` the queue holds at the end;
- ``subJobs``: ``{ns/podgroup: {subjob: hypernode}}`` — each SubJob's allocated HyperNode
  (the lowest holding its pods; ``""`` when none is placed);
- ``evicted`` / ``notEvicted``: pods preempt/reclaim must / must not evict;
  ``evictedCount``: how many were evicted in all; ``evictionsFor``: ``{ns/podgroup: n}``
  pods evicted for that preemptor.

Optional ``steps``: what happens next, in order, each followed by the scheduler running again
until nothing changes and its own ``expect`` (the keys above). A step ``terminates`` pods
(``ns/pod``: they get a ``deletionTimestamp`` and keep running), ``adds`` pods (as in
``cluster.pods``), ``deletes`` pods (gone from the cluster) and then lets ``seconds`` pass on
the scheduler's clock.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.unit.scheduler.objects import expand
from volcano_py.kube.clock import FakeClock
from volcano_py.scheduler.framework.registry import load_conf
from volcano_py.scheduler.scheduler import builtin_registries
from volcano_py.scheduler.simulator import Simulator, load_scheduler_conf

SCENARIOS = sorted((Path(__file__).parent / "scenarios").glob("*.yaml"))


def _load(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text())


def _placed(objects: list[dict[str, Any]], group: str, bindings: dict[str, str]) -> dict[str, str]:
    """``{pod: node}`` of the bound pods of ``group`` (``ns/podgroup``)."""
    ns, name = group.split("/")
    pods = [
        o["metadata"]["name"]
        for o in objects
        if o["kind"] == "Pod"
        and o["metadata"]["namespace"] == ns
        and o["metadata"]["annotations"].get("scheduling.k8s.io/group-name") == name
    ]
    return {p: bindings[f"{ns}/{p}"] for p in pods if f"{ns}/{p}" in bindings}


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_scenario_binds_and_phases_as_expected(path: Path) -> None:
    scenario = _load(path)
    conf = load_scheduler_conf(None)
    if scenario.get("conf"):
        plugins, actions = builtin_registries()
        conf = load_conf(scenario["conf"], plugins, actions)
    objects = expand(scenario["cluster"])
    clock = FakeClock()
    sim = Simulator(objects, conf, clock=clock)
    _check(scenario["expect"], objects, sim, sim.run())
    for step in scenario.get("steps") or ():
        for key in step.get("terminates") or ():
            pod = copy.deepcopy(sim.cache.pod(key))
            assert pod is not None, key
            pod["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
            sim.cache.update_pod(pod)
        for pod in expand({"pods": step.get("adds") or ()}):
            objects.append(pod)
            sim.cache.update_pod(pod)
        for key in step.get("deletes") or ():
            pod = sim.cache.pod(key)
            assert pod is not None, key
            sim.cache.delete_pod(pod)
        clock.step(step.get("seconds", 0))
        _check(step["expect"], objects, sim, sim.run())


def _check(expect: Any, objects: Any, sim: Simulator, result: Any) -> None:
    _check_placement(expect, objects, result, sim.cache.hypernodes.build())
    _check_statuses(expect, result, sim.cache.snapshot().queues)
    _check_messages(expect, result)
    _check_evictions(expect, result)


def _check_placement(expect: Any, objects: Any, result: Any, tree: Any) -> None:
    """``bindings``, ``bound``, ``unbound``, ``within`` and ``boundAtLeast``."""
    for pod, node in (expect.get("bindings") or {}).items():
        assert result.bindings.get(pod) == node, (pod, result.bindings)
    if "bound" in expect:
        assert len(result.bindings) == expect["bound"], result.bindings
    for pod in expect.get("unbound") or ():
        assert pod not in result.bindings, (pod, result.bindings)
    for group, hn in (expect.get("within") or {}).items():
        members = tree.real_nodes[hn]
        placed = _placed(objects, group, result.bindings)
        assert all(n in members for n in placed.values()), (group, hn, placed)
    for group, n in (expect.get("boundAtLeast") or {}).items():
        placed = _placed(objects, group, result.bindings)
        assert len(placed) >= n, (group, n, placed)


def _check_statuses(expect: Any, result: Any, queues: Any) -> None:
    """``phases``, ``allocatedHyperNode``, ``subJobs`` and ``queueAllocated``."""
    for group, phase in (expect.get("phases") or {}).items():
        assert result.podgroups[group]["phase"] == phase, (group, result.podgroups[group])
    for group, hn in (expect.get("allocatedHyperNode") or {}).items():
        assert result.podgroups[group]["allocatedHyperNode"] == hn, result.podgroups[group]
    for group, sub_jobs in (expect.get("subJobs") or {}).items():
        got = result.podgroups[group].get("subJobs", {})
        for uid, hn in sub_jobs.items():
            assert got.get(uid, {}).get("allocatedHyperNode") == hn, (group, uid, got)
    for name, allocated in (expect.get("queueAllocated") or {}).items():
        assert queues[name].allocated.to_list() == allocated, (name, queues[name].status())


def _check_messages(expect: Any, result: Any) -> None:
    """``messages`` (PodGroup conditions), ``podMessages`` (events), ``notInMessages``."""
    for group, text in (expect.get("messages") or {}).items():
        messages = [c["message"] for c in result.podgroups[group]["conditions"]]
        assert any(text in m for m in messages), (group, messages)
    events = [(key, message) for key, _, message in result.events]
    for pod, text in (expect.get("podMessages") or {}).items():
        said = [m for key, m in events if key == pod]
        assert any(text in m for m in said), (pod, said)
    everything = [m for _, m in events] + [
        c.get("message", "") for pg in result.podgroups.values() for c in pg["conditions"]
    ]
    for text in expect.get("notInMessages") or ():
        assert not any(text in m for m in everything), (text, everything)


def _check_evictions(expect: Any, result: Any) -> None:
    """``evicted``, ``notEvicted``, ``evictedCount`` and ``evictionsFor``."""
    for pod in expect.get("evicted") or ():
        assert pod in result.evictions, (pod, result.evictions)
    for pod in expect.get("notEvicted") or ():
        assert pod not in result.evictions, (pod, result.evictions)
    if "evictedCount" in expect:
        assert len(result.evictions) == expect["evictedCount"], result.evictions
    for group, n in (expect.get("evictionsFor") or {}).items():
        assert list(result.evictions.values()).count(group) == n, result.evictions
