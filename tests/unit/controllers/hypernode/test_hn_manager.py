from __future__ import annotations

import threading

import pytest

from tests.unit.waits import WAIT_S
from volcano_py.controllers.hypernode.config import (
    ConfigError,
    DiscoveryConfig,
    NetworkTopologyConfig,
    Problem,
    parse_config_text,
)
from volcano_py.controllers.hypernode.discovery import (
    DiscovererRegistry,
    DiscovererStartError,
    DiscoveryContext,
    ResultSink,
    UnknownSourceError,
)
from volcano_py.controllers.hypernode.manager import DiscoveryManager
from volcano_py.kube.store import Store


class Recording:
    """A discoverer that records its lifecycle and hands its sink to the test."""

    log: list[str] = []

    def __init__(self, config: DiscoveryConfig, context: DiscoveryContext) -> None:
        if config.config.get("bad"):
            raise ConfigError("config.bad: no")
        self.config = config
        self.sink: ResultSink | None = None
        self.synced = 0

    @property
    def name(self) -> str:
        return self.config.source

    def start(self, sink: ResultSink) -> None:
        if self.config.config.get("start") == "later":
            raise DiscovererStartError("Secret not found", retryable=True)
        if self.config.config.get("start") == "never":
            raise DiscovererStartError("endpoint is not configured")
        self.sink = sink
        Recording.log.append(f"start {self.name}")

    def stop(self) -> None:
        Recording.log.append(f"stop {self.name}")

    def result_synced(self) -> None:
        self.synced += 1


@pytest.fixture
def harness() -> tuple[DiscoveryManager, list[str], list[str], dict[str, Recording]]:
    Recording.log = []
    instances: dict[str, Recording] = {}

    def factory(config: DiscoveryConfig, context: DiscoveryContext) -> Recording:
        instance = Recording(config, context)
        instances[config.source] = instance
        return instance

    registry = DiscovererRegistry()
    for source in ("alpha", "beta", "gamma"):
        registry.register(source, factory)
    queued: list[str] = []
    problems: list[str] = []
    manager = DiscoveryManager(
        registry,
        DiscoveryContext(Store(), Store()),
        on_result=queued.append,
        on_problem=problems.append,
    )
    return manager, queued, problems, instances


def conf(text: str) -> NetworkTopologyConfig:
    return parse_config_text("networkTopologyDiscovery:\n" + text)


def test_registry_rejects_duplicates_and_lists_known_sources_for_an_unknown_one() -> None:
    registry = DiscovererRegistry()
    registry.register("ufm", Recording)
    registry.register("label", Recording)
    with pytest.raises(ValueError, match="already registered"):
        registry.register("ufm", Recording)
    with pytest.raises(UnknownSourceError, match="known sources: label, ufm"):
        registry.get("roce")
    assert list(registry) == ["label", "ufm"]


def test_manager_restarts_exactly_the_changed_sources_and_stops_removed_ones(harness) -> None:
    manager, _, _, _ = harness
    manager.apply(
        conf(
            "- {source: alpha, enabled: true}\n"
            "- {source: beta, enabled: true, interval: 1m}\n"
            "- {source: gamma, enabled: true}"
        )
    )
    assert Recording.log == ["start alpha", "start beta", "start gamma"]
    Recording.log.clear()
    outcome = manager.apply(
        conf(
            "- {source: beta, enabled: true, interval: 2m}\n"
            "- {source: alpha, enabled: true}\n"
            "- {source: gamma, enabled: false}"
        )
    )
    assert Recording.log == ["stop gamma", "stop beta", "start beta"]
    assert (outcome.started, sorted(outcome.stopped)) == (["beta"], ["beta", "gamma"])
    assert sorted(manager.running()) == ["alpha", "beta"]


def test_manager_rejects_an_unknown_source_naming_the_entry_and_the_known_ones(harness) -> None:
    manager, _, problems, _ = harness
    manager.apply(conf("- {source: roce, enabled: true}\n- {source: alpha, enabled: true}"))
    assert problems == [
        'networkTopologyDiscovery[0] (source "roce"): '
        "unknown discovery source 'roce'; known sources: alpha, beta, gamma"
    ]
    assert list(manager.running()) == ["alpha"]


def test_manager_keeps_a_running_source_when_its_new_entry_is_invalid(harness) -> None:
    manager, _, problems, _ = harness
    manager.apply(conf("- {source: alpha, enabled: true}"))
    Recording.log.clear()
    broken = NetworkTopologyConfig(
        problems=(Problem("alpha", "networkTopologyDiscovery[0]: interval: bad"),)
    )
    manager.apply(broken)
    assert Recording.log == []
    assert list(manager.running()) == ["alpha"]
    assert problems == ["networkTopologyDiscovery[0]: interval: bad"]
    manager.apply(conf("- {source: alpha, enabled: true, config: {bad: true}}"))
    assert list(manager.running()) == ["alpha"]  # the bad config: is rejected, alpha runs on
    assert Recording.log == []
    assert "config.bad: no" in problems[-1]


def test_manager_retries_a_retryable_start_failure_and_not_a_permanent_one(harness) -> None:
    manager, _, problems, _ = harness
    later = conf("- {source: alpha, enabled: true, config: {start: later}}")
    assert manager.apply(later).retry is True
    assert manager.apply(later).retry is True
    assert len(problems) == 2
    assert "cannot start: Secret not found" in problems[0]
    never = conf("- {source: beta, enabled: true, config: {start: never}}")
    assert manager.apply(never).retry is False
    manager.apply(never)
    assert len(problems) == 3  # not retried until the entry changes
    assert manager.running() == {}


def test_manager_holds_one_result_in_flight_per_source(harness) -> None:
    manager, queued, _, instances = harness
    manager.apply(conf("- {source: alpha, enabled: true}"))
    sink = instances["alpha"].sink
    assert sink is not None
    assert sink.submit([{"metadata": {"name": "a"}}]) is True
    assert queued == ["alpha"]
    first = manager.pending("alpha")
    assert first is not None
    assert first.ok

    second = threading.Thread(target=sink.fail, args=("boom",))
    second.start()
    second.join(0.05)
    assert second.is_alive()  # blocked: the first result is not reconciled yet
    assert manager.pending("alpha") is first
    manager.result_synced("alpha", first)
    second.join(WAIT_S)
    assert not second.is_alive()
    pending = manager.pending("alpha")
    assert pending is not None
    assert pending.error == "boom"
    assert instances["alpha"].synced == 1
    assert queued == ["alpha", "alpha"]


def test_manager_stopping_a_source_drops_its_result_and_unblocks_its_sink(harness) -> None:
    manager, _, _, instances = harness
    manager.apply(conf("- {source: alpha, enabled: true}"))
    sink = instances["alpha"].sink
    assert sink is not None
    sink.submit([])
    blocked = threading.Thread(target=sink.submit, args=([],))
    blocked.start()
    manager.apply(conf("- {source: alpha, enabled: false}"))
    blocked.join(WAIT_S)
    assert not blocked.is_alive()
    assert manager.pending("alpha") is None
    assert sink.stopped
    assert sink.submit([]) is False
