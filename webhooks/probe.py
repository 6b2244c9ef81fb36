"""Ask the process's own webhook port whether it answers: the manager's readiness uses this.

``/readyz`` is served on the plain ops port, by other threads than the webhook's, so it stays
200 even when the webhook itself cannot answer (every thread busy, the worker's event loop
stuck, the listener gone). ``WebhookProbe.run`` sends ``GET /healthz`` over TLS to the webhook
address every ``interval`` seconds, like the API server would connect, and remembers what went
wrong; ``problem()`` is what readiness reports (``None`` while the last probe was answered).
The certificate is not verified: the probe asks "does it answer", not "is it trusted".
"""

from __future__ import annotations

import logging
import socket
import ssl
import threading
import time

log = logging.getLogger(__name__)

DEFAULT_INTERVAL_S = 5.0
DEFAULT_TIMEOUT_S = 2.0


def probe_once(host: str, port: int, timeout: float = DEFAULT_TIMEOUT_S) -> str | None:
    """``None`` when ``GET /healthz`` on ``host:port`` answered in time, else what failed."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    deadline = time.monotonic() + timeout
    try:
        with (
            socket.create_connection((host, port), timeout=timeout) as raw,
            context.wrap_socket(raw) as conn,
        ):
            conn.settimeout(max(0.01, deadline - time.monotonic()))
            conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n")
            head = b""
            while b"\r\n" not in head:
                conn.settimeout(max(0.01, deadline - time.monotonic()))
                chunk = conn.recv(256)
                if not chunk:
                    return "the webhook closed the connection without answering"
                head += chunk
    except TimeoutError:
        return f"the webhook on port {port} did not answer within {timeout:g}s"
    except (OSError, ssl.SSLError) as e:
        return f"the webhook on port {port} cannot be reached: {e}"
    status_line = head.split(b"\r\n", 1)[0]
    status = status_line.split()
    if len(status) < 2 or status[1] != b"200":
        return f"the webhook answered {status_line.decode(errors='replace')!r}"
    return None


class WebhookProbe:
    """Probes the webhook periodically; see the module docstring."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        interval: float = DEFAULT_INTERVAL_S,
        timeout: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        self.host = "127.0.0.1" if host in ("", "0.0.0.0") else "::1" if host == "::" else host
        self.port = port
        self.interval = interval
        self.timeout = timeout
        self._problem: str | None = None
        self._lock = threading.Lock()

    def problem(self) -> str | None:
        """What the last probe found wrong (``None``: the webhook answered)."""
        with self._lock:
            return self._problem

    def check(self) -> str | None:
        """Probe once now, remember and return the result."""
        found = probe_once(self.host, self.port, self.timeout)
        with self._lock:
            if found != self._problem:
                if found is None:
                    log.info("webhook answers again on port %d", self.port)
                else:
                    log.warning("webhook probe: %s", found)
            self._problem = found
        return found

    def run(self, stop: threading.Event) -> None:
        """Probe every ``interval`` seconds until ``stop`` is set."""
        while not stop.wait(self.interval):
            self.check()
