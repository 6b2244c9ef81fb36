"""The distributed-framework job plugins: ``pytorch``, ``mpi`` and ``tensorflow``.

They only change pods (what the ``svc`` plugin's hostnames make reachable); their job
hooks just mark themselves in ``status.controlledResources``, as Volcano's do. Arguments are
Volcano's flags; defaults in brackets.

- **pytorch** (``--master`` [master], ``--worker`` [worker], ``--port`` [23456],
  ``--wait-master-enabled``, ``--wait-master-timeout`` [300], ``--wait-master-image``
  [busybox:1.36.1]): ``MASTER_ADDR`` (the master's pod 0 as ``hostname.subdomain``),
  ``MASTER_PORT``, ``WORLD_SIZE`` (master + worker replicas) and ``RANK`` (0 for the
  master, index + 1 for a worker) in every container, the port opened
  (``pytorchjob-port``); with ``--wait-master-enabled`` workers get an init container that
  waits until the master's port answers. Nothing when the master task is absent.
- **mpi** (``--master`` [master], ``--worker`` [worker], ``--port`` [22]): the port opened
  (``mpijob-port``) in every container; the master's containers get ``MPI_HOST``, the
  workers' hosts comma-separated.
- **tensorflow** (``--ps`` [ps], ``--worker`` [worker], ``--chief`` [chief],
  ``--evaluator`` [evaluator], ``--port`` [2222]): ``TF_CONFIG`` = ``{"cluster": {role:
  [host:port ...]}, "task": {"type": role, "index": i}}`` in every container; nothing for a
  job of one single-replica task.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from volcano_py.api import JSON
from volcano_py.api.vcjob import DEFAULT_TASK_SPEC, TASK_INDEX, TASK_SPEC_KEY, JobView, TaskSpec
from volcano_py.controllers.job.plugins import NoJobHooks, check_host_list, flags


def domain_name(task: TaskSpec, job: str, ix: int) -> str:
    """Pod ``ix`` of ``task`` as ``hostname.subdomain`` (Volcano's ``MakeDomainName``)."""
    spec = task.template.get("spec") or {}
    return f"{spec.get('hostname') or f'{job}-{task.name}-{ix}'}.{spec.get('subdomain') or job}"


def _task_of(pod: Mapping[str, Any]) -> str:
    return ((pod.get("metadata") or {}).get("annotations") or {}).get(
        TASK_SPEC_KEY
    ) or DEFAULT_TASK_SPEC


def _index_of(pod: Mapping[str, Any]) -> int:
    return int(((pod.get("metadata") or {}).get("labels") or {}).get(TASK_INDEX, "0"))


def _open_port(container: JSON, port: int, name: str) -> None:
    ports = container.setdefault("ports", [])
    if not any(p.get("containerPort") == port for p in ports):
        ports.append({"name": name, "containerPort": port})


@dataclass
class PytorchPlugin(NoJobHooks):
    """``pytorch``: torch.distributed's environment; see the module docstring."""

    arguments: Sequence[str] = ()
    name: str = "pytorch"

    def on_pod_create(self, pod: JSON, view: JobView) -> None:
        """Add MASTER_ADDR/PORT, WORLD_SIZE, RANK and the port."""
        args = flags(self.arguments)
        master, worker = args.get("master", "master"), args.get("worker", "worker")
        port = int(args.get("port", "23456"))
        master_task = view.task(master)
        if master_task is None:
            return
        address = domain_name(master_task, view.name, 0)
        task = _task_of(pod)
        world = sum(t.replicas for t in view.tasks if t.name in (master, worker))
        rank = _index_of(pod) + 1 if task == worker else 0
        if task == worker and args.get("wait-master-enabled", "false") == "true":
            self._wait_for_master(pod, address, port, args)
        for container in pod.setdefault("spec", {}).get("containers") or []:
            _open_port(container, port, "pytorchjob-port")
            env = container.setdefault("env", [])
            env += [
                {"name": "MASTER_ADDR", "value": address},
                {"name": "MASTER_PORT", "value": str(port)},
                {"name": "WORLD_SIZE", "value": str(world)},
            ]
            if task in (master, worker):
                env.append({"name": "RANK", "value": str(rank)})

    @staticmethod
    def _wait_for_master(pod: JSON, address: str, port: int, args: Mapping[str, str]) -> None:
        init = pod["spec"].setdefault("initContainers", [])
        if any(c.get("name") == "wait-for-master" for c in init):
            return
        timeout = int(args.get("wait-master-timeout", "300"))
        script = (
            f'echo "Waiting for master {address}:{port}"; T=0; '
            f"until {{ nc -z {address} {port} || echo > /dev/tcp/{address}/{port}; }} "
            f"2>/dev/null; do [ $T -ge {timeout} ] && echo timeout && exit 1; "
            "sleep 2; T=$((T + 2)); done"
        )
        init.append(
            {
                "name": "wait-for-master",
                "image": args.get("wait-master-image", "busybox:1.36.1"),
                "command": ["sh", "-c", script],
            }
        )


@dataclass
class MpiPlugin(NoJobHooks):
    """``mpi``: the ssh port opened, ``MPI_HOST`` on the master; see the module docstring."""

    arguments: Sequence[str] = ()
    name: str = "mpi"

    def on_pod_create(self, pod: JSON, view: JobView) -> None:
        """Open the port everywhere; give the master the workers' hosts."""
        args = flags(self.arguments)
        master, worker = args.get("master", "master"), args.get("worker", "worker")
        port = int(args.get("port", "22"))
        env: JSON | None = None
        if _task_of(pod) == master:
            workers = view.task(worker)
            if workers is None:
                return
            spec = workers.template.get("spec") or {}
            count = 1 if spec.get("hostname") else workers.replicas
            check_host_list(view, workers, count, per_host=1)
            hosts = [domain_name(workers, view.name, i) for i in range(count)]
            env = {"name": "MPI_HOST", "value": ",".join(hosts)}
        spec = pod.setdefault("spec", {})
        for container in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
            _open_port(container, port, "mpijob-port")
            if env is not None:
                container.setdefault("env", []).append(dict(env))


@dataclass
class TensorflowPlugin(NoJobHooks):
    """``tensorflow``: ``TF_CONFIG``; see the module docstring."""

    arguments: Sequence[str] = ()
    name: str = "tensorflow"

    def on_pod_create(self, pod: JSON, view: JobView) -> None:
        """Add ``TF_CONFIG`` to every container."""
        if len(view.tasks) == 1 and view.tasks[0].replicas == 1:
            return
        args = flags(self.arguments)
        port = int(args.get("port", "2222"))
        roles = {args.get(r, r): r for r in ("ps", "worker", "chief", "evaluator")}
        cluster: dict[str, list[str]] = {}
        for task in view.tasks:
            if task.name in roles:
                check_host_list(view, task, task.replicas, per_host=len(str(port)) + 4)
                hosts = [f"{domain_name(task, view.name, i)}:{port}" for i in range(task.replicas)]
                if hosts:
                    cluster[roles[task.name]] = hosts
        task_name = _task_of(pod)
        own = {"type": roles.get(task_name, task_name), "index": _index_of(pod)}
        config = {"cluster": cluster, "task": own}
        value = json.dumps(config, separators=(",", ":"))
        for container in pod.setdefault("spec", {}).get("containers") or []:
            container.setdefault("env", []).append({"name": "TF_CONFIG", "value": value})
