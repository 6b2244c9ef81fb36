"""``volcano-py webhook``: serve only the admission webhooks (HyperNodes, Volcano Jobs) over TLS.

Useful standalone (a cluster that runs Volcano's controllers but wants our admission), for
tests and for the benchmark. The same gunicorn setup as the manager: one gthread worker,
TLS >= 1.2, certificates reloaded from ``--cert-dir`` when they change.

With ``--kubeconfig`` (or in a Pod), HyperNode and Queue informers started inside the worker
feed the tree checks and the Job queue rules (without a cluster, Jobs get every rule but the
queue lookup), and ``--webhook-config NAME`` patches the CA bundle into the Validating- and
MutatingWebhookConfiguration of that name. ``--self-signed`` creates the certificates in
``--cert-dir`` when they are missing and renews them before they expire (checked hourly).
"""

from __future__ import annotations

import argparse
import functools
import logging
import threading
from pathlib import Path
from typing import Any

from volcano_py.api import resources as R
from volcano_py.commands.argtypes import add_log_format_argument, port, positive_int
from volcano_py.kube.runtime import tune_gc
from volcano_py.logsetup import configure_logging
from webhooks import certs, jobs
from webhooks.app import create_app
from webhooks.hypernodes import register
from webhooks.hypernodes.validator import HyperNodeValidator
from webhooks.router import AdmissionRouter
from webhooks.server import ServerOptions, WebhookServer

log = logging.getLogger(__name__)

RENEW_CHECK_SECONDS = 3600.0


def add_parser(subparsers: Any) -> None:
    """Register ``webhook``."""
    parser = subparsers.add_parser(
        "webhook", help="serve the HyperNode admission webhook over TLS", description=__doc__
    )
    parser.add_argument(
        "--cert-dir", type=Path, required=True, help="folder with tls.crt and tls.key (and ca.crt)"
    )
    # The manager's spellings (--webhook-port ...) first; the short ones stay accepted.
    parser.add_argument("--webhook-port", "--port", dest="port", type=port, default=8443)
    parser.add_argument(
        "--webhook-host", "--host", dest="host", default="0.0.0.0", help="address to listen on"
    )
    parser.add_argument(
        "--kubeconfig",
        default=None,
        help="cluster to read existing HyperNodes from (default: in-cluster "
        "if available, else no tree context)",
    )
    parser.add_argument(
        "--no-cluster",
        action="store_true",
        help="do not connect to a cluster; tree checks see only the object",
    )
    parser.add_argument(
        "--webhook-configuration",
        "--webhook-config",
        dest="webhook_config",
        default=None,
        help="name of the Validating- and MutatingWebhookConfiguration to patch the CA bundle into",
    )
    parser.add_argument(
        "--self-signed",
        action="store_true",
        help="create/renew a self-signed CA and certificate in --cert-dir",
    )
    parser.add_argument(
        "--webhook-service",
        "--service",
        dest="service",
        default=certs.DEFAULT_SERVICE,
        help="Service name in the cert SANs",
    )
    parser.add_argument("--namespace", default=certs.DEFAULT_NAMESPACE)
    parser.add_argument(
        "--webhook-threads", "--threads", dest="threads", type=positive_int, default=8
    )
    parser.add_argument(
        "--cert-reload-seconds",
        type=float,
        default=5.0,
        help="how often the certificate files are checked for changes",
    )
    parser.add_argument("-v", "--verbose", action="count", default=0)
    add_log_format_argument(parser)
    parser.add_argument(
        "--webhook-access-log",
        "--access-log",
        dest="access_log",
        action="store_true",
        help="log one line per request (gunicorn's access log)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Serve until terminated."""
    # -v -v: DEBUG, like the manager's -v=4
    configure_logging(4 if args.verbose >= 2 else 2, args.log_format)
    tune_gc()  # cached objects and memoised CEL values are acyclic; see kube/runtime.py
    cert_dir: Path = args.cert_dir
    try:
        if args.self_signed:
            certs.ensure(cert_dir, service=args.service, namespace=args.namespace)
        bundle = certs.load_cert_dir(cert_dir)
    except (OSError, ValueError) as e:
        log.error("--cert-dir %s: %s", cert_dir, e)
        return 2
    if bundle is None:
        log.error(
            "%s has no tls.crt/tls.key (use --self-signed or python -m webhooks.certs)", cert_dir
        )
        return 2
    use_cluster = not args.no_cluster
    if use_cluster and args.kubeconfig:
        # asked for this cluster by name: a kubeconfig that does not load is an error, not a
        # silent fallback to serving without tree context
        from volcano_py.kube.config import load_config
        from volcano_py.kube.errors import ConfigError

        try:
            load_config(args.kubeconfig)
        except ConfigError as e:
            log.error("%s", e)
            return 2
    if use_cluster and args.webhook_config:
        from volcano_py.kube.errors import ApiError, ConfigError

        try:
            certs.patch_ca_bundle(_client(args.kubeconfig), args.webhook_config, bundle.ca_cert)
        except ConfigError as e:
            log.error("%s", e)
            return 2
        except ApiError as e:
            log.error("patching the caBundle of %s: %s", args.webhook_config, e)
            return 1

    def app_factory() -> Any:
        return _build_app(args, use_cluster)

    options = ServerOptions(
        cert_dir=cert_dir,
        host=args.host,
        port=args.port,
        threads=args.threads,
        reload_interval=args.cert_reload_seconds,
        access_log=args.access_log,
    )
    WebhookServer(app_factory, options).run()
    return 0


def _client(kubeconfig: str | None) -> Any:
    from volcano_py.kube.client import KubeClient
    from volcano_py.kube.config import load_config

    return KubeClient(load_config(kubeconfig))


def _build_app(args: argparse.Namespace, use_cluster: bool) -> Any:
    """In the worker: informers (when a cluster is used), validator, router, app."""
    lister: Any = None
    queues: Any = None
    ready = None
    if use_cluster:
        from volcano_py.kube.informer import SharedInformerFactory

        try:
            factory = SharedInformerFactory(_client(args.kubeconfig))
        except Exception as e:  # no kubeconfig and not in a Pod: serve without tree context
            log.warning("no cluster (%s): tree checks see only the object under review", e)
        else:
            informer = factory.informer(R.HYPERNODES)
            queues = factory.informer(R.QUEUES).store
            factory.start()
            if not factory.wait_for_cache_sync(timeout=30):
                log.warning("HyperNode cache not synced after 30s; serving anyway")
            lister = informer.store
            ready = factory.has_synced
    validator = HyperNodeValidator(lister)
    if lister is not None:
        validator.warm(lister.list())
    router = AdmissionRouter()
    register(router, validator=validator)
    if queues is not None:
        from volcano_py.manager import child_queues

        jobs.register(router, queues.get, functools.partial(child_queues, queues))
    else:  # no cluster: every Job rule but the queue lookup
        jobs.register(router)
    if args.self_signed:
        _start_renewal(args)
    return create_app(router, ready=ready)


def _start_renewal(args: argparse.Namespace) -> None:
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(RENEW_CHECK_SECONDS):
            try:
                certs.ensure(args.cert_dir, service=args.service, namespace=args.namespace)
            except Exception:
                log.exception("certificate renewal failed; will retry")

    threading.Thread(target=loop, name="webhook:cert-renewal", daemon=True).start()
