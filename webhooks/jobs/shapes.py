"""The shape of a Job, checked before any rule or default reads it.

The mutating webhook runs before the API server applies the CRD schema, so it may be sent
anything: a string where a task list belongs, a number for a name, a list for a policy.
``shape_problems(job)`` returns the first wrong type it finds, naming its field the API
server's way (``spec.tasks[0].replicas: must be an integer``); empty means every field the
webhooks and the job controller read has the type they expect, so ``rules.py`` can read
the Job without guarding each access.

It reads what ``JobView.from_dict`` reads (the job controller's own view, so admission and
the controller agree on what a readable Job is), and beyond it the fields only admission
reads: policies' ``event`` / ``events`` / ``exitCode`` / ``action``, ``dependsOn.name``,
``volumes``, the pod template's ``spec`` and its containers' ``resources``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from volcano_py.api.errors import FieldError, child, index, key
from volcano_py.api.meta import read_int, read_list, read_object, read_str
from volcano_py.api.vcjob import JobView

KIND = "Job"
API_VERSION = "batch.volcano.sh/v1alpha1"


def kind_problem(obj: Mapping[str, Any]) -> str | None:
    """A refusal when ``obj`` is not a ``batch.volcano.sh/v1alpha1`` Job, else None."""
    kind, api_version = obj.get("kind"), obj.get("apiVersion")
    if kind == KIND and api_version == API_VERSION:
        return None
    return (
        f"expect resource to be a {API_VERSION} {KIND}, got apiVersion={api_version!r} "
        f"kind={kind!r}: this endpoint serves Volcano Jobs only"
    )


def shape_problems(job: Mapping[str, Any]) -> list[str]:
    """The first wrong type in ``job`` (see the module docstring); empty when none."""
    try:
        read_object(job.get("metadata") or {}, "metadata")
        read_str(job.get("metadata") or {}, "name", "metadata")
        JobView.from_dict(_named(job))
        _admission_fields(job)
    except FieldError as e:
        return [str(e)]
    return []


def _named(job: Mapping[str, Any]) -> Mapping[str, Any]:
    """``job`` with every string-named or unnamed task given a distinct name, for the read.

    Shapes only: two unnamed tasks (the mutating webhook names them ``default<i>``) or two
    tasks of one name (the validating webhook denies that in its own words) are not a
    shape problem. A name of the wrong type is kept, so the read still names it.
    """
    spec = job.get("spec")
    tasks = spec.get("tasks") if isinstance(spec, Mapping) else None
    if not isinstance(spec, Mapping) or not isinstance(tasks, list):
        return job
    named = [
        {**task, "name": f"shape{i}"}
        if isinstance(task, Mapping) and isinstance(task.get("name"), str | None)
        else task
        for i, task in enumerate(tasks)
    ]
    return {**job, "spec": {**spec, "tasks": named}}


def _admission_fields(job: Mapping[str, Any]) -> None:
    """Walk the fields only admission reads, raising ``FieldError`` at the first bad one."""
    spec = read_object(job.get("spec") or {}, "spec")
    _policies(spec.get("policies"), "spec.policies")
    for i, volume in enumerate(read_list(spec.get("volumes"), "spec.volumes")):
        at = index("spec.volumes", i)
        obj = read_object(volume, at)
        read_str(obj, "mountPath", at)
        read_str(obj, "volumeClaimName", at)
        if obj.get("volumeClaim") is not None:
            read_object(obj["volumeClaim"], child(at, "volumeClaim"))
    for i, task in enumerate(read_list(spec.get("tasks"), "spec.tasks")):
        at = index("spec.tasks", i)
        obj = read_object(task, at)
        _policies(obj.get("policies"), child(at, "policies"))
        depends = obj.get("dependsOn")
        if depends is not None:
            depends_at = child(at, "dependsOn")
            depends = read_object(depends, depends_at)
            names = read_list(depends.get("name"), child(depends_at, "name"))
            for j, name in enumerate(names):
                if not isinstance(name, str):
                    raise FieldError(index(child(depends_at, "name"), j), "must be a string")
            read_str(depends, "iteration", depends_at)
        template = obj.get("template")
        if template is not None:
            _pod_spec(template, child(at, "template"))


def _policies(policies: Any, path: str) -> None:
    for i, policy in enumerate(read_list(policies, path)):
        at = index(path, i)
        obj = read_object(policy, at)
        read_str(obj, "event", at)
        read_str(obj, "action", at)
        read_str(obj, "timeout", at)
        read_int(obj.get("exitCode"), child(at, "exitCode"))
        for j, event in enumerate(read_list(obj.get("events"), child(at, "events"))):
            if not isinstance(event, str):
                raise FieldError(index(child(at, "events"), j), "must be a string")


def _pod_spec(template: Any, path: str) -> None:
    spec_at = child(path, "spec")
    spec = read_object(read_object(template, path).get("spec") or {}, spec_at)
    for field in ("containers", "initContainers"):
        for j, container in enumerate(read_list(spec.get(field), child(spec_at, field))):
            at = index(child(spec_at, field), j)
            resources = read_object(container, at).get("resources")
            if resources is None:
                continue
            resources_at = child(at, "resources")
            resources = read_object(resources, resources_at)
            for part in ("requests", "limits"):
                part_at = child(resources_at, part)
                for name, value in read_object(resources.get(part) or {}, part_at).items():
                    if not isinstance(value, str | int | float) or isinstance(value, bool):
                        message = "must be a quantity (a string or a number)"
                        raise FieldError(key(part_at, str(name)), message)
