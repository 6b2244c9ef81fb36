"""Where the API server is and how to authenticate to it: ``ClientConfig`` and ``load_config``.

``load_config`` resolves a kubeconfig (explicit path, ``$KUBECONFIG``, ``~/.kube/config``) or
the in-cluster service account through the ``kubernetes`` package (auth plugins, token
refresh), and hands ``KubeClient`` a plain ``ClientConfig``; ``ssl_context`` turns one into the
TLS settings the transport uses. Bad configuration raises ``ConfigError`` naming what to fix.
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import os
import ssl
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from volcano_py.api.safeload import load_yaml
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
    if kubeconfig and not os.path.exists(kubeconfig):
        raise ConfigError(f"kubeconfig {kubeconfig}: no such file")
    default = os.environ.get("KUBECONFIG") or os.path.expanduser("~/.kube/config")
    quick = (
        plain_config(kubeconfig or default, context)
        if kubeconfig or os.path.exists(default)
        else in_cluster_config()
    )
    if quick is not None:
        return quick
    from kubernetes import config as kconfig
    from kubernetes.client import Configuration

    cfg = Configuration()
    try:
        # the path resolved now: the package's own default is $KUBECONFIG as it was when the
        # package was first imported
        kconfig.load_kube_config(  # type: ignore[no-untyped-call]
            config_file=kubeconfig or default, context=context, client_configuration=cfg
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


# --- the common shapes, read directly -------------------------------------------------------
#
# The kubernetes package's loader costs ~0.15 s of imports, on the path to the manager's first
# list (kube/prefetch.py). A kubeconfig of one file whose user is a client certificate or a
# bearer token, and the in-cluster service account, are read here instead; everything else
# (exec and auth-provider plugins, basic auth, impersonation, proxies, merged files, and every
# broken file, so its error message stays the package's) goes to the package.

_CLUSTER_KEYS = frozenset(
    {"server", "certificate-authority", "certificate-authority-data", "insecure-skip-tls-verify"}
)
_USER_KEYS = frozenset(
    {
        "client-certificate",
        "client-certificate-data",
        "client-key",
        "client-key-data",
        "token",
        "tokenFile",
    }
)
SERVICE_ACCOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
TOKEN_REREAD_S = 60.0


def _named(entries: Any, name: Any, field_name: str) -> dict[str, Any] | None:
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and entry.get("name") == name:
            value = entry.get(field_name)
            return value if isinstance(value, dict) else None
    return None


def plain_config(path: str, context: str | None = None) -> ClientConfig | None:
    """``path``'s configuration when it has one of the common shapes, else None."""
    if os.pathsep in path:
        return None  # several files merged: the package's rules
    try:
        with open(path, encoding="utf-8") as f:
            doc = load_yaml(f.read(), path)
    except (OSError, ValueError):  # unreadable, not YAML, too large: the package says how
        return None
    if not isinstance(doc, dict):
        return None
    ctx = _named(doc.get("contexts"), context or doc.get("current-context"), "context")
    if ctx is None:
        return None
    cluster = _named(doc.get("clusters"), ctx.get("cluster"), "cluster")
    user = _named(doc.get("users"), ctx.get("user"), "user") or {}
    if cluster is None or set(cluster) - _CLUSTER_KEYS or set(user) - _USER_KEYS:
        return None
    server = cluster.get("server")
    if not isinstance(server, str) or not server.startswith(("https://", "http://")):
        return None
    base = os.path.dirname(os.path.abspath(path))
    try:
        ca = _file_or_data(base, cluster, "certificate-authority")
        cert = _file_or_data(base, user, "client-certificate")
        key = _file_or_data(base, user, "client-key")
        token = _token(base, user)
    except (OSError, ValueError, TypeError):
        return None
    return ClientConfig(
        host=server.rstrip("/"),
        ca_file=ca,
        cert_file=cert,
        key_file=key,
        verify=not cluster.get("insecure-skip-tls-verify"),
        token=token,
    )


def in_cluster_config(folder: str = SERVICE_ACCOUNT) -> ClientConfig | None:
    """The pod's service account (``KUBERNETES_SERVICE_HOST``), or None outside a cluster."""
    host = os.environ.get("KUBERNETES_SERVICE_HOST")
    port = os.environ.get("KUBERNETES_SERVICE_PORT")
    token_file = os.path.join(folder, "token")
    if not host or not port or not os.path.exists(token_file):
        return None
    if ":" in host:
        host = f"[{host}]"
    ca = os.path.join(folder, "ca.crt")
    return ClientConfig(
        host=f"https://{host}:{port}",
        ca_file=ca if os.path.exists(ca) else None,
        token=_reread(token_file),
    )


def _file_or_data(base: str, section: dict[str, Any], name: str) -> str | None:
    """A file path for ``name`` (relative to the kubeconfig) or for its ``-data`` twin."""
    data = section.get(f"{name}-data")
    if data:
        return _temp_file(base64.b64decode(data, validate=True))
    path = section.get(name)
    if not path:
        return None
    path = os.path.join(base, os.path.expanduser(str(path)))
    if not os.path.exists(path):
        raise ValueError(path)
    return path


def _temp_file(content: bytes) -> str:
    """``content`` in a file only this user reads, removed when the process exits."""
    fd, path = tempfile.mkstemp(prefix="volcano-py-kubeconfig-")
    with os.fdopen(fd, "wb") as f:
        f.write(content)
    atexit.register(_remove, path)
    return path


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.remove(path)


def _token(base: str, user: dict[str, Any]) -> Callable[[], str | None] | None:
    if user.get("token"):
        value = f"Bearer {user['token']}"
        return lambda: value
    if user.get("tokenFile"):
        path = os.path.join(base, os.path.expanduser(str(user["tokenFile"])))
        if not os.path.exists(path):
            raise ValueError(path)
        return _reread(path)
    return None


def _reread(path: str) -> Callable[[], str | None]:
    """A token read from ``path``, again every ``TOKEN_REREAD_S`` (bound tokens rotate)."""
    memo: list[Any] = [None, 0.0]

    def token() -> str | None:
        now = time.monotonic()
        if memo[0] is None or now - memo[1] >= TOKEN_REREAD_S:
            with contextlib.suppress(OSError), open(path) as f:
                memo[0] = f.read().strip() or None
            memo[1] = now
        return f"Bearer {memo[0]}" if memo[0] else None

    return token
