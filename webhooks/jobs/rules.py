"""Volcano's admission rules for Jobs (``batch.volcano.sh/v1alpha1``), as pure functions.

``validate_create(job, queue_of)`` and ``validate_update(old, new)`` return the problems
found, each naming the field (``spec.tasks[1].minAvailable: ...``); empty means allowed.
``default_patch(job)`` returns the JSON patch of Volcano's mutating webhook (defaults).
Volcano's rules (``pkg/webhooks/admission/jobs``), our wording:

- create: at least one task; task ``minAvailable <= replicas``; unique task names; each
  pod name ``<job>-<task>-<index>`` and the job name are qualified names; policies
  (event or exitCode, not both; known events and actions; no duplicate event or exit code;
  exit code not 0; ``*`` alone); ``partitionPolicy`` arithmetic (totalPartitions and
  partitionSize > 0, replicas = totalPartitions x partitionSize, minAvailable =
  minPartitions x partitionSize when minPartitions is set); ``networkTopology`` with a tier
  number and a tier name at once; ``minAvailable <= sum of replicas``; volumes; the queue
  exists, is Open, is not ``root`` and has no child queues; ``dependsOn`` forms a DAG.
  Plugins: every one Volcano ships (``env``, ``svc``, ``ssh``, ``pytorch``, ``mpi``,
  ``tensorflow``, ``ray``, ``hcclrank``) runs; another name is denied, as Volcano does.
- update: only ``minAvailable``, ``tasks[*].replicas``/``minAvailable`` and
  ``priorityClassName`` may change, within the same bounds; no task added or removed.
- defaults: ``queue: default``, ``schedulerName: volcano``, ``maxRetry: 3``, job
  ``minAvailable`` = sum of the tasks' minimums, task names ``default<i>``, task
  ``minAvailable`` (``minPartitions x partitionSize`` when minPartitions is set, else
  ``replicas``), task ``maxRetry: 3``, ``dnsPolicy: ClusterFirstWithHostNet`` with
  ``hostNetwork``, the ``svc`` plugin for ``pytorch``/``mpi``/``tensorflow``/``ray`` and
  ``ssh`` for ``mpi``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from volcano_py.api import JSON
from volcano_py.api.constants import DEFAULT_QUEUE, DEFAULT_SCHEDULER_NAME
from volcano_py.api.selectors import is_qualified_name
from webhooks.jobs.templates import template_problems

QueueLookup = Callable[[str], Mapping[str, Any] | None]

POLICY_EVENTS = (
    "*",
    "PodFailed",
    "PodEvicted",
    "PodPending",
    "Unknown",
    "TaskCompleted",
    "TaskFailed",
    "JobUpdated",
)
POLICY_ACTIONS = (
    "AbortJob",
    "RestartJob",
    "RestartTask",
    "RestartPod",
    "RestartPartition",
    "TerminateJob",
    "CompleteJob",
    "ResumeJob",
)
DEFAULT_MAX_RETRY = 3


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _tasks(job: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    tasks = (job.get("spec") or {}).get("tasks") or []
    return [t for t in tasks if isinstance(t, Mapping)]


def _events(policy: Mapping[str, Any]) -> list[str]:
    events = [str(e) for e in policy.get("events") or []]
    if policy.get("event"):
        events.append(str(policy["event"]))
    return list(dict.fromkeys(events))


def validate_policies(policies: Any, path: str) -> list[str]:
    """Volcano's ``validatePolicies``: the first problem of ``policies`` at ``path``."""
    seen_events: set[str] = set()
    seen_codes: set[int] = set()
    for i, policy in enumerate(policies or []):
        at = f"{path}[{i}]"
        events = _events(policy)
        code = policy.get("exitCode")
        if events and code is not None:
            return [f"{at}: must not specify event and exitCode simultaneously"]
        if not events and code is None:
            return [
                f"{at}: either event or exitCode must be specified "
                "(either event and exitCode should be specified)"
            ]
        if events:
            for event in events:
                if event not in POLICY_EVENTS:
                    return [
                        f"{at}.event: Unsupported value: {event!r}: invalid policy event; "
                        f"supported values: {', '.join(POLICY_EVENTS)}"
                    ]
                action = policy.get("action")
                if action not in POLICY_ACTIONS:
                    return [
                        f"{at}.action: Unsupported value: {action!r}: invalid policy action; "
                        f"supported values: {', '.join(POLICY_ACTIONS)}"
                    ]
                if event in seen_events:
                    return [f"{at}.event: duplicate event {event}  across different policy"]
                seen_events.add(event)
        elif code == 0:
            return [f"{at}.exitCode: Invalid value: 0: 0 is not a valid error code"]
        elif code in seen_codes:
            return [f"{at}.exitCode: duplicate exitCode {code}"]
        else:
            seen_codes.add(code)
    if "*" in seen_events and len(seen_events) > 1:
        return [
            f"{path}: with the event '*' no other event may be given "
            "(if there's * here, no other policy should be here)"
        ]
    return []


def _topology(topology: Any, path: str) -> list[str]:
    if (
        isinstance(topology, Mapping)
        and topology.get("highestTierAllowed") is not None
        and (topology.get("highestTierName"))
    ):
        return [
            f"{path}: must not specify 'highestTierAllowed' and 'highestTierName' in "
            "networkTopology simultaneously"
        ]
    return []


def _in_task(task: Mapping[str, Any], job_name: str) -> str:
    return f"in task: {task.get('name') or ''}, job: {job_name}"


def _partition(task: Mapping[str, Any], path: str, job_name: str) -> list[str]:
    policy = task.get("partitionPolicy")
    if not isinstance(policy, Mapping):
        return []
    at = f"{path}.partitionPolicy"
    where = _in_task(task, job_name)
    total, size = _int(policy.get("totalPartitions")), _int(policy.get("partitionSize"))
    minimum, replicas = _int(policy.get("minPartitions")), _int(task.get("replicas"))
    problems: list[str] = []
    if total <= 0:
        problems.append(
            f"{at}.totalPartitions: must be greater than 0 "
            f"('TotalPartitions' must be greater than 0 {where})"
        )
    elif size <= 0:
        problems.append(
            f"{at}.partitionSize: must be greater than 0 "
            f"('PartitionSize' must be greater than 0 {where})"
        )
    elif replicas != total * size:
        problems.append(
            f"{path}.replicas: Invalid value: {replicas}: must equal totalPartitions x "
            f"partitionSize ({total * size}) ('Replicas' are not equal to "
            f"TotalPartitions*PartitionSize {where})"
        )
    elif (
        task.get("minAvailable") is not None
        and minimum > 0
        and (minimum * size != _int(task.get("minAvailable")))
    ):
        problems.append(
            f"{path}.minAvailable: Invalid value: {task.get('minAvailable')}: must equal "
            f"minPartitions x partitionSize ({minimum * size}) ('MinAvailable' is not equal "
            f"to MinPartitions*PartitionSize {where})"
        )
    return problems + _topology(policy.get("networkTopology"), f"{at}.networkTopology")


def _volumes(volumes: Any) -> list[str]:
    mounts: set[str] = set()
    for i, volume in enumerate(volumes or []):
        at = f"spec.volumes[{i}]"
        mount = volume.get("mountPath") or ""
        if not mount:
            return [f"{at}.mountPath: Required value: mountPath is required"]
        if mount in mounts:
            return [f"{at}.mountPath: Duplicate value: {mount!r}: duplicated mountPath: {mount}"]
        if volume.get("volumeClaim") is None and not volume.get("volumeClaimName"):
            return [
                f"{at}: either volumeClaim or volumeClaimName must be specified "
                "(either VolumeClaim or VolumeClaimName must be specified)"
            ]
        if volume.get("volumeClaimName") and volume.get("volumeClaim") is not None:
            return [
                f"{at}: give volumeClaimName to use an existing PVC, or volumeClaim to "
                "create one, not both (conflict: If you want to use an existing PVC, just "
                "specify VolumeClaimName.If you want to create a new PVC, you do not need to "
                "specify VolumeClaimName.)"
            ]
        mounts.add(mount)
    return []


def _is_dag(tasks: list[Mapping[str, Any]]) -> bool:
    edges = {
        str(t.get("name")): [str(n) for n in (t.get("dependsOn") or {}).get("name") or []]
        for t in tasks
    }
    state: dict[str, int] = {}

    def visit(node: str) -> bool:
        if state.get(node) == 1:
            return False
        if state.get(node) == 2:
            return True
        state[node] = 1
        ok = all(visit(n) for n in edges.get(node, []) if n in edges)
        state[node] = 2
        return ok

    return all(visit(n) for n in edges)


def _depends_on(tasks: list[Mapping[str, Any]]) -> list[str]:
    """A ``dependsOn`` naming a task the job does not have (Volcano admits it; it never runs)."""
    names = {str(t.get("name") or "") for t in tasks}
    problems: list[str] = []
    for i, task in enumerate(tasks):
        for j, name in enumerate((task.get("dependsOn") or {}).get("name") or []):
            if name not in names:
                problems.append(
                    f"spec.tasks[{i}].dependsOn.name[{j}]: Not found: {name!r}: the job has "
                    "no task of that name, so this task would never start"
                )
    return problems


def _queue(name: str, queue_of: QueueLookup, children: Callable[[str], int]) -> list[str]:
    queue = queue_of(name)
    if queue is None:
        return [
            f"spec.queue: Not found: {name!r}: the queue does not exist (unable to find job "
            f'queue: queue.scheduling.volcano.sh "{name}" not found)'
        ]
    state = (queue.get("status") or {}).get("state")
    if state != "Open":
        return [
            f"spec.queue: Invalid value: {name!r}: jobs can only be submitted to an Open "
            f"queue, this one is {state or 'not open yet'} (can only submit job to queue with "
            f"state `Open`, queue `{name}` status is `{state or ''}`)"
        ]
    if name == "root":
        return [
            "spec.queue: Invalid value: 'root': jobs cannot be submitted to the root queue "
            "(can not submit job to root queue)"
        ]
    count = children(name)
    if count:
        return [
            f"spec.queue: Invalid value: {name!r}: jobs can only be submitted to a leaf "
            f"queue, this one has {count} child queues (can only submit job to leaf queue, "
            f"queue `{name}` has {count} child queues)"
        ]
    return []


def _task_problems(task: Mapping[str, Any], i: int, job_name: str) -> list[str]:
    at = f"spec.tasks[{i}]"
    task_name = str(task.get("name") or "")
    problems: list[str] = []
    minimum, replicas = task.get("minAvailable"), _int(task.get("replicas"))
    if minimum is not None and _int(minimum) > replicas:
        problems.append(
            f"{at}.minAvailable: Invalid value: {minimum}: must not be greater than replicas "
            f"({replicas}) ('minAvailable' is greater than 'replicas' {_in_task(task, job_name)})"
        )
    problems += validate_policies(task.get("policies"), f"{at}.policies")
    pod = f"{job_name}-{task_name}-{i}"
    errors = is_qualified_name(pod)
    if errors:
        volcano = f"create pod with name {pod} validate failed [{' '.join(errors)}]"
        problems += [f"{at}.name: pod name {pod!r} is invalid: {e} ({volcano})" for e in errors]
    problems += _partition(task, at, job_name)
    problems += template_problems(task.get("template") or {}, f"{at}.template")
    return problems


def validate_create(
    job: Mapping[str, Any],
    queue_of: QueueLookup | None = None,
    children: Callable[[str], int] = lambda name: 0,
) -> list[str]:
    """The problems Volcano's webhook finds in a new Job (see the module docstring)."""
    spec = job.get("spec") or {}
    name = str((job.get("metadata") or {}).get("name") or "")
    tasks = _tasks(job)
    if not tasks:
        return ["spec.tasks: Required value: No task specified in job spec"]
    problems = _topology(spec.get("networkTopology"), "spec.networkTopology")
    names: set[str] = set()
    for i, task in enumerate(tasks):
        task_name = str(task.get("name") or "")
        if task_name in names:
            problems.append(
                f"spec.tasks[{i}].name: Duplicate value: {task_name!r}: "
                f"duplicated task name {task_name}"
            )
            break
        names.add(task_name)
        problems += _task_problems(task, i, name)
    errors = is_qualified_name(name)
    if errors:
        volcano = f"create job with name {name} validate failed [{' '.join(errors)}]"
        problems += [f"metadata.name: Invalid value: {name!r}: {e} ({volcano})" for e in errors]
    total = sum(_int(t.get("replicas")) for t in tasks)
    if _int(spec.get("minAvailable")) > total:
        problems.append(
            f"spec.minAvailable: Invalid value: {spec.get('minAvailable')}: must not be greater "
            f"than the tasks' replicas ({total}) (job 'minAvailable' should not be greater "
            "than total replicas in tasks)"
        )
    min_success = spec.get("minSuccess")
    if min_success is not None and _int(min_success) > total:
        problems.append(
            f"spec.minSuccess: Invalid value: {min_success}: must not be greater than the "
            f"tasks' replicas ({total}): the job could never complete"
        )
    problems += validate_policies(spec.get("policies"), "spec.policies")
    problems += plugin_problems(spec.get("plugins") or {}, tasks)
    problems += _volumes(spec.get("volumes"))
    if queue_of is not None:
        problems += _queue(str(spec.get("queue") or DEFAULT_QUEUE), queue_of, children)
    problems += _depends_on(tasks)
    if any(t.get("dependsOn") for t in tasks) and not _is_dag(tasks):
        problems.append(
            "spec.tasks: dependsOn between tasks must form a directed acyclic graph (job has "
            "dependencies between tasks, but doesn't form a directed acyclic graph(DAG))"
        )
    return problems


# Every plugin Volcano's job controller registers (pkg/controllers/job/plugins/factory.go).
VOLCANO_PLUGINS = frozenset(
    {"env", "svc", "ssh", "pytorch", "mpi", "tensorflow", "ray", "hcclrank"}
)
# The ones volcano-py runs (all of Volcano's; a Job naming another is denied above).
SUPPORTED_PLUGINS = VOLCANO_PLUGINS


def plugin_problems(plugins: Mapping[str, Any], tasks: list[Mapping[str, Any]]) -> list[str]:
    """Plugins Volcano does not know, and ``mpi`` without its master task (Volcano's denials)."""
    problems = [
        f"spec.plugins[{name}]: Unsupported value: {name!r}: unable to find job plugin: {name}"
        for name in sorted(plugins)
        if name not in VOLCANO_PLUGINS
    ]
    if "mpi" in plugins:
        master = "master"
        for arg in plugins.get("mpi") or []:
            flag, _, value = str(arg).lstrip("-").partition("=")
            if flag == "master" and value:
                master = value
        if master not in {str(t.get("name") or "") for t in tasks}:
            problems.append(
                f"spec.plugins[mpi]: Not found: master task {master!r}: The specified mpi "
                "master task was not found"
            )
    return problems


def plugin_warnings(job: Mapping[str, Any]) -> list[str]:
    """Warnings for Volcano's plugins volcano-py does not run yet."""
    plugins = (job.get("spec") or {}).get("plugins") or {}
    missing = sorted(p for p in plugins if p not in SUPPORTED_PLUGINS and p in VOLCANO_PLUGINS)
    if not missing:
        return []
    return [f"spec.plugins: not supported yet, the job runs without: {', '.join(missing)}"]


_MUTABLE_TASK = ("replicas", "minAvailable")


def validate_update(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """Volcano's ``validateJobUpdate``: what an update may change, and the bounds it keeps."""
    spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    tasks, old_tasks = _tasks(new), _tasks(old)
    name = str((new.get("metadata") or {}).get("name") or "")
    total = 0
    for i, task in enumerate(tasks):
        at = f"spec.tasks[{i}]"
        replicas = _int(task.get("replicas"))
        if task.get("minAvailable") is not None and _int(task["minAvailable"]) > replicas:
            return [
                f"{at}.minAvailable: Invalid value: {task['minAvailable']}: must not be "
                f"greater than replicas ({replicas}) ('minAvailable' must be <= 'replicas' in "
                f"task: {task.get('name') or ''})"
            ]
        problems = _partition(task, at, name)
        if problems:
            return problems
        total += replicas
    if _int(spec.get("minAvailable")) > total:
        return [
            f"spec.minAvailable: Invalid value: {spec.get('minAvailable')}: must not be "
            f"greater than the tasks' replicas ({total}) (job 'minAvailable' must not be "
            "greater than total replicas)"
        ]
    problems = _topology(spec.get("networkTopology"), "spec.networkTopology")
    if problems:
        return problems
    if len(tasks) != len(old_tasks):
        return ["spec.tasks: Forbidden: job updates may not add or remove tasks"]
    frozen_new, frozen_old = copy.deepcopy(dict(spec)), copy.deepcopy(dict(old_spec))
    for frozen in (frozen_new, frozen_old):
        frozen.pop("minAvailable", None)
        frozen.pop("priorityClassName", None)
        for task in frozen.get("tasks") or []:
            for key in _MUTABLE_TASK:
                task.pop(key, None)
        for volume in frozen.get("volumes") or []:
            if volume.get("volumeClaim") is not None:
                volume.pop("volumeClaimName", None)
    if frozen_new != frozen_old:
        return [
            "spec: Forbidden: job updates may not change fields other than minAvailable, "
            "tasks[*].replicas, tasks[*].minAvailable and priorityClassName (job updates may "
            "not change fields other than `minAvailable`, `tasks[*].replicas under spec` and "
            "`PriorityClassName`)"
        ]
    return []


def default_patch(job: Mapping[str, Any]) -> list[JSON]:
    """The JSON patch (RFC 6902) with Volcano's defaults for a new Job; empty if none."""
    spec = job.get("spec") or {}
    patch: list[JSON] = []
    if not spec.get("queue"):
        patch.append({"op": "add", "path": "/spec/queue", "value": DEFAULT_QUEUE})
    if not spec.get("schedulerName"):
        patch.append({"op": "add", "path": "/spec/schedulerName", "value": DEFAULT_SCHEDULER_NAME})
    if not _int(spec.get("maxRetry")):
        patch.append({"op": "add", "path": "/spec/maxRetry", "value": DEFAULT_MAX_RETRY})
    raw_tasks = spec.get("tasks") or []
    tasks: list[JSON] = [copy.deepcopy(dict(t)) for t in raw_tasks if isinstance(t, Mapping)]
    if not _int(spec.get("minAvailable")):
        total = sum(
            _int(t.get("replicas")) if t.get("minAvailable") is None else _int(t["minAvailable"])
            for t in tasks
        )
        patch.append({"op": "add", "path": "/spec/minAvailable", "value": total})
    changed = False
    for i, task in enumerate(tasks):
        if not task.get("name"):
            task["name"] = f"default{i}"
            changed = True
        pod_spec = (task.get("template") or {}).get("spec") or {}
        if pod_spec.get("hostNetwork") and not pod_spec.get("dnsPolicy"):
            pod_spec["dnsPolicy"] = "ClusterFirstWithHostNet"
            changed = True
        if task.get("minAvailable") is None:
            policy = task.get("partitionPolicy") or {}
            minimum = _int(policy.get("minPartitions"))
            task["minAvailable"] = (
                minimum * _int(policy.get("partitionSize"))
                if minimum > 0
                else _int(task.get("replicas"))
            )
            changed = True
        if not _int(task.get("maxRetry")):
            task["maxRetry"] = DEFAULT_MAX_RETRY
            changed = True
    if changed and len(tasks) == len(raw_tasks):
        patch.append({"op": "replace", "path": "/spec/tasks", "value": tasks})
    plugins = _plugins_with_dependencies(spec.get("plugins"))
    if plugins is not None:
        patch.append({"op": "replace", "path": "/spec/plugins", "value": plugins})
    return patch


# Plugins that need others (Volcano's mutating webhook adds them when missing).
_PLUGIN_NEEDS = {
    "tensorflow": ("svc",),
    "mpi": ("svc", "ssh"),
    "pytorch": ("svc",),
    "ray": ("svc",),
}


def _plugins_with_dependencies(plugins: Any) -> JSON | None:
    """``plugins`` with what its framework plugins need added; None when nothing is missing."""
    if not isinstance(plugins, Mapping):
        return None
    wanted = dict(plugins)
    for name in list(plugins):
        for needed in _PLUGIN_NEEDS.get(name, ()):
            wanted.setdefault(needed, [])
    return wanted if len(wanted) > len(plugins) else None
