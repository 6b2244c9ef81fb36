"""What the job controller writes for one vcjob: its PodGroup and its pods, as Volcano builds them.

Pure functions of the Job (raw JSON plus its ``JobView``); ``sync.py`` decides when to write.

- **PodGroup** ``<job>-<uid>``: the Job's labels and annotations, a controller owner
  reference, ``minMember = spec.minAvailable``, ``minTaskMember`` per task (its
  ``minAvailable``, else ``minPartitions * partitionSize``, else ``replicas``), ``queue``,
  ``priorityClassName``, ``minResources`` (below), the Job's ``networkTopology`` (mode plus
  ``highestTierAllowed``, or ``highestTierName`` when no tier number is given), and one
  ``subGroupPolicy`` per partitioned task (``subGroupSize = partitionSize``,
  ``minSubGroups = minPartitions``, selector ``volcano.sh/task-spec: <task>``,
  ``matchLabelKeys: [volcano.sh/partition-id]``, the partition's topology).
- **minResources** (Volcano's ``calcPGMinResources``): when ``minAvailable`` is below the sum
  of the tasks' ``minAvailable``, the quota usage of the first ``minAvailable`` pods in task
  order; otherwise each task's ``minAvailable`` pods, then pods beyond them in task order
  until ``minAvailable`` are counted. Volcano orders tasks by their PriorityClass value first;
  volcano-py does not cache PriorityClasses, so tasks count in the order written.
- **Pod** ``<job>-<task>-<index>``: the task template's metadata and spec, ``schedulerName``
  and ``priorityClassName`` from the Job where the template has none, the labels and
  annotations Volcano puts on (task spec and index, job name/namespace, queue, version,
  retry count, template key, group name, preemption keys copied from the Job) and
  ``volcano.sh/partition-id = index // partitionSize`` for a partitioned task.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from volcano_py.api import JSON
from volcano_py.api import constants as C
from volcano_py.api.meta import copy_annotations
from volcano_py.api.quantity import Quantity, add_resource_lists, format_resource_list
from volcano_py.api.vcjob import (
    JOB_NAME_KEY,
    JOB_NAMESPACE_KEY,
    JOB_RETRY_COUNT_KEY,
    JOB_VERSION,
    NUMA_POLICY_KEY,
    POD_TEMPLATE_KEY,
    QUEUE_NAME_KEY,
    TASK_INDEX,
    TASK_PARTITION_ID,
    TASK_SPEC_KEY,
    JobView,
    TaskSpec,
    job_owner_reference,
)
from volcano_py.controllers.podgroup.quota import pod_quota_usage

ResourceList = dict[str, Quantity]

# Keys a pod inherits from its Job's annotations / labels (Volcano's createJobPod).
_ANNOTATIONS_FROM_JOB = (C.POD_PREEMPTABLE, C.COOLDOWN_TIME, C.REVOCABLE_ZONE)
_LABELS_FROM_JOB = (C.POD_PREEMPTABLE, C.COOLDOWN_TIME)


def pod_name(job: str, task: str, ix: int) -> str:
    """``<job>-<task>-<index>`` (Volcano's ``PodNameFmt``)."""
    return f"{job}-{task}-{ix}"


def _task_usage(task: TaskSpec, count: int) -> ResourceList:
    if count <= 0:
        return {}
    one = pod_quota_usage({"spec": task.template.get("spec") or {}})
    return {name: amount * count for name, amount in one.items()}


def min_resources(view: JobView) -> ResourceList:
    """The PodGroup's ``minResources`` (see the module docstring)."""
    wanted = view.min_available
    total: ResourceList = {}
    if wanted < view.total_task_min_available:
        left = wanted
        for task in view.tasks:
            take = min(left, task.replicas)
            total = add_resource_lists(total, _task_usage(task, take))
            left -= take
            if left <= 0:
                break
        return total
    counted = 0
    for task in view.tasks:
        if task.min_available is None:
            continue
        take = min(task.min_available, wanted - counted)
        total = add_resource_lists(total, _task_usage(task, take))
        counted += take
        if counted >= wanted:
            return total
    left = wanted - counted
    for task in view.tasks:
        extra = task.replicas
        if task.min_available is not None:
            if task.min_available == task.replicas:
                continue
            extra = task.replicas - task.min_available
        take = min(left, extra)
        total = add_resource_lists(total, _task_usage(task, take))
        left -= take
        if left <= 0:
            break
    return total


def network_topology(spec: Mapping[str, Any]) -> JSON:
    """A Job's ``networkTopology`` as the PodGroup carries it (tier number wins over name)."""
    out: JSON = {}
    if spec.get("mode"):
        out["mode"] = spec["mode"]
    if spec.get("highestTierAllowed") is not None:
        out["highestTierAllowed"] = spec["highestTierAllowed"]
    elif spec.get("highestTierName"):
        out["highestTierName"] = spec["highestTierName"]
    return out


def sub_group_policy(task: TaskSpec) -> JSON:
    """One ``subGroupPolicy`` entry for a partitioned task."""
    policy = task.partition_policy
    assert policy is not None
    entry: JSON = {
        "name": task.name,
        "subGroupSize": policy.partition_size,
        "minSubGroups": policy.min_partitions,
        "labelSelector": {"matchLabels": {TASK_SPEC_KEY: task.name}},
        "matchLabelKeys": [TASK_PARTITION_ID],
    }
    if policy.network_topology is not None:
        topology = {
            k: policy.network_topology[k]
            for k in ("mode", "highestTierAllowed", "highestTierName")
            if policy.network_topology.get(k) not in (None, "")
        }
        entry["networkTopology"] = topology
    return entry


def podgroup_spec(view: JobView) -> JSON:
    """The spec fields of the job's PodGroup that the controller owns."""
    spec: JSON = {
        "minMember": view.min_available,
        "minTaskMember": {task.name: task.min_task_member for task in view.tasks},
        "queue": view.queue,
        "minResources": format_resource_list(min_resources(view)),
    }
    if view.priority_class_name:
        spec["priorityClassName"] = view.priority_class_name
    if view.network_topology is not None:
        spec["networkTopology"] = network_topology(view.network_topology)
    groups = [sub_group_policy(t) for t in view.tasks if t.partition_policy is not None]
    if groups:
        spec["subGroupPolicy"] = groups
    return spec


def build_podgroup(job: Mapping[str, Any], view: JobView) -> JSON:
    """The PodGroup to create for ``job``."""
    meta = job.get("metadata") or {}
    metadata: JSON = {
        "name": view.podgroup_name,
        "namespace": view.namespace,
        "ownerReferences": [job_owner_reference(job)],
    }
    if meta.get("labels"):
        metadata["labels"] = dict(meta["labels"])
    if meta.get("annotations"):
        metadata["annotations"] = dict(meta["annotations"])
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": metadata,
        "spec": podgroup_spec(view),
    }


def _same_resources(have: Any, want: Mapping[str, str]) -> bool:
    if not isinstance(have, Mapping) or set(have) != set(want):
        return False
    try:
        return all(Quantity.parse(str(have[k])) == Quantity.parse(want[k]) for k in want)
    except ValueError:
        return False


def updated_podgroup(existing: Mapping[str, Any], view: JobView) -> JSON | None:
    """``existing`` with the controller's fields brought up to date, or None when current.

    Like Volcano's ``shouldUpdateExistingPodGroup``: priorityClassName, minMember,
    minResources, minTaskMember and subGroupPolicy follow the Job; queue and topology are
    set once at creation (the scheduler may already have placed the gang under them).
    """
    want = podgroup_spec(view)
    spec = dict(existing.get("spec") or {})
    changed = False
    if spec.get("priorityClassName", "") != want.get("priorityClassName", ""):
        spec["priorityClassName"] = want.get("priorityClassName", "")
        changed = True
    if spec.get("minMember") != want["minMember"] or not _same_resources(
        spec.get("minResources"), want["minResources"]
    ):
        spec["minMember"] = want["minMember"]
        spec["minResources"] = want["minResources"]
        changed = True
    members = dict(spec.get("minTaskMember") or {})
    for name, count in want["minTaskMember"].items():
        if members.get(name) != count:
            members[name] = count
            changed = True
    if changed or "minTaskMember" not in spec:
        spec["minTaskMember"] = members
        changed = True
    groups = want.get("subGroupPolicy", [])
    if _sub_groups_differ(spec.get("subGroupPolicy") or [], groups):
        spec["subGroupPolicy"] = groups
        changed = True
    if not changed:
        return None
    body = copy.deepcopy(dict(existing))
    body["spec"] = spec
    return body


def _normal_group(entry: Mapping[str, Any]) -> JSON:
    """A subGroupPolicy entry with the CRD's defaults filled in, as the API server stores it."""
    out = {k: v for k, v in entry.items() if v is not None}
    out.setdefault("subGroupSize", 1)
    out.setdefault("minSubGroups", 0)
    topology = out.get("networkTopology")
    if isinstance(topology, Mapping):
        out["networkTopology"] = {
            "mode": "hard",
            **{k: v for k, v in topology.items() if v not in (None, "")},
        }
    return out


def _sub_groups_differ(have: list[Any], want: list[JSON]) -> bool:
    """Whether the existing policies differ from ``want`` once defaults are filled in."""
    current = [_normal_group(g) for g in have if isinstance(g, Mapping)]
    return current != [_normal_group(g) for g in want]


def build_pod(job: Mapping[str, Any], view: JobView, task: TaskSpec, ix: int) -> JSON:
    """The pod ``ix`` of ``task`` (Volcano's ``createJobPod`` without volumes)."""
    template = copy.deepcopy(dict(task.template))
    tmeta = template.get("metadata") or {}
    spec: JSON = template.get("spec") or {}
    if not spec.get("schedulerName"):
        # Volcano's mutating webhook defaults an empty spec.schedulerName to "volcano"; the
        # Job webhook configuration is not shipped yet, so the controller applies it.
        spec["schedulerName"] = view.scheduler_name or C.DEFAULT_SCHEDULER_NAME
    if not spec.get("priorityClassName") and view.priority_class_name:
        spec["priorityClassName"] = view.priority_class_name
    key = task.key
    job_meta = job.get("metadata") or {}
    job_annotations: Mapping[str, str] = job_meta.get("annotations") or {}
    job_labels: Mapping[str, str] = job_meta.get("labels") or {}
    annotations: dict[str, str] = dict(tmeta.get("annotations") or {})
    annotations.update(
        {
            TASK_INDEX: str(ix),
            TASK_SPEC_KEY: key,
            C.KUBE_GROUP_NAME_ANNOTATION: view.podgroup_name,
            JOB_NAME_KEY: view.name,
            QUEUE_NAME_KEY: view.queue,
            JOB_VERSION: str(view.version),
            POD_TEMPLATE_KEY: f"{view.name}-{task.name}",
            JOB_RETRY_COUNT_KEY: str(view.retry_count),
        }
    )
    if task.topology_policy:
        annotations[NUMA_POLICY_KEY] = task.topology_policy
    copy_annotations(job_annotations, annotations, _ANNOTATIONS_FROM_JOB)
    labels: dict[str, str] = dict(tmeta.get("labels") or {})
    labels.update(
        {
            TASK_INDEX: str(ix),
            JOB_NAME_KEY: view.name,
            TASK_SPEC_KEY: key,
            JOB_NAMESPACE_KEY: view.namespace,
            QUEUE_NAME_KEY: view.queue,
        }
    )
    for name in _LABELS_FROM_JOB:
        if name in job_labels:
            labels[name] = job_labels[name]
    partition = task.partition_policy
    if partition is not None:
        size = partition.partition_size
        labels[TASK_PARTITION_ID] = str(ix // size if size > 0 else 0)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": pod_name(view.name, task.name, ix),
            "namespace": view.namespace,
            "ownerReferences": [job_owner_reference(job)],
            "labels": labels,
            "annotations": annotations,
        },
        "spec": spec,
    }
