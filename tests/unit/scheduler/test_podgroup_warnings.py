"""Topology asked through PodGroup annotations: the spec wins, bad values are told once."""

from __future__ import annotations

import pytest

from tests.unit.scheduler.objects import hypernode, node, pod, podgroup
from tests.unit.scheduler.test_volcano_conf import GANG_ONLY_CONF
from volcano_py.api.topology_annotations import INVALID_TOPOLOGY_ANNOTATION_REASON
from volcano_py.kube.events import FakeRecorder
from volcano_py.scheduler.api.job_info import JobInfo
from volcano_py.scheduler.conf_watch import CONF_KEY
from volcano_py.scheduler.podgroup_warnings import PodGroupWarnings
from volcano_py.scheduler.simulator import Simulator, load_scheduler_conf

MODE = "volcano.sh/network-topology-mode"
TIER = "volcano.sh/network-topology-highest-tier"


def test_job_info_spec_topology_wins_over_annotations() -> None:
    job = JobInfo(podgroup("pg", 2, mode="soft", annotations={MODE: "hard", TIER: "1"}))
    assert (job.mode, job.highest_tier, job.topology_warning) == ("soft", None, "")


def test_job_info_reads_annotations_when_the_spec_has_no_topology() -> None:
    job = JobInfo(podgroup("pg", 2, annotations={TIER: "1"}))
    assert (job.mode, job.highest_tier) == ("hard", 1)
    assert job.with_network_topology()


def test_cycle_reports_a_bad_annotation_and_schedules_without_topology() -> None:
    objects = [
        node("n1", {"cpu": "4"}),
        node("n2", {"cpu": "4"}),
        hypernode("r1", 1, nodes=["n1"]),
        hypernode("r2", 1, nodes=["n2"]),
        podgroup("pg", 2, annotations={MODE: "strict", TIER: "1"}),
        pod("p0", "pg", {"cpu": "4"}),
        pod("p1", "pg", {"cpu": "4"}),
    ]
    sim = Simulator(objects, load_scheduler_conf(None))
    result = sim.cycle()  # enqueue, then allocate in the same session
    assert len(result.binds) == 2
    reason, message = result.warnings["default/pg"]
    assert reason == INVALID_TOPOLOGY_ANNOTATION_REASON
    assert f"{MODE}='strict'" in message
    assert "PodGroup default/pg" in message


def test_podgroup_warnings_once_per_podgroup_and_message() -> None:
    recorder = FakeRecorder()
    warnings = PodGroupWarnings(recorder)
    pg = podgroup("pg", 1)
    pg["metadata"]["uid"] = "u-1"
    lookup = {"default/pg": pg}.get
    told = {"default/pg": ("Reason", "first")}
    assert warnings.record(told, lookup) == 1
    assert warnings.record(told, lookup) == 0
    assert warnings.record({}, lookup) == 0
    assert warnings.record(told, lookup) == 0  # left the snapshot and came back: not news
    assert warnings.record({"default/pg": ("Reason", "second")}, lookup) == 1
    assert warnings.record({"default/gone": ("Reason", "x")}, lookup) == 0
    pg2 = dict(pg, metadata=dict(pg["metadata"], uid="u-2"))  # deleted and created again
    assert warnings.record(told, {"default/pg": pg2}.get) == 1
    assert [e[2] for e in recorder.events] == ["first", "second", "first"]
    assert recorder.references[0]["kind"] == "PodGroup"
    assert PodGroupWarnings(None).record(told, lookup) == 0


# the gang-only example without its network-topology-aware line
CHART_WITHOUT_TOPOLOGY = GANG_ONLY_CONF.replace("  - name: network-topology-aware\n", "")


def test_cycle_warns_a_topology_job_when_the_plugin_is_not_configured() -> None:
    from volcano_py.scheduler.framework.registry import load_conf
    from volcano_py.scheduler.scheduler import builtin_registries
    from volcano_py.scheduler.topology_config import NOT_CONFIGURED_REASON

    plugins, actions = builtin_registries()
    objects = [
        node("n1", {"cpu": "4"}),
        podgroup("topo", 1, mode="hard", highest_tier=1),
        podgroup("plain", 1),
        pod("t0", "topo", {"cpu": "1"}),
        pod("p0", "plain", {"cpu": "1"}),
    ]
    assert "- name: network-topology-aware" not in CHART_WITHOUT_TOPOLOGY
    result = Simulator(objects, load_conf(CHART_WITHOUT_TOPOLOGY, plugins, actions)).cycle()
    assert len(result.binds) == 2
    assert set(result.warnings) == {"default/topo"}
    reason, message = result.warnings["default/topo"]
    assert reason == NOT_CONFIGURED_REASON
    assert "highest tier 1" in message
    racked = [*objects, hypernode("rack", 1, nodes=["n1"])]
    with_plugin = Simulator(racked, load_scheduler_conf(None)).cycle()
    assert with_plugin.warnings == {}


def test_cycle_warns_a_hard_job_placed_at_the_cluster_top_for_want_of_its_tier() -> None:
    from volcano_py.scheduler.topology_config import TIER_MISSING_REASON

    objects = [
        node("n1", {"cpu": "4"}),
        node("n2", {"cpu": "4"}),
        podgroup("topo", 2, mode="hard", highest_tier=1),
        pod("t0", "topo", {"cpu": "3"}),
        pod("t1", "topo", {"cpu": "3"}),
    ]
    result = Simulator(objects, load_scheduler_conf(None)).cycle()
    assert len(result.binds) == 2  # as Volcano: at the cluster top, across both nodes
    reason, message = result.warnings["default/topo"]
    assert reason == TIER_MISSING_REASON
    assert "no HyperNode at tier 1 or below" in message
    # a tree with only a tier above the job's: the top is out of reach, the job waits
    waiting = Simulator(
        [*objects, hypernode("spine", 2, nodes=["n1", "n2"])], load_scheduler_conf(None)
    )
    assert waiting.cycle().warnings == {}


def test_conf_watch_notes_a_conf_without_the_topology_plugin_once_per_load(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from volcano_py.scheduler.conf_watch import ConfWatch
    from volcano_py.scheduler.framework.conf import DEFAULT_SCHEDULER_CONF
    from volcano_py.scheduler.framework.registry import load_conf
    from volcano_py.scheduler.scheduler import builtin_registries

    plugins, actions = builtin_registries()
    holder = {"text": CHART_WITHOUT_TOPOLOGY}

    def configmap() -> dict[str, object]:
        return {"metadata": {"name": "cm", "namespace": "ns"}, "data": {CONF_KEY: holder["text"]}}

    start = load_conf(DEFAULT_SCHEDULER_CONF, plugins, actions)
    watch = ConfWatch(start, plugins, actions, configmap=configmap)
    assert watch.topology_note == ""
    with caplog.at_level("WARNING"):
        watch.current()
        watch.current()
    assert "no network-topology-aware plugin" in watch.topology_note
    assert sum("network-topology-aware" in r.getMessage() for r in caplog.records) == 1
    holder["text"] = DEFAULT_SCHEDULER_CONF
    watch.current()
    assert watch.topology_note == ""
