"""R8: slow clients cannot starve the webhook.

200 TLS connections are held open against the manager's webhook port, each sending a request
cut short (half a request line or headers without their end, then a byte now and then); a
dropped one is opened again at once, so 200 stay in play for the whole window. Meanwhile valid
AdmissionReviews are sent on a keep-alive connection. With gunicorn's stock gthread worker the
8 threads are taken by the first 8 slow connections and no admission is answered; with
``webhooks.worker.GuardedThreadWorker`` the slow ones cost no thread and are closed after the
request timeout (5 s).
"""

from __future__ import annotations

import socket
import ssl
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.builders import exact, hypernode_body
from tests.e2e.conftest import ManagerProcess
from tests.e2e.faults import Reviewer

pytestmark = pytest.mark.timeout(180)

SLOW = 200
WINDOW_S = 12.0
PARTIALS = (
    b"POST /hypernodes/val",
    b"POST /hypernodes/validate HTTP/1.1\r\nHost: webhook\r\nContent-Type: applic",
    b"POST /hypernodes/validate HTTP/1.1\r\nHost: webhook\r\nContent-Length: 500\r\n\r\n{",
)


def _hn(name: str) -> dict[str, Any]:
    return hypernode_body(name, 1, [exact("n")])


class SlowClients:
    """Keeps ``count`` slow TLS connections open until stopped; counts server-side drops."""

    def __init__(self, port: int, count: int) -> None:
        self.port = port
        self.count = count
        self.context = ssl.create_default_context()
        self.context.check_hostname = False
        self.context.verify_mode = ssl.CERT_NONE
        self.stop = threading.Event()
        self.dropped = 0
        self.opened = 0
        self.open_now = 0
        self.held_max = 0
        self._thread = threading.Thread(target=self._run, name="r8-slow-clients", daemon=True)

    def _open(self, i: int) -> ssl.SSLSocket:
        raw = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        conn = self.context.wrap_socket(raw)
        conn.sendall(PARTIALS[i % len(PARTIALS)])
        conn.setblocking(False)
        self.opened += 1
        return conn

    def _run(self) -> None:
        conns: dict[int, ssl.SSLSocket] = {}
        deadline = time.monotonic() + WINDOW_S + 30  # bounded even if stop is never set
        while not self.stop.is_set() and time.monotonic() < deadline:
            for i in range(self.count):
                if i not in conns:
                    try:
                        conns[i] = self._open(i)
                    except OSError:
                        continue
            self.open_now = len(conns)
            self.held_max = max(self.held_max, len(conns))
            for i, conn in list(conns.items()):
                try:
                    if conn.recv(1) == b"":
                        raise ConnectionResetError
                except (ssl.SSLWantReadError, BlockingIOError):
                    try:
                        conn.send(b"x")  # a trickle: never a whole request
                    except (ssl.SSLWantWriteError, BlockingIOError):
                        pass
                    except OSError:
                        self.dropped += 1
                        conn.close()
                        del conns[i]
                    continue
                except OSError:
                    pass
                self.dropped += 1
                conn.close()
                del conns[i]
            self.stop.wait(0.5)
        for conn in conns.values():
            conn.close()

    def __enter__(self) -> SlowClients:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self._thread.join(10)


def test_slow_clients_never_hold_the_threads_that_answer_admissions(
    manager: ManagerProcess,
) -> None:
    ca = Path(manager.log_path.parent / "certs" / "ca.crt")
    reviewer = Reviewer(manager.webhook_port, ca)
    assert reviewer.admit(_hn("r8-warm"))[0] == 200
    latencies: list[float] = []
    with SlowClients(manager.webhook_port, SLOW) as slow:
        started = time.monotonic()
        while slow.held_max < SLOW and time.monotonic() - started < 20:
            time.sleep(0.1)
        assert slow.held_max == SLOW, f"only {slow.held_max} slow connections opened"
        end = time.monotonic() + WINDOW_S
        i = 0
        while time.monotonic() < end:
            sent = time.perf_counter()
            status, response, _uid = reviewer.admit(_hn(f"r8-{i}"))
            latencies.append(time.perf_counter() - sent)
            assert status == 200, response
            assert response.get("allowed") is True, response
            i += 1
            time.sleep(0.02)
        ready_status, ready_body = manager.get("/readyz")
        held_at_end = slow.open_now
    latencies.sort()
    p99 = latencies[int(len(latencies) * 0.99) - 1]
    print(
        f"R8: {SLOW} slow TLS connections held ({held_at_end} open at the end, "
        f"{slow.opened} opened, {slow.dropped} closed by the server); {len(latencies)} "
        f"admissions, p50 {latencies[len(latencies) // 2] * 1000:.1f} ms, "
        f"p99 {p99 * 1000:.1f} ms, max {latencies[-1] * 1000:.1f} ms"
    )
    assert p99 <= 0.050, f"p99 {p99 * 1000:.1f} ms"
    # The server closes connections that deliver no complete request within 5 s.
    assert slow.dropped >= SLOW, f"only {slow.dropped} slow connections were closed"
    assert ready_status == 200, ready_body
