from __future__ import annotations

from typing import Any

import pytest

from tests.unit.controllers.hypernode.hnfakes import FakeApi, exact, hypernode, node
from volcano_py.api import resources as R
from volcano_py.controllers.builtin import register_builtin_controllers
from volcano_py.controllers.framework import ControllerOptions, ControllerRegistry
from volcano_py.controllers.hypernode import HyperNodeController
from volcano_py.controllers.hypernode.config import DiscoveryConfig
from volcano_py.controllers.hypernode.discovery import (
    DiscovererRegistry,
    DiscoveryContext,
    ResultSink,
)
from volcano_py.controllers.hypernode.static import StaticDiscoverer
from volcano_py.kube.clock import FakeClock
from volcano_py.kube.events import FakeRecorder
from volcano_py.kube.informer import SharedInformerFactory

NS, CM = "vs", "volcano-controller-configmap"
SOURCE = "volcano.sh/network-topology-source"


class InlineStatic(StaticDiscoverer):
    """The example source, delivering its one result inside ``start`` (no thread)."""

    def start(self, sink: ResultSink) -> None:
        self.check()
        self.run_once(sink)


def inline_static(config: DiscoveryConfig, context: DiscoveryContext) -> InlineStatic:
    return InlineStatic(config, context)


class Harness:
    def __init__(self) -> None:
        self.api = FakeApi()
        registry = DiscovererRegistry()
        registry.register("static", inline_static)
        self.controller = HyperNodeController(
            registry=registry, clock=FakeClock(), configmap=(NS, CM)
        )
        factory = SharedInformerFactory(self.api)  # type: ignore[arg-type]
        # the controller reads HyperNodes from the same store the fake API writes
        hn_informer = factory.informer(R.HYPERNODES)
        hn_informer.store = self.api.store
        self.recorder = FakeRecorder()
        self.controller.initialize(
            ControllerOptions(client=self.api, informers=factory, recorder=self.recorder)
        )  # type: ignore[arg-type]
        self.configmaps = factory.informer(
            R.CONFIGMAPS, namespace=NS, field_selector=f"metadata.name={CM}"
        ).store
        self.nodes = factory.informer(R.NODES).store

    def set_config(self, text: str | None) -> None:
        if text is None:
            self.configmaps.remove(f"{NS}/{CM}")
            return
        self.configmaps.put(
            f"{NS}/{CM}",
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": CM, "namespace": NS, "uid": "u1"},
                "data": {"volcano-controller.conf": text},
            },
        )

    def apply(self, text: str) -> None:
        """Put ``text`` in the ConfigMap, sync it and reconcile what the sources deliver."""
        self.set_config(text)
        self.controller.sync_config(f"{NS}/{CM}")
        self.drain_sources()

    def drain_sources(self) -> None:
        while len(self.controller.source_queue):
            key = self.controller.source_queue.get()
            assert key is not None
            self.controller.sync_source(key)
            self.controller.source_queue.done(key)


STATIC = """
networkTopologyDiscovery:
  - source: static
    enabled: true
    config:
      hyperNodes:
        rack-a: {tier: 1, nodes: [n1, n2]}
        spine: {tier: 2, hyperNodes: [rack-a]}
"""


@pytest.fixture
def h() -> Any:
    harness = Harness()
    yield harness
    harness.controller.manager.stop()


def test_register_adds_the_hypernode_controller_by_its_wire_name() -> None:
    registry = ControllerRegistry()
    register_builtin_controllers(registry)
    assert "hyperNode-controller" in registry.names()
    assert registry.get("hyperNode-controller")().name == "hyperNode-controller"


def test_sync_config_without_a_configmap_runs_no_sources(h: Harness) -> None:
    assert h.controller.sync_config(f"{NS}/{CM}") is None
    assert h.controller.manager.running() == {}


def test_sync_config_then_sync_source_creates_the_discovered_hypernodes(h: Harness) -> None:
    h.set_config(STATIC)
    h.controller.sync_config(f"{NS}/{CM}")
    assert list(h.controller.manager.running()) == ["static"]
    h.drain_sources()
    assert h.api.names() == ["rack-a", "spine"]
    assert h.api.store.get("spine")["metadata"]["labels"] == {SOURCE: "static"}
    assert h.controller.manager.pending("static") is None  # acknowledged


def test_sync_config_keeps_sources_running_when_the_document_breaks(h: Harness) -> None:
    h.set_config(STATIC)
    h.controller.sync_config(f"{NS}/{CM}")
    h.set_config("networkTopologyDiscovery: [")
    h.controller.sync_config(f"{NS}/{CM}")
    assert list(h.controller.manager.running()) == ["static"]
    assert h.recorder.events[-1][1] == "InvalidDiscoveryConfig"
    assert "keeping the running sources" in h.recorder.events[-1][2]
    h.set_config(None)
    h.controller.sync_config(f"{NS}/{CM}")
    assert h.controller.manager.running() == {}


def test_sync_config_reports_an_invalid_entry_on_the_configmap(h: Harness) -> None:
    h.set_config(
        "networkTopologyDiscovery:\n  - {source: roce, enabled: true}\n" + STATIC.split("\n", 2)[2]
    )
    h.controller.sync_config(f"{NS}/{CM}")
    assert list(h.controller.manager.running()) == ["static"]
    (event_type, reason, message) = h.recorder.events[0]
    assert (event_type, reason) == ("Warning", "InvalidDiscoveryConfig")
    assert 'networkTopologyDiscovery[0] (source "roce")' in message
    assert "known sources: static" in message
    assert h.recorder.references[0]["kind"] == "ConfigMap"


def test_node_and_hypernode_events_queue_only_affected_node_counts(h: Harness) -> None:
    c = h.controller
    for name in ("n1", "n2", "n3"):
        c.on_node_add(node(name, rack="r1" if name != "n3" else "r2"))
    rack = hypernode(
        "rack", 1, [{"type": "Node", "selector": {"labelMatch": {"matchLabels": {"rack": "r1"}}}}]
    )
    other = hypernode("other", 1, [exact("n3")])
    for obj in (rack, other):
        h.api.put(obj)
        c.on_hypernode_add(obj)
    while len(c.status_queue):
        key = c.status_queue.get()
        c.sync_status(key)
        c.status_queue.done(key)
    assert h.api.store.get("rack")["status"]["nodeCount"] == 2
    assert h.api.store.get("other")["status"]["nodeCount"] == 1
    c.on_node_update(node("n3", rack="r2"), node("n3", rack="r1"))
    assert len(c.status_queue) == 1
    key = c.status_queue.get()
    assert key == "rack"
    c.sync_status(key)
    assert h.api.store.get("rack")["status"]["nodeCount"] == 3


RETYPED = """
networkTopologyDiscovery:
  - source: static
    enabled: true
    config:
      hyperNodes:
        rack-b: {tier: 1, nodes: [n1, n2]}
"""


def test_a_configuration_change_is_applied_past_the_limit_and_announced(h: Harness) -> None:
    h.apply(STATIC)
    h.apply(RETYPED)
    assert h.api.names() == ["rack-b"]  # 2 of 2 retired: no grace, no deletion limit
    kinds = [w[0] for w in h.api.writes()[2:]]
    assert kinds == ["delete", "delete", "create"]  # never two leaves for n1, n2
    event_type, reason, message = h.recorder.events[-1]
    assert (event_type, reason) == ("Normal", "DiscoveryConfigApplied")
    assert "retired 2 HyperNodes (rack-a, spine), created 1 (rack-b)" in message
    detail = h.controller.readiness_detail()
    assert len(detail) == 1
    assert "configuration change applied" in detail[0]


def test_a_missing_hypernode_is_looked_at_again_when_its_grace_period_ends(h: Harness) -> None:
    h.set_config(STATIC.replace("enabled: true", "enabled: true\n    deletionGracePeriod: 30s"))
    h.controller.sync_config(f"{NS}/{CM}")
    h.drain_sources()
    h.api.put(hypernode("extra", 1, [exact("n9")], labels={SOURCE: "static"}))
    h.controller.source_queue.add("static")  # its next round, with the same result
    h.controller.manager._slots["static"] = (  # what the discoverer would have delivered
        h.controller.manager._running["static"],
        h.controller._last_good["static"],
    )
    delay = h.controller.sync_source("static")
    assert delay is not None
    assert 30 <= delay <= 31
    assert "extra" in h.api.names()
    assert any("1 HyperNodes missing" in line for line in h.controller.readiness_detail())
    h.controller._clock.step(delay)  # type: ignore[attr-defined]
    assert h.controller.sync_source("static") is None  # the planned requeue: no new result
    assert "extra" not in h.api.names()
    assert h.controller.readiness_detail() == []


def test_the_managers_readyz_detail_carries_the_controllers_lines(h: Harness) -> None:
    from types import SimpleNamespace

    from volcano_py.manager import Manager

    h.controller.config_changes["static"] = "discovery source 'static': configuration change"
    built = [object(), h.controller]
    process = SimpleNamespace(controllers=SimpleNamespace(built=lambda: built), scheduler=None)
    lines = Manager.readiness_detail(process)  # type: ignore[arg-type]
    assert lines == ["hypernode discovery: discovery source 'static': configuration change"]


EMPTY = STATIC.replace(
    "      hyperNodes:\n        rack-a: {tier: 1, nodes: [n1, n2]}\n"
    "        spine: {tier: 2, hyperNodes: [rack-a]}\n",
    "      hyperNodes: {}\n",
)


def test_a_configuration_change_that_discovers_nothing_is_held_back_on_readyz(h: Harness) -> None:
    h.apply(STATIC)
    h.apply(EMPTY)
    assert h.api.names() == ["rack-a", "spine"]
    event_type, reason, message = h.recorder.events[-1]
    assert (event_type, reason) == ("Warning", "DiscoveryConfigHeldBack")
    detail = h.controller.readiness_detail()
    assert detail == [f"hypernode discovery: {message}"]
    assert "force: true" in detail[0]
    h.apply(EMPTY.replace("enabled: true", "enabled: true\n    force: true"))
    assert h.api.names() == []
    assert not any("held back" in line for line in h.controller.readiness_detail())
