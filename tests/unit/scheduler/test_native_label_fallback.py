"""A native group keyed by a label no HyperNode tier names: the pieces of ``allocate_label``.

The placement itself is the scenario ``native_podgroup_label_fallback``; here the value a
running gang is held to, and which nodes make a domain.
"""

from __future__ import annotations

from tests.unit.scheduler.objects import node, pod
from tests.unit.scheduler.test_native_groups import _native
from volcano_py.scheduler.actions.allocate_label import label_domains
from volcano_py.scheduler.api.node_info import NodeInfo
from volcano_py.scheduler.simulator import Simulator

ZONE = "example.com/zone"


def _in_group(
    name: str, gpus: int, node_name: str | None = None, phase: str = "Pending"
) -> dict[str, object]:
    spec = {"schedulingGroup": {"podGroupName": "g"}}
    requests = {"nvidia.com/gpu": gpus}
    return pod(name, requests=requests, spec=spec, node_name=node_name, phase=phase)


def test_domains_are_the_label_values_without_unlabelled_or_reserved_nodes() -> None:
    nodes = [
        NodeInfo(node("a1", {"cpu": 1}, labels={ZONE: "a"})),
        NodeInfo(node("b1", {"cpu": 1}, labels={ZONE: "b"})),
        NodeInfo(node("a2", {"cpu": 1}, labels={ZONE: "a"})),
        NodeInfo(node("none", {"cpu": 1})),
    ]
    domains = label_domains(nodes, ZONE, reserved={"a2"})
    assert {v: [n.name for n in d] for v, d in domains.items()} == {"a": ["a1"], "b": ["b1"]}


def test_a_running_gang_grows_only_within_the_value_it_runs_in() -> None:
    objects = [
        node("a1", {"nvidia.com/gpu": 4}, labels={ZONE: "a"}),
        node("b1", {"nvidia.com/gpu": 2}, labels={ZONE: "b"}),
        _native("g", {"gang": {"minCount": 2}}, ZONE),
        *(_in_group(f"g-{i}", 1, node_name="b1", phase="Running") for i in range(2)),
        _in_group("g-2", 1),  # zone b is full; zone a has room, but it is another value
    ]
    sim = Simulator(objects)
    assert sim.run().bindings == {}
    said = [message for key, _, message in sim.writer.events if key == "default/g-2"]
    assert any("none of its 1 value(s) holds it" in m for m in said), said
