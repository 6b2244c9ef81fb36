"""Where the API server is and how to authenticate to it: ``ClientConfig`` and ``load_config``.

``load_config`` resolves a kubeconfig (explicit path, ``$KUBECONFIG``, ``~/.kube/config``) or
the in-cluster service account through the ``kubernetes`` package (auth plugins, token
refresh), and hands ``KubeClient`` a plain ``ClientConfig``; ``ssl_context`` turns one into the
TLS settings the transport uses. Bad configuration raises ``ConfigError`` naming what to fix.
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Callable
from dataclasses import dataclass, field

from volcano_py.kube.errors import ConfigError


@dataclass(frozen=True)
class ClientConfig:
    """Where the API server is and how to authenticate to it."""

    host: str
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    verify: bool = True
    token: Callable[[], str | None] | None = field(default=None, repr=False)
    impersonate_user: str | None = None
    impersonate_groups: tuple[str, ...] = ()
    user_agent: str = "volcano-py"


def load_config(kubeconfig: str | None = None, context: str | None = None) -> ClientConfig:
    """Load configuration from a kubeconfig file, or in-cluster when none is given or found.

    The order is the usual one: an explicit ``kubeconfig`` path, then ``$KUBECONFIG`` /
    ``~/.kube/config`` (as the kubernetes package resolves them), then the in-cluster
    service account. Raises ``ConfigError`` naming what to fix: a ``kubeconfig`` path that
    does not exist or cannot be loaded, a default file that exists but is broken, or no
    configuration at all outside a cluster.
    """
    from kubernetes import config as kconfig
    from kubernetes.client import Configuration

    cfg = Configuration()
    if kubeconfig and not os.path.exists(kubeconfig):
        raise ConfigError(f"kubeconfig {kubeconfig}: no such file")
    default = os.environ.get("KUBECONFIG") or os.path.expanduser("~/.kube/config")
    try:
        kconfig.load_kube_config(  # type: ignore[no-untyped-call]
            config_file=kubeconfig, context=context, client_configuration=cfg
        )
    except Exception as e:  # the package raises ConfigException, OSError, YAML and type errors
        source = kubeconfig or default
        if kubeconfig or any(os.path.exists(p) for p in default.split(os.pathsep) if p):
            detail = " ".join(str(e).split())
            raise ConfigError(f"kubeconfig {source}: cannot load it: {detail}") from e
        try:
            kconfig.load_incluster_config(client_configuration=cfg)  # type: ignore[no-untyped-call]
        except kconfig.ConfigException as e2:
            where = "$KUBECONFIG" if os.environ.get("KUBECONFIG") else "the default kubeconfig"
            raise ConfigError(
                f"no cluster configuration: {where} {default} does not exist and this is not a "
                f"pod in a cluster ({e2}); pass --kubeconfig FILE or set KUBECONFIG"
            ) from e2

    def token() -> str | None:
        # kubernetes >= 3x keeps kubeconfig and in-cluster tokens under "BearerToken"
        # (with the "Bearer " prefix); older releases used "authorization"
        value = cfg.get_api_key_with_prefix("BearerToken") or cfg.get_api_key_with_prefix(
            "authorization"
        )
        return str(value) if value else None

    return ClientConfig(
        host=str(cfg.host).rstrip("/"),
        ca_file=cfg.ssl_ca_cert,
        cert_file=cfg.cert_file,
        key_file=cfg.key_file,
        verify=bool(cfg.verify_ssl),
        token=token,
    )


def ssl_context(config: ClientConfig) -> ssl.SSLContext | None:
    """TLS settings for ``config.host``: its CA (or the system's), client cert, verification."""
    if not config.host.startswith("https"):
        return None
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    if config.verify:
        if config.ca_file:
            context.load_verify_locations(cafile=config.ca_file)
        else:
            context.load_default_certs()
    else:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    if config.cert_file:
        context.load_cert_chain(config.cert_file, config.key_file)
    return context
