"""Which gang ``volcano-py explain NS/NAME`` means, and the live objects it reads.

A person knows the workload by the name they applied (the Volcano Job, Deployment,
StatefulSet, batch Job, RayCluster, PyTorchJob, LeaderWorkerSet ...), not by the PodGroup
the controllers made for it (``podgroup-<uid>``, ``<job>-<uid>``, ``ray-<name>-pg``).
``find_gangs`` maps the name to its PodGroups:

1. a PodGroup of that name in the namespace is the answer on its own;
2. otherwise every PodGroup of the namespace whose owner chain names it: the PodGroup's
   ownerReferences, their owners, and so on (a Deployment's PodGroup is owned by the
   ReplicaSet the Deployment owns; an LWS group's by its leader pod, owned by a StatefulSet
   the LWS owns), climbed through the objects we have by uid;
3. and the PodGroup of every pod whose own owner chain names it (the
   ``scheduling.k8s.io/group-name`` annotation, or Kubernetes' own PodGroup the pod names in
   ``spec.schedulingGroup``), which covers a PodGroup owned by nothing: a batch Job with
   ``spec.scheduling`` is found by its name through its pods.

No kind is assumed, so an operator's own kinds work without being listed here. A name that
several workloads share yields all their gangs; each is explained. ``live_snapshot`` lists
what the scheduler's snapshot needs (cluster wide) plus the namespace's ReplicaSets,
StatefulSets and batch Jobs, the usual links between a workload and its pods, and reads the
scheduler's conf from its ConfigMap, as the manager does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from volcano_py.api import JSON
from volcano_py.api import resources as R
from volcano_py.api.constants import KUBE_GROUP_NAME_ANNOTATION, SCHEDULER_CONFIGMAP_NAME
from volcano_py.api.native_groups import pod_group_name
from volcano_py.api.resources import APIResource
from volcano_py.commands.cluster_access import CommandError, connect
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import ApiError, NotFound
from volcano_py.scheduler.conf_watch import CONF_KEY

MAX_DEPTH = 6
"""How many owner links are climbed (Deployment -> ReplicaSet -> PodGroup is two)."""


@dataclass(frozen=True, slots=True)
class Gang:
    """A PodGroup ``find_gangs`` matched, and how: ``Deployment web -> ReplicaSet web-5d8f``."""

    podgroup: str
    via: str


def _meta(obj: JSON) -> JSON:
    return obj.get("metadata") or {}


def _chains(obj: JSON, by_uid: dict[str, JSON]) -> list[list[tuple[str, str]]]:
    """Every owner chain above ``obj`` as ``[(kind, name), ...]``, nearest owner first."""
    chains: list[list[tuple[str, str]]] = []
    stack: list[tuple[JSON, list[tuple[str, str]]]] = [(obj, [])]
    while stack:
        current, chain = stack.pop()
        refs = _meta(current).get("ownerReferences") or []
        if not refs or len(chain) >= MAX_DEPTH:
            if chain:
                chains.append(chain)
            continue
        for ref in refs:
            link = [*chain, (str(ref.get("kind") or ""), str(ref.get("name") or ""))]
            above = by_uid.get(str(ref.get("uid") or ""))
            if above is None:
                chains.append(link)
            else:
                stack.append((above, link))
    return chains


def _via(chain: list[tuple[str, str]], name: str, start: str) -> str | None:
    """``Kind name -> ... -> start`` from the topmost link naming ``name`` down, or None.

    The topmost, because a workload often names what it makes after itself (an LWS's
    StatefulSet, a Job's pods).
    """
    for i in range(len(chain) - 1, -1, -1):
        if chain[i][1] == name:
            return " -> ".join([*(f"{k} {n}" for k, n in reversed(chain[: i + 1])), start])
    return None


def find_gangs(namespace: str, name: str, objects: Iterable[JSON]) -> list[Gang]:
    """The PodGroups ``namespace/name`` stands for (see the module docstring), sorted."""
    listed = [o for o in objects if _meta(o).get("namespace", "") in ("", namespace)]
    podgroups = {
        str(_meta(o).get("name")): o
        for o in listed
        if o.get("kind") == "PodGroup" and _meta(o).get("namespace") == namespace
    }
    if name in podgroups:
        return [Gang(name, f"PodGroup {name}")]
    by_uid = {str(_meta(o)["uid"]): o for o in listed if _meta(o).get("uid")}
    found: dict[str, str] = {}
    for pg_name, pg in podgroups.items():
        for chain in _chains(pg, by_uid):
            via = _via(chain, name, f"PodGroup {pg_name}")
            if via:
                found.setdefault(pg_name, via)
    for pod in listed:
        annotations = _meta(pod).get("annotations") or {}
        group = pod_group_name(pod) or str(annotations.get(KUBE_GROUP_NAME_ANNOTATION) or "")
        if pod.get("kind") != "Pod" or not group or group in found:
            continue
        own = [("Pod", str(_meta(pod).get("name")))]
        for chain in _chains(pod, by_uid) or [[]]:
            via = _via([*own, *chain], name, f"PodGroup {group}")
            if via:
                found.setdefault(group, via)
    return [Gang(pg, via) for pg, via in sorted(found.items())]


@dataclass(frozen=True, slots=True)
class LiveSnapshot:
    """What ``explain`` reads from the cluster: the objects, and the scheduler's conf.

    ``scheduler_conf``: ``volcano-scheduler.conf`` of the ConfigMap
    ``volcano-scheduler-configmap`` in ``conf_namespace`` (what the manager reads without
    ``--scheduler-conf``), or None when there is none (the built-in tiers).
    ``workloads_served``: the cluster serves ``scheduling.k8s.io`` Workloads (a native
    PodGroup naming a missing one waits, as in the scheduler).
    """

    objects: list[JSON]
    scheduler_conf: str | None
    workloads_served: bool = False


def live_snapshot(
    kubeconfig: str | None,
    api_wait: float,
    namespace: str,
    conf_namespace: str,
    say: Callable[[str], None],
) -> LiveSnapshot:
    """The snapshot's objects from the cluster, the namespace's workload links, the conf."""
    client = connect(kubeconfig, api_wait, say)
    try:
        objects, listed = _list(client, namespace)
        served = R.NATIVE_WORKLOADS in listed
        try:
            configmap = client.get(R.CONFIGMAPS, SCHEDULER_CONFIGMAP_NAME, conf_namespace)
        except NotFound:
            return LiveSnapshot(objects, None, served)
        except ApiError as e:
            raise CommandError(
                f"reading ConfigMap {conf_namespace}/{SCHEDULER_CONFIGMAP_NAME}: {e}"
            ) from e
    finally:
        client.close()
    conf = (configmap.get("data") or {}).get(CONF_KEY)
    return LiveSnapshot(objects, str(conf) if conf else None, served)


def _list(client: KubeClient, namespace: str) -> tuple[list[JSON], set[APIResource]]:
    """The objects ``explain`` reads, and the resources listed (optional ones may not be)."""
    wanted: list[tuple[APIResource, str | None, str | None, bool]] = [
        (R.NODES, None, None, False),
        (R.HYPERNODES, None, None, False),
        (R.QUEUES, None, None, False),
        (R.PODGROUPS, None, None, False),
        (R.NATIVE_PODGROUPS, None, None, True),  # served with the GenericWorkload gate only
        (R.NATIVE_COMPOSITES, None, None, True),  # and the CompositePodGroup gate
        (R.NATIVE_WORKLOADS, None, None, True),  # what native PodGroups' workloadRef names
        (R.PODS, None, "status.phase!=Succeeded,status.phase!=Failed", False),
        (R.REPLICASETS, namespace, None, True),
        (R.STATEFULSETS, namespace, None, True),
        (R.JOBS, namespace, None, True),
    ]
    objects: list[JSON] = []
    listed: set[APIResource] = set()
    for resource, ns, selector, optional in wanted:
        try:
            items = client.list_all(resource, ns, field_selector=selector)
        except NotFound as e:
            if optional:
                continue
            raise CommandError(
                f"listing {resource.plural}: {e} (are Volcano's CRDs installed?)"
            ) from e
        except ApiError as e:
            raise CommandError(f"listing {resource.plural}: {e}") from e
        listed.add(resource)
        # list items carry no kind: set it, and the version (two kinds are called PodGroup)
        objects += [
            dict(item, kind=resource.kind, apiVersion=resource.api_version) for item in items
        ]
    return objects, listed
