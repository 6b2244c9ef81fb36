"""kube-scheduler's InterPodAffinity / PodTopologySpread test tables, through our scheduler.

The tables in ``kube_tables/`` carry the inputs and per-node outcomes of kube-scheduler
v1.37's ``interpodaffinity`` and ``podtopologyspread`` filter and score tests, in our own
shorthand. Each case becomes a cluster (nodes, pods bound by another scheduler, one pending
pod of a PodGroup of one) opened as a real session with the default tiers: every node's
predicate result must be the expected reason, and the scores the expected ones.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.unit.scheduler.objects import node, pod, podgroup
from volcano_py.scheduler.framework.framework import close_session
from volcano_py.scheduler.framework.registry import load_conf
from volcano_py.scheduler.framework.session import Session
from volcano_py.scheduler.plugins.podconstraints.interpodaffinity import (
    REASON_AFFINITY,
    REASON_ANTI_AFFINITY,
    REASON_EXISTING_ANTI_AFFINITY,
)
from volcano_py.scheduler.plugins.podconstraints.topologyspread import (
    REASON_SPREAD,
    REASON_SPREAD_LABEL,
)
from volcano_py.scheduler.scheduler import builtin_registries
from volcano_py.scheduler.simulator import Simulator

JSON = dict[str, Any]
TABLES = Path(__file__).parent / "kube_tables"
REASONS = {
    "": None,
    "affinity": REASON_AFFINITY,
    "anti": REASON_ANTI_AFFINITY,
    "existing": REASON_EXISTING_ANTI_AFFINITY,
    "spread": REASON_SPREAD,
    "label": REASON_SPREAD_LABEL,
    "nodeaffinity": "node(s) didn't match Pod's node affinity/selector",
    "taint": "node(s) had untolerated taint",
}
# only the scores these tables are about: nodeorder's inter-pod/spread part, weight 1
SCORE_CONF = """
actions: "enqueue, allocate"
tiers:
- plugins:
  - name: gang
  - name: predicates
  - name: nodeorder
    arguments: {leastrequested.weight: 0, balancedresource.weight: 0, nodeaffinity.weight: 0,
                podaffinity.weight: 1, podtopologyspread.weight: 1}
"""


def _cases(name: str) -> list[Any]:
    cases = yaml.safe_load((TABLES / name).read_text())
    return [pytest.param(c, id=c["name"]) for c in cases]


def _selector(key: str, op: str, values: list[str] | None) -> JSON:
    expression: JSON = {"key": key, "operator": op}
    if values is not None:
        expression["values"] = values
    return {"matchExpressions": [expression]}


def _terms(spec: JSON, ns_selector: Any) -> Iterator[tuple[str, JSON]]:
    """(kind, PodAffinityTerm) from the shorthand lists."""
    for field, kind, op in (
        ("affinity_in", "podAffinity", "In"),
        ("affinity_not_in", "podAffinity", "NotIn"),
        ("affinity_exists", "podAffinity", "Exists"),
        ("anti_in", "podAntiAffinity", "In"),
        ("anti_exists", "podAntiAffinity", "Exists"),
    ):
        for item in spec.get(field, ()):
            term = {"labelSelector": _selector(item[0], op, item[2] if op != "Exists" else None)}
            term["topologyKey"] = item[1]
            if ns_selector is not None:
                term["namespaceSelector"] = ns_selector
            yield kind, term


def _affinity(spec: JSON) -> JSON | None:
    affinity: JSON = {}
    for kind, term in _terms(spec, spec.get("namespace_selector")):
        block = affinity.setdefault(kind, {})
        block.setdefault("requiredDuringSchedulingIgnoredDuringExecution", []).append(term)
    for kind, field in (("podAffinity", "preferred"), ("podAntiAffinity", "preferred_anti")):
        for weight, key, values, topology in spec.get(field, ()):
            term = {"labelSelector": _selector(key, "In", values), "topologyKey": topology}
            block = affinity.setdefault(kind, {})
            block.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
                {"weight": weight, "podAffinityTerm": term}
            )
    if "node_affinity_in" in spec:
        key, values = spec["node_affinity_in"]
        affinity["nodeAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [_selector(key, "In", values)["matchExpressions"][0]]}
                ]
            }
        }
    return affinity or None


def _pod(name: str, spec: JSON, **extra: Any) -> JSON:
    obj = pod(
        name,
        requests={"cpu": "100m"},
        namespace=spec.get("namespace", "default"),
        labels=spec.get("labels"),
        affinity=_affinity(spec),
        node_selector=spec.get("node_selector"),
        tolerations=spec.get("tolerations", ()),
        topology_spread=spec.get("spread", ()),
        **extra,
    )
    if spec.get("terminating"):
        obj["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return obj


def _session(case: JSON, conf_text: str | None = None) -> Session:
    taints = case.get("taints") or {}
    objects = [
        node(n, labels=labels, taints=taints.get(n, ())) for n, labels in case["nodes"].items()
    ]
    for i, spec in enumerate(case["pods"]):
        objects.append(
            _pod(f"existing-{i}", spec, node_name=spec["node"], phase="Running", scheduler="other")
        )
    incoming = case["pod"]
    ns = incoming.get("namespace", "default")
    objects.append(podgroup("incoming", 1, namespace=ns))
    objects.append(_pod("incoming", incoming, group="incoming"))
    conf = None
    if conf_text is not None:
        plugins, actions = builtin_registries()
        conf = load_conf(conf_text, plugins, actions)
    return Simulator(objects, conf).open_session()


def _incoming(ssn: Session, case: JSON) -> Any:
    ns = case["pod"].get("namespace", "default")
    return ssn.jobs[f"{ns}/incoming"].pending_tasks()[0]


def _reasons(case: JSON) -> dict[str, str | None]:
    ssn = _session(case)
    try:
        task = _incoming(ssn, case)
        return {n.name: ssn.predicate(task, n) for n in ssn.node_list()}
    finally:
        close_session(ssn)


def _matches(got: str | None, want: str) -> bool:
    expected = REASONS.get(want, want)
    if expected is None or got is None:
        return got == expected
    return got == expected if want in ("spread", "label") else got.startswith(expected)


@pytest.mark.parametrize(
    "case", _cases("interpodaffinity_filter.yaml") + _cases("topologyspread_filter.yaml")
)
def test_filters_decide_each_node_as_kube_scheduler(case: JSON) -> None:
    got = _reasons(case)
    assert set(got) == set(case["want"])
    for name, want in case["want"].items():
        assert _matches(got[name], want), (name, got[name], want)


@pytest.mark.parametrize("case", _cases("scores.yaml"))
def test_scores_are_kube_schedulers_normalised_scores(case: JSON) -> None:
    ssn = _session(case, SCORE_CONF)
    try:
        task = _incoming(ssn, case)
        nodes = [n for n in ssn.node_list() if ssn.predicate(task, n) is None]
        if "candidates" in case:
            nodes = [n for n in nodes if n.name in case["candidates"]]
        scores = ssn.batch_node_scores(task, nodes).get("nodeorder", {})
        got = {n.name: scores.get(n.name, 0.0) for n in nodes}
    finally:
        close_session(ssn)
    assert got == {n: float(s) for n, s in case["want"].items()}


GANG = {
    "nodes": {
        "node-1": {"kubernetes.io/hostname": "node-1"},
        "node-2": {"kubernetes.io/hostname": "node-2"},
    },
    "pods": [],
    "pod": {"labels": {"app": "web"}, "anti_in": [["app", "kubernetes.io/hostname", ["web"]]]},
}


def test_statement_allocations_count_and_discard_leaves_no_trace() -> None:
    # kube-scheduler's AddPod/RemovePod: a pod the statement placed refuses its gang mate;
    # discarding the statement takes it away again
    case = {**GANG, "pods": []}
    ssn = _session(case)
    try:
        job = ssn.jobs["default/incoming"]
        first = job.pending_tasks()[0]
        mate = first.clone()
        mate.key = "default/mate"
        node_1 = ssn.nodes["node-1"]
        assert ssn.predicate(mate, node_1) is None
        stmt = ssn.statement()
        stmt.allocate(first, "node-1")
        assert ssn.predicate(mate, ssn.nodes["node-1"]) == REASON_ANTI_AFFINITY
        assert ssn.predicate(mate, ssn.nodes["node-2"]) is None
        stmt.discard()
        assert ssn.predicate(mate, ssn.nodes["node-1"]) is None
    finally:
        close_session(ssn)
