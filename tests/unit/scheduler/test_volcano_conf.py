"""Volcano's own scheduler confs load unchanged; hot reload keeps a bad edit out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from volcano_py.kube.events import FakeRecorder
from volcano_py.scheduler.conf_watch import ConfWatch
from volcano_py.scheduler.framework.arguments import ConfError
from volcano_py.scheduler.framework.conf import DEFAULT_SCHEDULER_CONF
from volcano_py.scheduler.framework.registry import load_conf
from volcano_py.scheduler.framework.volcano_names import ENABLE_SWITCHES
from volcano_py.scheduler.scheduler import builtin_registries

# Volcano's Helm chart configs (installer/helm/chart/volcano/config/), as users ship them.
CHART_CONF = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
    enablePreemptable: false
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
"""
CHART_CI_CONF = """\
actions: "enqueue, allocate, backfill, reclaim, preempt"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
  - name: sla
- plugins:
  - name: overcommit
  - name: drf
    enablePreemptable: false
  - name: predicates
    arguments:
      predicate.DynamicResourceAllocationEnable: true
  - name: proportion
  - name: nodeorder
  - name: binpack
  - name: network-topology-aware
"""


def _load(text: str) -> Any:
    plugins, actions = builtin_registries()
    return load_conf(text, plugins, actions)


@pytest.mark.parametrize("text", [CHART_CONF, CHART_CI_CONF], ids=["chart", "chart-ci"])
def test_chart_confs_load_and_keep_what_runs(text: str) -> None:
    conf = _load(text)
    plugins, actions = builtin_registries()
    running = [p.name for tier in conf.tiers for p in tier]
    assert set(running) <= plugins.names()
    assert set(conf.actions) <= actions.names()
    assert "allocate" in conf.actions
    assert {"priority", "gang", "predicates", "nodeorder"} <= set(running)
    for entry in conf.not_implemented:
        kind, _, name = entry.partition(" ")
        assert name not in (plugins.names() if kind == "plugin" else actions.names())


def test_chart_conf_runs_every_entry() -> None:
    conf = _load(CHART_CONF)
    assert conf.not_implemented == ()
    assert [p.name for tier in conf.tiers for p in tier] == [
        "priority", "gang", "conformance", "overcommit", "drf", "predicates", "proportion",
        "nodeorder", "binpack",
    ]  # fmt: skip


def test_chart_ci_runs_sla_and_reclaim() -> None:
    conf = _load(CHART_CI_CONF)
    assert conf.not_implemented == ()
    assert "reclaim" in conf.actions
    assert "sla" in [p.name for tier in conf.tiers for p in tier]


def test_gangpreempt_and_gangreclaim_are_the_same_actions() -> None:
    conf = _load('actions: "enqueue, allocate, gangpreempt, gangreclaim"\n')
    assert conf.actions == ("enqueue", "allocate", "gangpreempt", "gangreclaim")
    assert not conf.not_implemented


def test_every_volcano_switch_is_accepted_and_gates_its_point() -> None:
    lines = "\n".join(f"    {key}: false" for key in ENABLE_SWITCHES)
    conf = _load(f"tiers:\n- plugins:\n  - name: gang\n{lines}\n")
    option = conf.tiers[0][0]
    assert len(ENABLE_SWITCHES) >= 25
    for point in ENABLE_SWITCHES.values():
        assert not option.enabled(point)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('actions: "enqueue, allocatex"', "unknown action 'allocatex' (known: allocate, backfill"),
        ("tiers: [{plugins: [{name: slaa}]}]", "tiers[0].plugins[0].name: unknown plugin 'slaa'"),
        ("tiers: [{plugins: [{name: gang, enableFoo: true}]}]", "enableJobStarving"),
        ("configurations: [{name: allocat}]", "configurations[0].name: unknown action"),
        (
            "configurations: [{name: allocate, arguments: {enablePredicateErrorCache: x}}]",
            "arguments[enablePredicateErrorCache]: expected a boolean",
        ),
        ("configurations: {allocate: {}}", "configurations: expected a list"),
    ],
    ids=["action", "plugin", "switch", "configurations-name", "configurations-type", "shape"],
)
def test_unknown_names_are_errors_listing_the_known(text: str, message: str) -> None:
    with pytest.raises(ConfError) as info:
        _load(text)
    assert message in str(info.value)


def test_configurations_read_and_metrics_warned() -> None:
    conf = _load(
        "configurations:\n"
        "- name: allocate\n  arguments: {enablePredicateErrorCache: true, foo: 1}\n"
        "metrics: {type: prometheus, address: http://x}\n"
    )
    assert conf.action_arguments("allocate").get_bool("enablePredicateErrorCache", False)
    assert any("arguments[foo]: ignored" in w for w in conf.warnings)
    assert any(w.startswith("metrics: ignored") for w in conf.warnings)


GANG_ONLY_CONF = (
    Path(__file__).parents[3] / "examples" / "scheduler" / "gang-topology-only.conf"
).read_text()


def _cm(text: str | None) -> dict[str, Any]:
    data = {} if text is None else {"volcano-scheduler.conf": text}
    return {"metadata": {"name": "volcano-scheduler-configmap", "namespace": "vs"}, "data": data}


def test_conf_watch_applies_valid_edit_and_keeps_running_conf_on_bad_one() -> None:
    plugins, actions = builtin_registries()
    holder: dict[str, Any] = {"cm": _cm(GANG_ONLY_CONF)}
    recorder = FakeRecorder()
    start = load_conf(GANG_ONLY_CONF, plugins, actions)
    watch = ConfWatch(start, plugins, actions, configmap=lambda: holder["cm"], recorder=recorder)
    assert watch.current().actions == ("enqueue", "allocate")

    holder["cm"] = _cm(CHART_CONF)
    applied = watch.current()
    assert applied.actions == ("enqueue", "allocate", "backfill")
    assert "proportion" in [p.name for t in applied.tiers for p in t]

    holder["cm"] = _cm('actions: "enqueue, alocate"')
    assert watch.current() is applied
    assert watch.current() is applied
    assert len(recorder.events) == 1
    kind, reason, message = recorder.events[0]
    assert (kind, reason) == ("Warning", "InvalidSchedulerConf")
    assert "unknown action 'alocate'" in message
    assert watch.last_error is not None
    assert "vs/volcano-scheduler-configmap" in watch.last_error

    holder["cm"] = None
    assert watch.current() is applied
    holder["cm"] = _cm(GANG_ONLY_CONF)
    assert watch.current().actions == ("enqueue", "allocate")
    assert watch.last_error is None


def test_conf_watch_survives_a_crashing_plugin_builder() -> None:
    plugins, actions = builtin_registries()

    def broken(_: object) -> Any:
        raise RuntimeError("boom")

    plugins.register("broken", broken)
    start = load_conf(DEFAULT_SCHEDULER_CONF, plugins, actions)
    recorder = FakeRecorder()
    cm = _cm("tiers: [{plugins: [{name: broken}]}]")
    watch = ConfWatch(start, plugins, actions, configmap=lambda: cm, recorder=recorder)
    assert watch.current() is start
    assert "RuntimeError: boom" in recorder.events[0][2]


def test_conf_watch_keeps_running_conf_on_an_alias_bomb_with_a_short_error() -> None:
    # The 453-byte document of issue 26: a plugin weight that is 9**9 words once expanded.
    levels = ["l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    levels += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 9)]
    bomb = "x:\n" + "\n".join("  " + line for line in levels) + "\n"
    text = bomb + "tiers:\n- plugins:\n  - name: binpack\n    arguments: {binpack.weight: *l8}\n"
    plugins, actions = builtin_registries()
    start = load_conf(DEFAULT_SCHEDULER_CONF, plugins, actions)
    recorder = FakeRecorder()
    watch = ConfWatch(start, plugins, actions, configmap=lambda: _cm(text), recorder=recorder)
    assert watch.current() is start
    assert watch.last_error == (
        "vs/volcano-scheduler-configmap volcano-scheduler.conf: scheduler conf:7: expands to "
        "more than 100000 values (size cap)"
    )
    [(_, _, message)] = recorder.events
    assert len(message) < 200
