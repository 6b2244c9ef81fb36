"""The operations endpoints: ``/healthz``, ``/readyz`` and ``/metrics`` on a plain HTTP port.

Kubelet probes and Prometheus scrape this server, not the TLS webhook port, so a probe never
competes with admissions and needs no client certificate. ``/healthz`` answers 200 while the
process's guarded threads are alive; ``/readyz`` answers 200 once the shared caches have
synced (503 with the reasons before that); ``/metrics`` renders ``volcano_py.metrics.REGISTRY``.
The server runs on one named daemon thread (``ops-server``, a thread per request) and never
touches the caches itself: extra read-only pages (the topology view of ``volcano_py.ui``) are
given to it as ``routes``, each a function from the request's headers to a ``Reply``. Only GET
is served; any other method is answered 501 by the standard library handler. Probe bodies are
bounded: ``MAX_PROBE_LINES`` lines, each cut to a few hundred characters, whatever a check
says.
"""

from __future__ import annotations

import logging
import socketserver
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import CONTENT_TYPE_LATEST

from volcano_py.api.safeload import clip
from volcano_py.metrics import REGISTRY, render

log = logging.getLogger(__name__)

MAX_PROBE_LINES = 20  # /healthz and /readyz: lines shown, each cut to safeload.MAX_MESSAGE
Check = Callable[[], list[str]]
"""A check returns the reasons it fails (an empty list: healthy / ready)."""


@dataclass(frozen=True, slots=True)
class Reply:
    """What a route answers: status, body, content type and any extra headers."""

    status: int
    body: bytes
    content_type: str
    headers: Mapping[str, str] = field(default_factory=dict)


Route = Callable[[Mapping[str, str]], Reply]
"""A read-only page: the request headers (lower-case names) in, a ``Reply`` out."""


class _OpsHTTPServer(ThreadingHTTPServer):
    """``ThreadingHTTPServer`` that binds without resolving its own name.

    The standard library's ``HTTPServer.server_bind`` sets ``server_name`` from
    ``socket.getfqdn(host)``: a reverse DNS lookup of the pod's host name on every start
    (7 ms here; as long as the resolver's timeout where DNS is slow or broken), before the
    probes can answer. Nothing here reads the ``server_name``/``server_port`` it sets, so
    this binds as ``TCPServer`` does and sets neither.
    """

    def server_bind(self) -> None:
        socketserver.TCPServer.server_bind(self)


class OpsServer:
    """Serves health, readiness and metrics. See the module docstring."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        healthy: Check,
        ready: Check,
        ready_detail: Check | None = None,
        routes: Mapping[str, Route] | None = None,
    ) -> None:
        self._healthy = healthy
        self._routes = dict(routes or {})
        self._ready = ready
        self._ready_detail = ready_detail
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.handle(self)

            def log_message(self, format: str, *args: object) -> None:
                log.debug("ops %s", format % args)

        self._http = _OpsHTTPServer((host, port), Handler)
        self._http.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The port actually bound (useful with port 0)."""
        return int(self._http.server_address[1])

    def start(self) -> None:
        """Serve on the ``ops-server`` thread."""
        self._thread = threading.Thread(
            target=self._http.serve_forever, name="ops-server", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop serving."""
        self._http.shutdown()
        self._http.server_close()

    def handle(self, request: BaseHTTPRequestHandler) -> None:
        """Answer one GET."""
        path = request.path.split("?", 1)[0]
        if path == "/metrics":
            self._reply(request, 200, render(REGISTRY), CONTENT_TYPE_LATEST)
            return
        route = self._routes.get(path)
        if route is not None:
            self._serve_route(request, route)
            return
        check = {"/healthz": self._healthy, "/livez": self._healthy, "/readyz": self._ready}
        if path not in check:
            self._reply(request, 404, b"not found\n", "text/plain")
            return
        try:
            problems = check[path]()
        except Exception as e:  # a failing check is a failing probe, never a crash
            problems = [f"check failed: {e}"]
        if problems:
            body = "".join(f"[-] {p}\n" for p in _bounded(problems)).encode()
            self._reply(request, 503, body, "text/plain")
        else:
            detail: list[str] = []
            if path == "/readyz" and self._ready_detail is not None:
                try:
                    detail = self._ready_detail()
                except Exception as e:  # detail is informative only
                    detail = [f"detail failed: {e}"]
            text = "".join(f"[+] {line}\n" for line in _bounded(detail)) + "ok\n"
            self._reply(request, 200, text.encode(), "text/plain")

    def _serve_route(self, request: BaseHTTPRequestHandler, route: Route) -> None:
        headers = {name.lower(): value for name, value in request.headers.items()}
        try:
            reply = route(headers)
        except Exception:  # a page bug is a 500 with a log line, never a dead server
            log.exception("ops route %s failed", request.path)
            reply = Reply(500, b"internal error, see the manager log\n", "text/plain")
        self._reply(request, reply.status, reply.body, reply.content_type, reply.headers)

    @staticmethod
    def _reply(
        request: BaseHTTPRequestHandler,
        status: int,
        body: bytes,
        ctype: str,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        request.send_response(status)
        request.send_header("Content-Type", ctype)
        request.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            request.send_header(name, value)
        request.end_headers()
        request.wfile.write(body)


def _bounded(lines: list[str]) -> list[str]:
    """At most ``MAX_PROBE_LINES`` lines of at most ``MAX_MESSAGE`` characters each."""
    kept = [clip(str(line)) for line in lines[:MAX_PROBE_LINES]]
    if len(lines) > MAX_PROBE_LINES:
        kept.append(f"... {len(lines) - MAX_PROBE_LINES} more")
    return kept
