"""``ManagerOptions``: everything ``volcano-py manager`` can be told, with its defaults.

``commands/manager.py`` fills it from the command line; ``Manager`` (``manager.py``) builds
the process from it. The defaults are Volcano's where a Volcano flag exists; the namespace
and the leader-election identity come from the pod's environment (``KUBE_POD_NAMESPACE``,
``KUBE_POD_NAME``) as Volcano's charts set them.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field

from volcano_py.scheduler.api.node_search import NodeSearch
from volcano_py.scheduler.writer import DEFAULT_BIND_WORKERS


@dataclass
class ManagerOptions:
    """Everything ``volcano-py manager`` can be told (see its ``--help``)."""

    kubeconfig: str | None = None
    controllers: list[str] = field(default_factory=lambda: ["*"])
    scheduler_enabled: bool = True
    scheduler_names: tuple[str, ...] = ("volcano",)
    # The scheduler configuration: this file, else the ConfigMap volcano-scheduler-configmap
    # in ``namespace``, else the built-in tiers.
    scheduler_conf: str | None = None
    schedule_period: float = 1.0
    namespace: str = field(
        default_factory=lambda: os.environ.get("KUBE_POD_NAMESPACE", "volcano-system")
    )
    leader_elect: bool = True
    lease_name: str = "volcano-py"
    lease_namespace: str | None = None
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    identity: str = field(
        default_factory=lambda: (
            os.environ.get("KUBE_POD_NAME") or f"{socket.gethostname()}_{os.getpid()}"
        )
    )
    metrics_host: str = "0.0.0.0"
    metrics_port: int = 8080
    kube_api_qps: float = 500.0
    kube_api_burst: int = 1000
    worker_threads: int = 5
    worker_threads_for_podgroup: int = 5
    bind_workers: int = DEFAULT_BIND_WORKERS
    # how many feasible nodes a task's search finds (Volcano's three flags)
    node_search: NodeSearch = field(default_factory=NodeSearch)
    inherit_owner_annotations: bool = True
    # bare pods whose PodGroup would be a plain gang of one are scheduled without a PodGroup
    # object (controllers/podgroup/implicit.py); False: Volcano's one PodGroup per pod
    implicit_podgroups: bool = True
    cache_sync_timeout: float = 120.0
    # The webhook's own address (host, port): readiness probes it (webhooks.probe). None when
    # this process serves no webhook (tests that run the manager without gunicorn).
    webhook_address: tuple[str, int] | None = None
    # The read-only topology view (/ui, /api/topology) on the metrics address (volcano_py.ui).
    ui_enabled: bool = True
