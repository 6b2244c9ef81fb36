"""The ``ray`` and ``hcclrank`` job plugins: Volcano's other distributed-framework plugins.

Arguments are Volcano's flags; defaults in brackets.

- **ray** (``--head`` [head], ``--headContainer`` [head], ``--worker`` [worker],
  ``--workerContainer`` [worker], ``--port`` [6379], ``--dashboardPort`` [8265],
  ``--clientPort`` [10001]): the head task's container named ``headContainer`` gets the
  ports ``gcs``, ``dashboard`` and ``client-server`` opened (unless already there) and the
  command ``sh -c "ray start --head --block --dashboard-host=0.0.0.0 --port=<port>
  --dashboard-port=<dashboardPort> --ray-client-server-port=<clientPort>"``; the worker
  task's container named ``workerContainer`` gets ``sh -c "ray start --block
  --address=<head pod 0 as hostname.subdomain>:<port>"``. While the Job is initiated a
  Service ``<job>-head-svc`` (owned by the Job, never adopted) selects the head task's pods
  and exposes the three ports by name; it is deleted with the whole-job kill. A Job without
  the head task fails its pods' creation with a ``PluginError`` naming it.
- **hcclrank** (``--master`` [master], ``--worker`` [worker]): each pod of the master or
  worker task gets the annotation ``hccl/rankIndex``: the pod's ``RANK`` env when a
  container sets it, else the master's index, or the master replicas plus the worker's
  index. A pod that already carries the annotation is left alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from volcano_py.api import JSON
from volcano_py.api import resources as R
from volcano_py.api.vcjob import (
    JOB_NAME_KEY,
    JOB_NAMESPACE_KEY,
    TASK_SPEC_KEY,
    JobView,
    job_owner_reference,
)
from volcano_py.controllers.job.frameworks import _index_of, _task_of, domain_name
from volcano_py.controllers.job.plugins import (
    NoJobHooks,
    PluginError,
    Writer,
    create_owned,
    delete_owned,
    flags,
)

HCCL_RANK_KEY = "hccl/rankIndex"
_RAY_PORTS = (
    ("port", "gcs", 6379),
    ("dashboardPort", "dashboard", 8265),
    ("clientPort", "client-server", 10001),
)


def _port(args: Mapping[str, str], flag: str, default: int) -> int:
    text = args.get(flag)
    if text is None:
        return default
    try:
        port = int(text)
    except ValueError:
        raise PluginError(f"spec.plugins[ray]: --{flag}={text}: not a port number") from None
    if not 0 < port <= 65535:
        raise PluginError(f"spec.plugins[ray]: --{flag}={text}: not a port number")
    return port


@dataclass
class RayPlugin(NoJobHooks):
    """``ray``: head and worker commands, the head's ports and Service; see the docstring."""

    arguments: Sequence[str] = ()
    name: str = "ray"

    def _args(self) -> dict[str, str]:
        return flags(self.arguments)

    def service_name(self, view: JobView) -> str:
        """``<job>-head-svc``."""
        return f"{view.name}-head-svc"

    def _ports(self) -> list[tuple[str, int]]:
        args = self._args()
        return [(name, _port(args, flag, default)) for flag, name, default in _RAY_PORTS]

    def on_pod_create(self, pod: JSON, view: JobView) -> None:
        """Give the head and worker containers their ``ray start`` commands."""
        args = self._args()
        head = view.task(args.get("head", "head"))
        if head is None:
            raise PluginError(f"job {view.name} doesn't have head task {args.get('head', 'head')}")
        task = _task_of(pod)
        ports = self._ports()
        (_, gcs), (_, dashboard), (_, client) = ports
        for container in pod.setdefault("spec", {}).get("containers") or []:
            if task == head.name and container.get("name") == args.get("headContainer", "head"):
                known = {p.get("containerPort") for p in container.get("ports") or []}
                container.setdefault("ports", []).extend(
                    {"name": name, "containerPort": port}
                    for name, port in ports
                    if port not in known
                )
                container["command"] = [
                    "sh",
                    "-c",
                    (
                        f"ray start --head --block --dashboard-host=0.0.0.0 --port={gcs} "
                        f"--dashboard-port={dashboard} --ray-client-server-port={client}"
                    ),
                ]
            worker = args.get("worker", "worker")
            if task == worker and container.get("name") == args.get("workerContainer", "worker"):
                address = f"{domain_name(head, view.name, 0)}:{gcs}"
                container["command"] = ["sh", "-c", f"ray start --block --address={address}"]

    def on_job_add(
        self, job: Mapping[str, Any], view: JobView, writer: Writer
    ) -> Mapping[str, str] | None:
        """Create the head Service."""
        head = self._args().get("head", "head")
        selector = {JOB_NAME_KEY: view.name, JOB_NAMESPACE_KEY: view.namespace, TASK_SPEC_KEY: head}
        ports = [
            {"name": name, "port": port, "targetPort": name, "protocol": "TCP"}
            for name, port in self._ports()
        ]
        meta = {
            "name": self.service_name(view),
            "namespace": view.namespace,
            "ownerReferences": [job_owner_reference(job)],
        }
        service = {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": meta,
            "spec": {"selector": selector, "ports": ports},
        }
        create_owned(writer, R.SERVICES, service, view)
        return None

    def on_job_delete(self, job: Mapping[str, Any], view: JobView, writer: Writer) -> None:
        """Delete the head Service (only while the Job controls it)."""
        delete_owned(writer, R.SERVICES, self.service_name(view), view)


@dataclass
class HcclRankPlugin(NoJobHooks):
    """``hcclrank``: the ``hccl/rankIndex`` annotation; see the module docstring."""

    arguments: Sequence[str] = ()
    name: str = "hcclrank"

    def on_pod_create(self, pod: JSON, view: JobView) -> None:
        """Annotate the master's and workers' pods with their HCCL rank."""
        meta = pod.setdefault("metadata", {})
        annotations = meta.setdefault("annotations", {})
        if annotations.get(HCCL_RANK_KEY):
            return
        for container in (pod.get("spec") or {}).get("containers") or []:
            rank = next(
                (
                    e.get("value")
                    for e in container.get("env") or []
                    if e.get("name") == "RANK" and e.get("value")
                ),
                None,
            )
            if rank:
                annotations[HCCL_RANK_KEY] = str(rank)
                return
        args = flags(self.arguments)
        master, worker = args.get("master", "master"), args.get("worker", "worker")
        task = _task_of(pod)
        if task == master:
            annotations[HCCL_RANK_KEY] = str(_index_of(pod))
        elif task == worker:
            masters = view.task(master)
            annotations[HCCL_RANK_KEY] = str((masters.replicas if masters else 0) + _index_of(pod))
