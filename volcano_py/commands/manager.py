"""``volcano-py manager``: the whole product in one process (webhooks, controllers, scheduler).

The master process starts listing the large collections (Nodes, Pods, PodGroups, Queues,
HyperNodes) on threads, imports the rest of the product meanwhile, prepares the webhook
certificate (files or the shared Secret, caBundle patched) so gunicorn can bind TLS, waits
for the lists, then runs gunicorn with one gthread worker, whose informers start from those
lists (``kube/prefetch.py``). The worker builds the ``Manager`` when it loads the app
(after fork) and starts it right after (``post_worker_init``); SIGTERM stops the worker
gracefully (``Manager.stop``: Lease released, in-flight binds and admissions finished).
"""

from __future__ import annotations

import argparse
import logging
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from volcano_py.api import resources as R
from volcano_py.commands.argtypes import (
    add_log_format_argument,
    boolean,
    non_negative_float,
    non_negative_int,
    percentage,
    port,
    positive_float,
    positive_int,
)
from volcano_py.commands.cluster_access import CommandError, add_api_wait_argument, connect
from volcano_py.commands.ports import port_problem
from volcano_py.controllers.framework import (
    ControllerRegistry,
    UnknownControllerError,
    parse_controllers_flag,
)
from volcano_py.kube.client import KubeClient
from volcano_py.kube.config import load_config
from volcano_py.kube.errors import ApiError
from volcano_py.kube.prefetch import ListPrefetch
from volcano_py.kube.runtime import tune_gc, tune_switch_interval
from volcano_py.logsetup import configure_logging
from volcano_py.scheduler.api.node_search import (
    DEFAULT_MIN_NODES,
    DEFAULT_MIN_PERCENTAGE,
    DEFAULT_PERCENTAGE,
    NodeSearch,
)

if TYPE_CHECKING:
    from volcano_py.certkeeper import CertKeeper
    from volcano_py.manager import Manager, ManagerOptions

log = logging.getLogger(__name__)

EXAMPLES = """examples:
  # against the cluster in $KUBECONFIG, certificates generated into ./certs
  volcano-py manager --cert-dir certs/

  # in a cluster (what manifests/base/deployment.yaml runs)
  volcano-py manager --webhook-cert-secret volcano-py-webhook-cert \\
      --webhook-configuration volcano-py-admission --scheduler-conf /etc/volcano.conf

  # only the podgroup controller and the webhook, no scheduler, no leader election
  volcano-py manager --controllers=-hyperNode-controller --no-scheduler --leader-elect=false
"""


def _address(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    try:
        return host or "0.0.0.0", int(port)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {value!r}") from None


def add_parser(subparsers: Any) -> None:
    """Register ``manager``."""
    p = subparsers.add_parser(
        "manager",
        help="run webhooks, controllers and the scheduler in one process",
        description=__doc__,
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--kubeconfig", help="kubeconfig file (default: $KUBECONFIG, then in-cluster)")
    add_api_wait_argument(p)
    p.add_argument(
        "--controllers",
        action="append",
        default=None,
        help="controllers to run: '*', 'name', '-name' (comma-separated, repeatable;"
        " default '*': hyperNode-controller, job-controller, pg-controller)",
    )
    p.add_argument(
        "--scheduler-name",
        action="append",
        default=None,
        help="schedulerName(s) served (repeatable; default volcano)",
    )
    p.add_argument("--scheduler-conf", help="volcano-scheduler.conf file (default: built-in tiers)")
    p.add_argument(
        "--schedule-period", type=positive_float, default=1.0, help="seconds between cycles"
    )
    p.add_argument("--no-scheduler", action="store_true", help="do not run the scheduler")
    p.add_argument("--webhook-host", default="0.0.0.0")
    p.add_argument("--webhook-port", type=port, default=8443)
    p.add_argument("--webhook-threads", type=positive_int, default=8)
    p.add_argument(
        "--webhook-request-timeout",
        type=positive_float,
        default=5.0,
        help="seconds a connection has to deliver a complete request before it is closed",
    )
    p.add_argument(
        "--cert-dir", type=Path, help="folder with tls.crt/tls.key/ca.crt (created when missing)"
    )
    p.add_argument(
        "--webhook-cert-secret", help="keep the certificate in this Secret (in the pod namespace)"
    )
    p.add_argument("--webhook-service", default="volcano-py", help="Service name in the cert SANs")
    p.add_argument(
        "--webhook-configuration",
        help="name of the webhook configurations (validating, mutating) whose caBundle is kept",
    )
    p.add_argument(
        "--cert-check-interval",
        type=positive_float,
        default=3600.0,
        help="seconds between certificate checks (default 3600)",
    )
    p.add_argument(
        "--cert-validity",
        type=positive_float,
        default=None,
        metavar="SECONDS",
        help="issue short-lived serving certificates valid this long (default: 365 days);"
        " keep --cert-check-interval under a third of it",
    )
    p.add_argument("--leader-elect", type=boolean, default=True, metavar="BOOL")
    p.add_argument("--lease-name", default="volcano-py")
    p.add_argument("--lease-namespace", help="default: the pod namespace")
    p.add_argument("--lease-duration", type=positive_float, default=15.0)
    p.add_argument("--renew-deadline", type=positive_float, default=10.0)
    p.add_argument("--retry-period", type=positive_float, default=2.0)
    p.add_argument(
        "--metrics-address",
        type=_address,
        default=("0.0.0.0", 8080),
        metavar="HOST:PORT",
        help="/healthz, /readyz, /metrics and the topology view /ui (plain HTTP)",
    )
    p.add_argument(
        "--ui",
        type=boolean,
        default=True,
        metavar="BOOL",
        help="serve the read-only topology view (/ui, /api/topology) on --metrics-address"
        " (default true)",
    )
    p.add_argument("--kube-api-qps", type=non_negative_float, default=500.0)
    p.add_argument("--kube-api-burst", type=positive_int, default=1000)
    p.add_argument("--worker-threads", type=positive_int, default=5)
    p.add_argument("--worker-threads-for-podgroup", type=positive_int, default=5)
    p.add_argument(
        "--minimum-feasible-nodes",
        type=non_negative_int,
        default=DEFAULT_MIN_NODES,
        help="a task's node search finds at least this many feasible nodes before it stops "
        "(Volcano's flag; lists this short are searched whole)",
    )
    p.add_argument(
        "--minimum-percentage-nodes-to-find",
        type=percentage,
        default=DEFAULT_MIN_PERCENTAGE,
        help="the adaptive search's lowest percentage of the nodes (Volcano's flag)",
    )
    p.add_argument(
        "--percentage-nodes-to-find",
        type=percentage,
        default=DEFAULT_PERCENTAGE,
        help="percentage of the nodes a task's search finds feasible before it stops; 0: "
        "adaptive (50 - nodes/125), 100: every node (Volcano's flag)",
    )
    p.add_argument(
        "--bind-workers",
        type=positive_int,
        default=None,
        help="concurrent pods/binding calls of the scheduler, default 32 (a bind waits on "
        "kube-apiserver: fewer workers cap the binding rate; more threads contend with "
        "admissions for the GIL)",
    )
    p.add_argument("--inherit-owner-annotations", type=boolean, default=True, metavar="BOOL")
    p.add_argument(
        "--implicit-podgroups",
        type=boolean,
        default=True,
        metavar="BOOL",
        help="schedule a bare pod whose PodGroup would be a gang of one without creating that "
        "PodGroup (it lives in the scheduler's cache); false: a PodGroup per pod, as Volcano",
    )
    p.add_argument("-v", "--v", dest="verbosity", type=int, default=2, help="klog-style level")
    add_log_format_argument(p)
    p.add_argument(
        "--webhook-access-log",
        type=boolean,
        default=False,
        metavar="BOOL",
        help="log one line per webhook request (gunicorn's access log)",
    )
    p.set_defaults(handler=run)


def options_from(args: argparse.Namespace) -> ManagerOptions:
    """``ManagerOptions`` from parsed flags."""
    from volcano_py.manager import ManagerOptions
    from volcano_py.scheduler.writer import DEFAULT_BIND_WORKERS

    options = ManagerOptions(
        kubeconfig=args.kubeconfig,
        controllers=parse_controllers_flag(args.controllers or ["*"]),
        scheduler_enabled=not args.no_scheduler,
        scheduler_names=tuple(args.scheduler_name or ["volcano"]),
        scheduler_conf=args.scheduler_conf,
        schedule_period=args.schedule_period,
        leader_elect=args.leader_elect,
        lease_name=args.lease_name,
        lease_namespace=args.lease_namespace,
        lease_duration=args.lease_duration,
        renew_deadline=args.renew_deadline,
        retry_period=args.retry_period,
        metrics_host=args.metrics_address[0],
        metrics_port=args.metrics_address[1],
        kube_api_qps=args.kube_api_qps,
        kube_api_burst=args.kube_api_burst,
        worker_threads=args.worker_threads,
        worker_threads_for_podgroup=args.worker_threads_for_podgroup,
        bind_workers=args.bind_workers or DEFAULT_BIND_WORKERS,
        node_search=NodeSearch(
            min_nodes=args.minimum_feasible_nodes,
            min_percentage=args.minimum_percentage_nodes_to_find,
            percentage=args.percentage_nodes_to_find,
        ),
        inherit_owner_annotations=args.inherit_owner_annotations,
        implicit_podgroups=args.implicit_podgroups,
        webhook_address=(args.webhook_host, args.webhook_port),
        ui_enabled=args.ui,
    )
    return options


def check_flags(options: ManagerOptions) -> str | None:
    """Why flags that parse one by one cannot run together (None: they can)."""
    from volcano_py.controllers.builtin import register_builtin_controllers

    registry = ControllerRegistry()
    register_builtin_controllers(registry)
    try:
        registry.enabled(options.controllers)
    except UnknownControllerError as e:
        return f"--controllers: {e}"
    # client-go's leader election: lease-duration > renew-deadline > 1.2 * retry-period
    if options.leader_elect and not (
        options.lease_duration > options.renew_deadline > 1.2 * options.retry_period
    ):
        return (
            f"--lease-duration ({options.lease_duration:g}) must exceed --renew-deadline "
            f"({options.renew_deadline:g}), which must exceed 1.2 x --retry-period "
            f"({options.retry_period:g})"
        )
    return None


def check_scheduler_conf(path: str | None) -> str | None:
    """Why the ``--scheduler-conf`` file cannot run (None: it can, or there is none)."""
    if not path:
        return None
    from volcano_py.scheduler.framework.arguments import ConfError
    from volcano_py.scheduler.framework.registry import load_conf
    from volcano_py.scheduler.scheduler import builtin_registries

    try:
        text = Path(path).read_text()
    except OSError as e:
        return f"cannot read: {e.strerror or e}"
    plugins, actions = builtin_registries()
    try:
        load_conf(text, plugins, actions)
    except ConfError as e:
        return str(e).replace("\n", " ")
    return None


# The informers whose first lists the master fetches while it imports (kube/prefetch.py):
# the large collections every configuration caches. The others list in the worker.
HEAD_START = (R.NODES, R.PODS, R.PODGROUPS, R.QUEUES, R.HYPERNODES)
# how long the master waits for them before it forks anyway (the worker then lists)
HEAD_START_WAIT_S = 60.0


def run(args: argparse.Namespace) -> int:
    """Prepare certificates, then serve under gunicorn with the manager in its worker.

    The informers' large lists start first, on threads, so they load while this process
    imports the rest of the product (the manager, the controllers, the webhooks); the worker
    gunicorn forks starts from them (``kube/prefetch.py``).
    """
    configure_logging(args.verbosity, args.log_format)
    tune_gc()
    tune_switch_interval()
    head_start = ListPrefetch(
        lambda: KubeClient(
            load_config(args.kubeconfig), qps=args.kube_api_qps, burst=args.kube_api_burst
        ),
        HEAD_START,
    )
    head_start.start()
    from volcano_py.manager import Manager
    from webhooks.server import ServerOptions, WebhookServer

    options = options_from(args)
    try:
        keeper = prepare(args, options)
    except CommandError as e:
        # through the log, so --log-format json keeps every line JSON
        log.error("volcano-py manager: %s", e)
        return e.exit_code
    head_start.wait(HEAD_START_WAIT_S)  # before gunicorn forks: no thread may be mid-request
    holder: dict[str, Manager] = {}

    def app_factory() -> Any:
        manager = Manager(options, head_start=head_start)
        holder["manager"] = manager
        return manager.wsgi_app()

    def post_worker_init(worker: Any) -> None:
        manager = holder["manager"]
        manager.start()
        keeper.client = manager.client
        keeper.start(manager.stop_event)
        log.info("manager started in worker %d", os.getpid())

    def on_exit(worker: Any) -> None:
        manager = holder.get("manager")
        if manager is not None:
            manager.stop()

    server = WebhookServer(
        app_factory,
        ServerOptions(
            cert_dir=keeper.folder,
            host=args.webhook_host,
            port=args.webhook_port,
            threads=args.webhook_threads,
            request_timeout=args.webhook_request_timeout,
            access_log=args.webhook_access_log,
        ),
        post_worker_init=post_worker_init,
        on_exit=on_exit,
        after_spawn=lambda: _forget_lists(head_start),
    )
    server.run()
    return 0


def _forget_lists(head_start: ListPrefetch) -> None:
    """In the master once it forked the worker: drop its lists and give their memory back.

    The master keeps no copy (a later worker lists afresh), but memory freed by dropping the
    lists stayed with the process: 220 MB of master RSS with 10,000 nodes, 50,000 pods and
    10,000 HyperNodes listed, against 39 MB on an empty cluster (``bench process rss``).
    """
    from volcano_py.kube.idle_trim import release_now  # the master's start imports little

    head_start.drop()
    release_now()


def prepare(args: argparse.Namespace, options: ManagerOptions) -> CertKeeper:
    """The certificate keeper, once the scheduler conf, the API server and the cert are ready.

    All of it happens before anything listens; ``CommandError`` says which step failed.
    """
    problem = check_flags(options)
    conf_problem = check_scheduler_conf(options.scheduler_conf)
    if conf_problem and not problem:
        problem = f"--scheduler-conf {options.scheduler_conf}: {conf_problem}"
    if problem:
        # before any worker boots: a bad flag or file is a one-line error, exit 2
        raise CommandError(problem, exit_code=2)
    # the API server answers (or we say why not and exit) before anything listens
    client = connect(options.kubeconfig, args.api_wait, log.warning)
    for flag, host, number in (
        ("--webhook-port", args.webhook_host, args.webhook_port),
        ("--metrics-address", options.metrics_host, options.metrics_port),
    ):
        problem = problem or port_problem(flag, host, number)
    if problem:
        # a taken port: one line naming it and its flag, exit 2, before a worker dies on it
        client.close()
        raise CommandError(problem, exit_code=2)
    from volcano_py.certkeeper import CertKeeper

    cert_dir = args.cert_dir or Path(tempfile.mkdtemp(prefix="volcano-py-certs-"))
    keeper = CertKeeper(
        cert_dir,
        client=client,
        secret=args.webhook_cert_secret,
        namespace=options.namespace,
        service=args.webhook_service,
        webhook_configuration=args.webhook_configuration,
        interval=args.cert_check_interval,
        lifetime=args.cert_validity,
    )
    try:
        keeper.sync()
    except (ApiError, OSError) as e:
        raise CommandError(f"preparing the webhook certificate in {cert_dir}: {e}") from e
    finally:
        client.close()
    return keeper
