"""The sla plugin: waiting time from annotation or argument, deadline order, overdue permit."""

from __future__ import annotations

from datetime import datetime

import pytest

from tests.unit.scheduler.objects import node, pod, podgroup
from volcano_py.scheduler.framework.conf import ConfError
from volcano_py.scheduler.framework.registry import load_conf
from volcano_py.scheduler.scheduler import builtin_registries
from volcano_py.scheduler.simulator import Simulator

CREATED = "2026-01-01T00:00:00Z"
T0 = datetime.fromisoformat(CREATED).timestamp()


def _conf(sla: str = "- name: sla", second: str = "- name: overcommit") -> str:
    return f"""\
actions: "enqueue, allocate"
tiers:
- plugins:
  - name: gang
  {sla}
- plugins:
  {second}
  - name: predicates
"""


def _sim(conf: str, *groups: dict[str, object]) -> Simulator:
    plugins, actions = builtin_registries()
    objects = [node("n", {"cpu": "4"}), *groups]
    return Simulator(objects, load_conf(conf, plugins, actions))


def _pg(
    name: str, wait: str | None, key: str = "sla-waiting-time", **kw: object
) -> dict[str, object]:
    annotations = {key: wait} if wait is not None else {}
    return podgroup(name, 1, annotations=annotations, created=CREATED, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("conf", "wait", "now", "admitted"),
    [
        (_conf(), "10s", T0 + 9, False),
        (_conf(), "10s", T0 + 10, True),
        (_conf(), None, T0 + 10**6, False),  # no waiting time: the plugin abstains
        (_conf(sla="- {name: sla, arguments: {sla-waiting-time: 1m}}"), None, T0 + 60, True),
        (_conf(sla="- {name: sla, arguments: {sla-waiting-time: 1m}}"), "2m", T0 + 60, False),
        (_conf(), "soon", T0 + 10**6, False),  # a bad annotation: no waiting time
        # a rejection in the permit's own tier wins; one in a later tier is not asked
        (_conf(sla="- name: sla\n  - name: overcommit", second="- name: drf"), "1s", T0 + 5, False),
    ],
    ids=[
        "before-deadline",
        "at-deadline",
        "no-waiting-time",
        "argument",
        "annotation-over-argument",
        "bad-annotation",
        "same-tier-reject-wins",
    ],
)
def test_sla_admits_an_overdue_job_that_overcommit_rejects(
    conf: str, wait: str | None, now: float, admitted: bool
) -> None:
    sim = _sim(conf, _pg("big", wait, min_resources={"cpu": 100}))
    ssn = sim.open_session()
    ssn.now = now
    assert (ssn.job_enqueueable(ssn.jobs["default/big"]) is None) == admitted


def test_sla_orders_by_deadline_then_jobs_without_one() -> None:
    sim = _sim(
        _conf(),
        _pg("none", None),
        _pg("late", "2h"),
        _pg("soon", "30m", key="volcano.sh/sla-waiting-time"),
    )
    ssn = sim.open_session()
    order = sorted(ssn.jobs.values(), key=ssn.job_order_key())
    assert [j.key for j in order] == ["default/soon", "default/late", "default/none"]


@pytest.mark.parametrize(
    ("args", "field"),
    [("{sla-waiting-time: soon}", "sla-waiting-time"), ("{sla-waiting-time: 0s}", "0s"),
     ("{sla-waiting-time: 5}", "sla-waiting-time")],
    ids=["not-a-duration", "zero", "not-a-string"],
)  # fmt: skip
def test_sla_bad_argument_fails_the_conf_at_load(args: str, field: str) -> None:
    plugins, actions = builtin_registries()
    with pytest.raises(ConfError, match=field):
        load_conf(_conf(sla=f"- {{name: sla, arguments: {args}}}"), plugins, actions)


def test_sla_alone_keeps_the_overcommit_fallback() -> None:
    conf = 'actions: "enqueue, allocate"\ntiers:\n- plugins:\n  - name: gang\n  - name: sla\n'
    sim = _sim(conf, _pg("big", "100000h", min_resources={"cpu": 100}), pod("p", "big"))
    ssn = sim.open_session()
    assert ssn.job_enqueueable(ssn.jobs["default/big"]) is not None
