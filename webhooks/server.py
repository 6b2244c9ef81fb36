"""Serve a WSGI app (the webhooks' Flask app) under gunicorn over TLS, programmatically.

``WebhookServer(app_factory, ServerOptions(...)).run()`` starts a gunicorn master with ONE
``gthread`` worker (several threads): one worker because the manager (issue 7) hosts its
informers, controllers and scheduler inside it and they must share one set of caches; the
master restarts the worker if it dies. ``app_factory`` is called in the worker, after fork,
and ``post_worker_init(worker)`` runs there too: that is where the manager starts its
threads (never in the master: threads do not survive ``fork``).

gunicorn's own log lines (and access lines, ``access_log``) go through the process's logging
setup (``webhooks.gunicorn_logging``), so they share its format, JSON included.

The worker is ``webhooks.worker.GuardedThreadWorker``: gthread, except that a request is read
in full on the worker's event loop before a pool thread takes it, and a connection that does
not deliver a complete request within ``request_timeout`` seconds is closed, so slow clients
never hold a thread.

TLS: at least TLS 1.2. gunicorn's gthread worker asks for an SSL context for every accepted
connection (the ``ssl_context`` server hook); ours is built from ``tls.crt``/``tls.key`` in
the cert folder, cached, and rebuilt when either file's mtime/size changes (checked at most
once per ``reload_interval`` seconds). So rotated certificates (``certs.ensure`` or a
re-mounted Secret) are picked up without a restart and without failing a request: open
keep-alive connections finish on the old context, new ones get the new certificate. A pair
that does not load (key and cert written at different moments) keeps the previous context.
"""

from __future__ import annotations

import logging
import os
import ssl
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gunicorn.app.base import BaseApplication
from gunicorn.arbiter import Arbiter

from webhooks.certs import CERT_FILE, KEY_FILE
from webhooks.gunicorn_logging import ProcessLogger
from webhooks.worker import DEFAULT_REQUEST_TIMEOUT_S, GuardedThreadWorker

log = logging.getLogger(__name__)

WSGIApp = Callable[..., Any]


@dataclass(frozen=True, slots=True)
class ServerOptions:
    """How to serve: address, TLS folder, threads, timeouts."""

    cert_dir: Path | None
    host: str = "0.0.0.0"
    port: int = 8443
    threads: int = 8
    timeout: int = 30
    keepalive: int = 75
    backlog: int = 2048
    reload_interval: float = 5.0
    log_level: str = "info"
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT_S
    access_log: bool = False


# TLS 1.2 suites the webhook offers: forward secret (ECDHE) with an AEAD cipher only, no CBC.
# TLS 1.3's suites are all AEAD and are not affected by this list.
TLS12_CIPHERS = "ECDHE+AESGCM:ECDHE+CHACHA20"


class ReloadingSSLContext:
    """An SSL server context from a cert folder, rebuilt when the files change."""

    def __init__(self, cert_dir: Path, reload_interval: float = 5.0) -> None:
        self.cert_dir = cert_dir
        self.reload_interval = reload_interval
        self._lock = threading.Lock()
        self._stamp: tuple[int, int, int, int] | None = None
        self._checked = 0.0
        self._context: ssl.SSLContext | None = None

    def _files_stamp(self) -> tuple[int, int, int, int]:
        cert = os.stat(self.cert_dir / CERT_FILE)
        key = os.stat(self.cert_dir / KEY_FILE)
        return (cert.st_mtime_ns, cert.st_size, key.st_mtime_ns, key.st_size)

    def build(self) -> ssl.SSLContext:
        """A fresh context from the files (raises when they do not load)."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.set_ciphers(TLS12_CIPHERS)
        context.load_cert_chain(self.cert_dir / CERT_FILE, self.cert_dir / KEY_FILE)
        return context

    def get(self) -> ssl.SSLContext:
        """The current context, reloaded if the files changed since the last check."""
        now = time.monotonic()
        if self._context is not None and now - self._checked < self.reload_interval:
            return self._context
        with self._lock:
            self._checked = now
            try:
                stamp = self._files_stamp()
                if self._context is None or stamp != self._stamp:
                    self._context = self.build()
                    if self._stamp is not None:
                        log.info("reloaded TLS certificate from %s", self.cert_dir)
                    self._stamp = stamp
            except (OSError, ssl.SSLError) as e:
                if self._context is None:
                    raise
                log.warning("keeping the previous TLS certificate: %s", e)
            return self._context


class WebhookServer(BaseApplication):  # type: ignore[misc]
    """gunicorn, configured in code: one guarded gthread worker, TLS >= 1.2, hot cert reload."""

    def __init__(
        self,
        app_factory: Callable[[], WSGIApp],
        options: ServerOptions,
        *,
        post_worker_init: Callable[[Any], None] | None = None,
        on_exit: Callable[[Any], None] | None = None,
        after_spawn: Callable[[], None] | None = None,
    ) -> None:
        self.app_factory = app_factory
        self.options = options
        self.post_worker_init_hook = post_worker_init
        self.on_exit_hook = on_exit
        self.after_spawn = after_spawn
        self.ssl = (
            ReloadingSSLContext(options.cert_dir, options.reload_interval)
            if options.cert_dir is not None
            else None
        )
        super().__init__()

    def load_config(self) -> None:
        """Set gunicorn's settings from ``ServerOptions`` (no config file, no argv)."""
        opts = self.options
        settings: dict[str, Any] = {
            "bind": [
                f"[{opts.host}]:{opts.port}" if ":" in opts.host else f"{opts.host}:{opts.port}"
            ],
            "workers": 1,
            # gthread, reading each request on the event loop before a thread takes it
            "worker_class": f"{GuardedThreadWorker.__module__}.{GuardedThreadWorker.__name__}",
            "threads": opts.threads,
            "timeout": opts.timeout,
            "graceful_timeout": 10,
            "keepalive": opts.keepalive,
            "backlog": opts.backlog,
            "loglevel": opts.log_level,
            # gunicorn's lines go through our logging setup (JSON with --log-format json)
            "logger_class": f"{ProcessLogger.__module__}.{ProcessLogger.__name__}",
            "accesslog": "-" if opts.access_log else None,
            "proc_name": "volcano-py",
            "post_worker_init": self._post_worker_init,
            "worker_exit": self._worker_exit,
        }
        if "control_socket_disable" in self.cfg.settings:
            settings["control_socket_disable"] = True  # gunicorn >= 24: no shared control socket
        if self.ssl is not None:
            assert opts.cert_dir is not None
            settings["certfile"] = str(opts.cert_dir / CERT_FILE)
            settings["keyfile"] = str(opts.cert_dir / KEY_FILE)
            settings["ssl_context"] = self._ssl_context
        for key, value in settings.items():
            self.cfg.set(key, value)
        GuardedThreadWorker.request_timeout = opts.request_timeout  # inherited by the fork

    def _ssl_context(
        self, conf: Any, default_factory: Callable[[], ssl.SSLContext]
    ) -> ssl.SSLContext:
        assert self.ssl is not None
        return self.ssl.get()

    def _post_worker_init(self, worker: Any) -> None:
        if self.post_worker_init_hook is not None:
            self.post_worker_init_hook(worker)

    def _worker_exit(self, server: Any, worker: Any) -> None:
        if self.on_exit_hook is not None:
            self.on_exit_hook(worker)

    def load(self) -> WSGIApp:
        """Build the app in the worker (after fork)."""
        return self.app_factory()

    def run(self) -> None:
        """Serve until stopped (gunicorn's arbiter, telling ``after_spawn`` of each fork)."""
        try:
            _Arbiter(self).run()
        except RuntimeError as e:  # what gunicorn's own run does: one line, exit 1
            sys.stderr.write(f"\nError: {e}\n\n")
            sys.stderr.flush()
            sys.exit(1)


class _Arbiter(Arbiter):  # type: ignore[misc]
    """gunicorn's master loop, calling the app's ``after_spawn`` after forking a worker.

    That runs in the master: the child never returns from ``spawn_worker``.
    """

    def spawn_worker(self) -> int:
        pid: int = super().spawn_worker()
        after_spawn = getattr(self.app, "after_spawn", None)
        if after_spawn is not None:
            after_spawn()
        return pid
