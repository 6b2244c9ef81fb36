"""Resources as kube-scheduler counts them: its NodeResourcesFit cases through the scheduler.

kube-scheduler v1.37's ``TestEnoughRequests``, ``TestStorageRequests`` and
``TestRestartableInitContainers`` tables (inputs and outcomes): a node of 10m cpu, 20 bytes of
memory, 32 pods, 5 ``example.com/aaa``, 20 bytes of ephemeral-storage and 5 bytes of
``hugepages-2Mi`` holds one running pod; a pod with app containers, init containers, sidecars,
overhead or pod-level resources comes. Each case runs the real cycle; a pod that does not fit
stays pending with kube-scheduler's reason (``filters_only_conf``: no queue plugin). Where
kube-scheduler names several insufficient resources, volcano-py names the first (cpu, memory,
then the others by name): the table gives that one.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.scheduler.helpers import filters_only_conf
from tests.unit.scheduler.objects import node, pod, podgroup
from volcano_py.scheduler.simulator import Simulator

JSON = dict[str, Any]
AAA = "example.com/aaa"
BBB = "example.com/bbb"
HUGE = "hugepages-2Mi"
STORAGE = "ephemeral-storage"
NO_CPU, NO_MEMORY = "Insufficient cpu", "Insufficient memory"
NO_AAA, NO_BBB, NO_HUGE = (f"Insufficient {n}" for n in (AAA, BBB, HUGE))
NODE = {"cpu": "10m", "memory": "20", "pods": "32", AAA: "5", STORAGE: "20", HUGE: "5"}


def r(cpu: int = 0, memory: int = 0, **scalars: int) -> JSON:
    """A container asking ``cpu`` milli-cpu, ``memory`` bytes and the given scalars."""
    names = {"aaa": AAA, "bbb": BBB, "kio": "kubernetes.io/something", "huge": HUGE}
    requests = {"cpu": f"{cpu}m", "memory": str(memory)}
    for key, amount in scalars.items():
        requests[names.get(key, STORAGE)] = str(amount)
    return {"name": "c", "resources": {"requests": requests}}


def spec(*containers: JSON, init: tuple[JSON, ...] = (), **more: Any) -> JSON:
    out: JSON = {"containers": list(containers), **more}
    if init:
        out["initContainers"] = list(init)
    return out


def inits(*containers: JSON) -> JSON:
    """A pod asking nothing in its app container and ``containers`` as init containers."""
    return spec(r(), init=containers)


def sidecar(container: JSON) -> JSON:
    return {**container, "restartPolicy": "Always"}


# (id, incoming pod's spec, the running pod's container, kube-scheduler's (first) reason)
CASES = [
    ("no-resources-requested-always-fits", spec(), r(10, 20), None),
    ("too-many-resources-fails", spec(r(1, 1)), r(10, 20), NO_CPU),
    ("init-container-cpu", spec(r(1, 1), init=(r(3, 1),)), r(8, 19), NO_CPU),
    ("highest-init-cpu", spec(r(1, 1), init=(r(3, 1), r(2, 1))), r(8, 19), NO_CPU),
    ("init-container-memory", spec(r(1, 1), init=(r(1, 3),)), r(9, 19), NO_MEMORY),
    ("highest-init-memory", spec(r(1, 1), init=(r(1, 3), r(1, 2))), r(9, 19), NO_MEMORY),
    ("init-is-max-not-sum", spec(r(1, 1), init=(r(1, 1),)), r(9, 19), None),
    ("multiple-init-are-max-not-sum", spec(r(1, 1), init=(r(1, 1), r(1, 1))), r(9, 19), None),
    ("both-resources-fit", spec(r(1, 1)), r(5, 5), None),
    ("one-resource-memory-fits", spec(r(2, 1)), r(9, 5), NO_CPU),
    ("one-resource-cpu-fits", spec(r(1, 2)), r(5, 19), NO_MEMORY),
    ("equal-edge-case", spec(r(5, 1)), r(5, 19), None),
    ("equal-edge-case-for-init", spec(r(4, 1), init=(r(5, 1),)), r(5, 19), None),
    ("extended-resource-fits", spec(r(aaa=1)), r(), None),
    ("extended-resource-fits-for-init", inits(r(aaa=1)), r(), None),
    ("extended-capacity-enforced", spec(r(1, 1, aaa=10)), r(aaa=0), NO_AAA),
    ("ext-capacity-init", inits(r(1, 1, aaa=10)), r(aaa=0), NO_AAA),
    ("extended-allocatable-enforced", spec(r(1, 1, aaa=1)), r(aaa=5), NO_AAA),
    ("ext-allocatable-init", inits(r(1, 1, aaa=1)), r(aaa=5), NO_AAA),
    ("ext-multiple-containers", spec(r(1, 1, aaa=3), r(1, 1, aaa=3)), r(aaa=2), NO_AAA),
    ("ext-admits-multiple-init", inits(r(1, 1, aaa=3), r(1, 1, aaa=3)), r(aaa=2), None),
    ("ext-enforced-multiple-init", inits(r(1, 1, aaa=6), r(1, 1, aaa=3)), r(aaa=2), NO_AAA),
    ("unknown-extended-resource", spec(r(1, 1, bbb=1)), r(), NO_BBB),
    ("unknown-ext-init", inits(r(1, 1, bbb=1)), r(), NO_BBB),
    ("kubernetes-io-resource", spec(r(1, 1, kio=10)), r(), "Insufficient kubernetes.io/something"),
    ("hugepages-capacity-enforced", spec(r(1, 1, huge=10)), r(huge=0), NO_HUGE),
    ("hugepages-capacity-init", inits(r(1, 1, huge=10)), r(huge=0), NO_HUGE),
    ("hugepages-multiple-containers", spec(r(1, 1, huge=3), r(1, 1, huge=3)), r(huge=2), NO_HUGE),
    ("overhead-fits", spec(r(1, 1), overhead={"cpu": "3m", "memory": "13"}), r(5, 5), None),
    (
        "overhead-memory-does-not-fit",
        spec(r(1, 1), overhead={"cpu": "1m", "memory": "15"}),
        r(5, 5),
        NO_MEMORY,
    ),
    (
        "pod-level-resources-fit",
        spec(r(1, 1), resources={"requests": {"cpu": "2m", "memory": "2"}}),
        r(5, 5),
        None,
    ),
    (
        "pod-level-cpu-does-not-fit",
        spec(r(1, 1), resources={"requests": {"cpu": "7m", "memory": "2"}}),
        r(5, 5),
        NO_CPU,
    ),
    (
        "pod-level-memory-does-not-fit",
        spec(r(1, 1), resources={"requests": {"cpu": "3m", "memory": "2"}}),
        r(5, 19),
        NO_MEMORY,
    ),
    # TestStorageRequests
    ("empty-storage-requested-fits", spec(r(1, 1)), r(2, 10), None),
    ("storage-exceeds-allocatable", spec(r(storage=25)), r(2, 2), f"Insufficient {STORAGE}"),
    ("storage-is-sufficient", spec(r(storage=5)), r(2, 2, storage=10), None),
    ("storage-pod-fits", spec(r(storage=10)), r(2, 2), None),
    # TestRestartableInitContainers (node: 2m cpu): the sidecar runs beside the app container
    ("sidecar-within-allocatable", spec(r(1), init=(sidecar(r(1)),)), r(8), None),
    ("sidecar-beyond-allocatable", spec(r(1), init=(sidecar(r(2)),)), r(8), NO_CPU),
]


@pytest.mark.parametrize(
    ("incoming", "running", "reason"), [pytest.param(*c[1:], id=c[0]) for c in CASES]
)
def test_kube_scheduler_node_resources_fit_cases(
    incoming: JSON, running: JSON, reason: str | None
) -> None:
    holder = pod("m1", node_name="n1", phase="Running", scheduler="default-scheduler")
    holder["spec"]["containers"] = [running]
    objects = [node("n1", NODE), holder, podgroup("pg", 1), pod("p", "pg", spec=incoming)]
    result = Simulator(objects, filters_only_conf()).run()
    if reason is None:
        assert result.bindings == {"default/p": "n1"}
        return
    assert result.bindings == {}
    messages = [c["message"] for c in result.podgroups["default/pg"]["conditions"]]
    assert any(f"0/1 nodes are available: 1 {reason}." in m for m in messages), messages


def test_a_pod_carrying_a_node_name_is_accounted_on_its_node_before_it_runs() -> None:
    # bound by someone else a moment ago: still Pending, but its request holds the node
    placed = pod("placed", node_name="n1", scheduler="default-scheduler", spec=spec(r(8)))
    objects = [node("n1", NODE), placed, podgroup("pg", 1), pod("p", "pg", spec=spec(r(4)))]
    result = Simulator(objects).run()
    assert result.bindings == {}
    messages = [c["message"] for c in result.podgroups["default/pg"]["conditions"]]
    assert any("1 Insufficient cpu" in m for m in messages), messages
