"""volcano-py against kube-scheduler, pod by pod, on one control plane (issue 40's differential).

``LANES`` independent copies of one small cluster share the control plane. A lane is six
labelled kwok nodes (zones, racks, one node without a rack label, a tainted node, ``disk=ssd``
nodes) plus pods pre-placed on them through ``spec.nodeName``, in a namespace of its own.
Every generated pod selects its lane's nodes and lives in its lane's namespace, so the lanes
never see each other: inter-pod affinity, topology spread and their selectors count only pods
of their own namespace, and ports and resources are per node.

From a fixed seed, ``ROUNDS`` rounds each give every lane one generated pod mixing the
constraints (required/preferred pod affinity and anti-affinity over hostname, zone and rack,
topology spread DoNotSchedule/ScheduleAnyway with minDomains, node policies and matchLabelKeys,
host ports, node affinity, taints and tolerations, CPU requests with init containers, sidecars
and a RuntimeClass's overhead, scheduling gates). The pod is judged three times on the same
state (the lane's pre-placed pods only; each copy is deleted before the next one is created,
and both schedulers read pods from one watch, so they see the deletion before the next pod):

1. a copy for kube-scheduler (its own process, from the pinned module): bound, or
   ``PodScheduled=False`` (Unschedulable / SchedulingGated);
2. a copy for volcano-py (``Scheduler`` in this process, a PodGroup of one): bound, or its own
   ``PodScheduled=False``, or (gated) its PodGroup's condition naming the gates;
3. when volcano-py bound it to a node kube-scheduler did not pick, a copy for kube-scheduler
   pinned to that node (a required ``metadata.name`` node field): it must bind.

No verdict rests on a deadline: each wait ends on what a scheduler wrote (the waits' timeouts
only end a hung run).
"""

from __future__ import annotations

import contextlib
import copy
import random
import subprocess
import tempfile
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from devcluster.harness import ControlPlane
from devcluster.kube_scheduler import start_kube_scheduler, stop_kube_scheduler
from tests.builders import create_node, podgroup_body, wait_nodes_up
from tests.integration.scheduler.conftest import wait_for
from volcano_py.api import JSON
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient, resource_path
from volcano_py.kube.errors import NotFound
from volcano_py.scheduler.scheduler import Scheduler

SEED = 40
LANES = 10
ROUNDS = 20  # LANES x ROUNDS = 200 generated pods
HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
RACK = "diff.volcano.sh/rack"
LANE = "diff.volcano.sh/lane"
NAME_LABEL = "kubernetes.io/metadata.name"
RUN = "diff.volcano.sh/run"
KEYS = (HOST, ZONE, RACK)
APPS = ("a", "b", "c", "d")
TAINT = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
# on every lane node, tolerated by every generated pod: a pod another test left behind (which
# kube-scheduler would place while this test runs) cannot land on a lane and change its state
LANE_TAINT = {"key": LANE, "value": "only", "effect": "NoSchedule"}
# node: (zone, rack or None, cpu, labels, tainted)
NODES = [
    ("z0", "r0", "4", {}, False),
    ("z0", "r0", "4", {"disk": "ssd"}, False),
    ("z0", "r1", "2", {}, False),
    ("z1", "r2", "4", {}, True),
    ("z1", "r2", "8", {"disk": "ssd"}, False),
    ("z2", None, "4", {}, False),
]
RUNTIMECLASSES = R.APIResource(
    "node.k8s.io", "v1", "runtimeclasses", "RuntimeClass", namespaced=False
)
Verdict = tuple[str, str]  # ("bound", node) or ("pending", message)


class Lane:
    """One lane: its namespace, its node names, its label value."""

    def __init__(self, prefix: str, index: int) -> None:
        self.label = f"{prefix}-{index}"
        self.namespace = f"diff-{prefix}-{index}"
        self.nodes = [f"{prefix}-l{index}-n{i}" for i in range(len(NODES))]


def _container(name: str, cpu: str, ports: list[JSON] | None = None) -> JSON:
    container: JSON = {
        "name": name,
        "image": "registry.k8s.io/pause:3.10",
        "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}},
    }
    if ports:
        container["ports"] = ports
    return container


def _selector(rng: random.Random) -> JSON:
    apps = rng.sample(APPS, rng.choice((1, 2)))
    if len(apps) == 1 and rng.random() < 0.5:
        return {"matchLabels": {"app": apps[0]}}
    return {"matchExpressions": [{"key": "app", "operator": "In", "values": apps}]}


def _affinity_term(rng: random.Random, lane: Lane) -> JSON:
    term: JSON = {"topologyKey": rng.choice(KEYS), "labelSelector": _selector(rng)}
    if rng.random() < 0.2:
        term["matchLabelKeys"] = ["tier"]
    if rng.random() < 0.15:
        # the lane's own namespace by its name label: volcano-py reads no other Namespace label
        # (a departure docs/scheduler.md states; a term on another label is refused, Pending)
        term["namespaceSelector"] = {"matchLabels": {NAME_LABEL: lane.namespace}}
    return term


def _pod_affinity(rng: random.Random, lane: Lane) -> JSON:
    affinity: JSON = {}
    for kind, required, preferred in (("podAffinity", 0.2, 0.15), ("podAntiAffinity", 0.25, 0.2)):
        spec: JSON = {}
        if rng.random() < required:
            terms = [_affinity_term(rng, lane) for _ in range(rng.choice((1, 1, 2)))]
            spec["requiredDuringSchedulingIgnoredDuringExecution"] = terms
        if rng.random() < preferred:
            spec["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": rng.randint(1, 100), "podAffinityTerm": _affinity_term(rng, lane)}
            ]
        if spec:
            affinity[kind] = spec
    return affinity


def _node_affinity(rng: random.Random) -> JSON:
    spec: JSON = {}
    if rng.random() < 0.2:
        spec["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]}
            ]
        }
    if rng.random() < 0.15:
        spec["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {
                "weight": rng.randint(1, 100),
                "preference": {
                    "matchExpressions": [{"key": ZONE, "operator": "In", "values": ["z1"]}]
                },
            }
        ]
    return {"nodeAffinity": spec} if spec else {}


def _spread(rng: random.Random, app: str) -> list[JSON]:
    constraints = []
    for key in rng.sample(KEYS, rng.choice((1, 1, 2))):
        hard = rng.random() < 0.6
        constraint: JSON = {
            "maxSkew": rng.choice((1, 1, 2)),
            "topologyKey": key,
            "whenUnsatisfiable": "DoNotSchedule" if hard else "ScheduleAnyway",
            "labelSelector": {"matchLabels": {"app": app if rng.random() < 0.8 else "b"}},
        }
        if hard and rng.random() < 0.25:
            constraint["minDomains"] = rng.randint(2, 4)
        if rng.random() < 0.2:
            constraint["nodeAffinityPolicy"] = rng.choice(("Honor", "Ignore"))
        if rng.random() < 0.2:
            constraint["nodeTaintsPolicy"] = rng.choice(("Honor", "Ignore"))
        if rng.random() < 0.15:
            constraint["matchLabelKeys"] = ["tier"]
        constraints.append(constraint)
    return constraints


def _ports(rng: random.Random) -> list[JSON]:
    if rng.random() >= 0.25:
        return []
    port: JSON = {"containerPort": 80, "hostPort": rng.choice((8080, 9090))}
    port["protocol"] = "TCP" if rng.random() < 0.8 else "UDP"
    if rng.random() < 0.15:
        port["hostIP"] = "127.0.0.1"
    return [port]


def generated_pod(rng: random.Random, lane: Lane, runtime_class: str) -> JSON:
    """One pod of the mix (without name or scheduler): the lane's nodes, its namespace."""
    app = rng.choice(APPS)
    spec: JSON = {
        "nodeSelector": {LANE: lane.label},
        "containers": [
            _container("main", rng.choice(("100m", "500m", "1", "1", "2", "3", "5")), _ports(rng))
        ],
    }
    if rng.random() < 0.3:
        spec["containers"].append(_container("side", rng.choice(("100m", "1"))))
    init = []
    if rng.random() < 0.2:
        init.append(_container("init", rng.choice(("1", "3", "6"))))
    if rng.random() < 0.1:
        init.append(dict(_container("sidecar", "500m"), restartPolicy="Always"))
    if init:
        spec["initContainers"] = init
    if rng.random() < 0.1:
        spec["runtimeClassName"] = runtime_class
    affinity = {**_pod_affinity(rng, lane), **_node_affinity(rng)}
    if affinity:
        spec["affinity"] = affinity
    if rng.random() < 0.35:
        spec["topologySpreadConstraints"] = _spread(rng, app)
    spec["tolerations"] = [dict(LANE_TAINT, operator="Equal")]
    if rng.random() < 0.3:
        spec["tolerations"].append(dict(TAINT, operator="Equal"))
    if rng.random() < 0.03:
        spec["schedulingGates"] = [{"name": "diff.volcano.sh/hold"}]
    labels = {"app": app, "tier": rng.choice(("x", "y"))}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"labels": labels}, "spec": spec}


def preplaced_pods(rng: random.Random, lane: Lane) -> list[JSON]:
    """Seven pods bound by ``nodeName``: labels, ports, anti-affinity (the symmetric rule)."""
    pods = []
    for i in range(7):
        node = rng.choice(lane.nodes)
        app = rng.choice(APPS[:3])
        spec: JSON = {
            "nodeName": node,
            "containers": [_container("main", rng.choice(("500m", "1")), _ports(rng))],
            "tolerations": [dict(TAINT, operator="Equal")],
        }
        if rng.random() < 0.4:
            spec["affinity"] = {
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {"topologyKey": rng.choice(KEYS), "labelSelector": _selector(rng)}
                    ]
                }
            }
        labels = {"app": app, "tier": rng.choice(("x", "y"))}
        meta = {"name": f"pre-{i}", "namespace": lane.namespace, "labels": labels}
        pods.append({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})
    return pods


@pytest.fixture
def lanes(client: KubeClient) -> Iterator[list[Lane]]:
    """The lanes' namespaces and nodes, pre-placed pods bound; all deleted afterwards."""
    prefix = uuid.uuid4().hex[:5]
    made = [Lane(prefix, i) for i in range(LANES)]
    try:
        for lane in made:
            client.create(
                R.NAMESPACES,
                {"metadata": {"name": lane.namespace, "labels": {LANE: lane.label}}},
            )
            for name, (zone, rack, cpu, extra, tainted) in zip(lane.nodes, NODES, strict=True):
                labels = {HOST: name, ZONE: zone, LANE: lane.label, **extra}
                if rack:
                    labels[RACK] = rack
                create_node(
                    client,
                    name,
                    wait=False,
                    labels=labels,
                    allocatable={"cpu": cpu, "memory": "16Gi", "pods": "110"},
                    taints=[LANE_TAINT, TAINT] if tainted else [LANE_TAINT],
                )
        wait_nodes_up(client, [n for lane in made for n in lane.nodes], 120)
        for lane in made:
            for pod in preplaced_pods(random.Random(f"{SEED}-{lane.label[-2:]}"), lane):
                client.create(R.PODS, pod)
        yield made
    finally:
        for lane in made:
            with contextlib.suppress(NotFound):
                client.delete(R.NAMESPACES, lane.namespace)
            for name in lane.nodes:
                with contextlib.suppress(NotFound):
                    client.delete(R.NODES, name)


@pytest.fixture
def runtime_class(client: KubeClient) -> Iterator[str]:
    """A RuntimeClass whose overhead (250m CPU) the API server copies into the pods naming it."""
    name = f"diff-{uuid.uuid4().hex[:6]}"
    client.create(
        RUNTIMECLASSES,
        {
            "apiVersion": "node.k8s.io/v1",
            "kind": "RuntimeClass",
            "metadata": {"name": name},
            "handler": "kwok",
            "overhead": {"podFixed": {"cpu": "250m", "memory": "32Mi"}},
        },
    )
    yield name
    with contextlib.suppress(NotFound):
        client.delete(RUNTIMECLASSES, name)


@pytest.fixture
def kube_scheduler(control_plane: ControlPlane) -> Iterator[subprocess.Popen[bytes]]:
    """kube-scheduler from the pinned module as its own process."""
    with tempfile.TemporaryDirectory(prefix="diff-ks-") as tmp:
        proc = start_kube_scheduler(control_plane.kubeconfig, Path(tmp))
        try:
            yield proc
        finally:
            stop_kube_scheduler(proc)


def _condition(pod: JSON) -> JSON:
    for cond in (pod.get("status") or {}).get("conditions") or ():
        if cond.get("type") == "PodScheduled":
            return dict(cond)
    return {}


def ks_verdict(pod: JSON, _: KubeClient) -> Verdict | None:
    """kube-scheduler's answer: bound, or its (or the API server's gate) condition."""
    if node := pod["spec"].get("nodeName"):
        return ("bound", node)
    cond = _condition(pod)
    if cond.get("status") == "False" and cond.get("reason") in ("Unschedulable", "SchedulingGated"):
        return ("pending", str(cond.get("message") or cond["reason"]))
    return None


def volcano_verdict(pod: JSON, client: KubeClient) -> Verdict | None:
    """volcano-py's answer: bound, its Unschedulable condition, or its PodGroup naming the gates."""
    if node := pod["spec"].get("nodeName"):
        return ("bound", node)
    cond = _condition(pod)
    if cond.get("status") == "False" and cond.get("reason") == "Unschedulable":
        return ("pending", str(cond.get("message")))
    if pod["spec"].get("schedulingGates"):
        meta = pod["metadata"]
        group = client.get(R.PODGROUPS, meta["name"], meta["namespace"])
        for c in (group.get("status") or {}).get("conditions") or ():
            if "scheduling gates" in str(c.get("message")):
                return ("pending", str(c["message"]))
    return None


def judge(
    client: KubeClient,
    run: str,
    bodies: dict[str, JSON],
    verdict: Callable[[JSON, KubeClient], Verdict | None],
) -> dict[str, Verdict]:
    """Create ``bodies`` (lane -> pod), wait for every verdict, delete them; lane -> verdict."""
    for body in bodies.values():
        client.create(R.PODS, body)
    found: dict[str, Verdict] = {}

    def all_decided() -> bool:
        for pod in client.list(R.PODS, label_selector=f"{RUN}={run}")["items"]:
            lane = pod["metadata"]["labels"][LANE]
            if lane not in found and (answer := verdict(pod, client)):
                found[lane] = answer
        return len(found) == len(bodies)

    wait_for(all_decided, timeout=120, interval=0.05)
    for body in bodies.values():
        meta = body["metadata"]
        with contextlib.suppress(NotFound):
            client.request(
                "DELETE",
                resource_path(R.PODS, meta["namespace"], meta["name"]),
                body={"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0},
            )
    for body in bodies.values():
        meta = body["metadata"]
        wait_for(lambda m=meta: _gone(client, R.PODS, m), timeout=60)
    return found


def _gone(client: KubeClient, resource: R.APIResource, meta: JSON) -> bool:
    try:
        client.get(resource, meta["name"], meta["namespace"])
    except NotFound:
        return True
    return False


def _copy(template: JSON, lane: Lane, name: str, scheduler: str, run: str) -> JSON:
    body = copy.deepcopy(template)
    body["metadata"] = dict(
        body["metadata"],
        name=name,
        namespace=lane.namespace,
        labels={**body["metadata"]["labels"], RUN: run, LANE: lane.label},
    )
    body["spec"]["schedulerName"] = scheduler
    return body


def pinned(body: JSON, node: str) -> JSON:
    """``body`` whose required node affinity also asks for node ``node`` by name."""
    body = copy.deepcopy(body)
    field = {"key": "metadata.name", "operator": "In", "values": [node]}
    node_affinity = body["spec"].setdefault("affinity", {}).setdefault("nodeAffinity", {})
    required = node_affinity.setdefault(
        "requiredDuringSchedulingIgnoredDuringExecution", {"nodeSelectorTerms": [{}]}
    )
    for term in required["nodeSelectorTerms"]:
        term["matchFields"] = [*term.get("matchFields", ()), field]
    return body


def test_volcano_py_binds_only_where_kube_scheduler_could_and_waits_where_it_waits(
    client: KubeClient,
    lanes: list[Lane],
    runtime_class: str,
    kube_scheduler: subprocess.Popen[bytes],
    run_scheduler: Callable[[], Callable[[], Scheduler]],
) -> None:
    run_scheduler()
    rng = random.Random(SEED)
    by_label = {lane.label: lane for lane in lanes}
    disagreements: list[str] = []
    tally: Counter[str] = Counter()
    for r in range(ROUNDS):
        templates = {lane.label: generated_pod(rng, lane, runtime_class) for lane in lanes}

        def copies(scheduler: str, run: str, t: dict[str, JSON] = templates) -> dict[str, JSON]:
            return {
                label: _copy(body, by_label[label], run, scheduler, run)
                for label, body in t.items()
            }

        ks = judge(client, f"k{r}", copies("default-scheduler", f"k{r}"), ks_verdict)
        vp_bodies = copies("volcano", f"v{r}")
        for body in vp_bodies.values():
            meta = body["metadata"]
            meta["annotations"] = {"scheduling.k8s.io/group-name": meta["name"]}
            client.create(R.PODGROUPS, podgroup_body(meta["name"], meta["namespace"], 1))
        vp = judge(client, f"v{r}", vp_bodies, volcano_verdict)
        for body in vp_bodies.values():
            client.delete(R.PODGROUPS, body["metadata"]["name"], body["metadata"]["namespace"])
        to_pin = {
            label: pinned(body, vp[label][1])
            for label, body in copies("default-scheduler", f"p{r}").items()
            if vp[label][0] == "bound" and ks[label] != vp[label]
        }
        pins = judge(client, f"p{r}", to_pin, ks_verdict) if to_pin else {}
        tally["pinned to volcano-py's node for kube-scheduler"] += len(pins)
        for label in templates:
            tally[f"ks {ks[label][0]} / vp {vp[label][0]}"] += 1
            wrong = []
            if ks[label][0] == "pending" and vp[label][0] == "bound":
                wrong.append("kube-scheduler left it Pending, volcano-py bound it")
            if label in pins and pins[label][0] != "bound":
                wrong.append(f"kube-scheduler finds {vp[label][1]} infeasible: {pins[label][1]}")
            if ks[label][0] == "bound" and vp[label][0] == "pending":
                wrong.append(f"volcano-py left it Pending: {vp[label][1]}")
            if wrong:
                disagreements.append(
                    f"round {r} lane {label}: {'; '.join(wrong)} (ks {ks[label]}, vp {vp[label]})"
                    f"\n  spec: {templates[label]['spec']}"
                )
    print(f"differential over {LANES * ROUNDS} pods: {dict(tally)}")
    assert kube_scheduler.poll() is None, "kube-scheduler exited during the run"
    assert not disagreements, "\n".join(disagreements)
    assert tally["ks bound / vp bound"] + tally["ks pending / vp pending"] >= 200
    # the mix is not degenerate: both outcomes occur
    assert tally["ks bound / vp bound"] >= 50, tally
    assert tally["ks pending / vp pending"] >= 10, tally
