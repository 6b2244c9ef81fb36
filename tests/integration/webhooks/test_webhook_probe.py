"""The readiness probe of the webhook port, against loopback listeners that misbehave."""

from __future__ import annotations

import socket
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from webhooks import certs
from webhooks.probe import WebhookProbe, probe_once


@pytest.fixture
def silent_listener() -> Iterator[int]:
    """Accepts TCP connections and never says a word."""
    server = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join(2)
    for conn in held:
        conn.close()
    server.close()


@pytest.fixture
def tls_listener(tmp_path: Path) -> Iterator[tuple[int, list[bytes]]]:
    """Answers one line per connection over TLS: the status line to send is set by the test."""
    certs.write_cert_dir(certs.generate(), tmp_path)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / certs.CERT_FILE, tmp_path / certs.KEY_FILE)
    server = socket.create_server(("127.0.0.1", 0))
    answer = [b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n"]
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                raw = server.accept()[0]
            except TimeoutError:
                continue
            try:
                with context.wrap_socket(raw, server_side=True) as conn:
                    conn.recv(1024)
                    conn.sendall(answer[0])
            except (OSError, ssl.SSLError):
                pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], answer
    stop.set()
    thread.join(2)
    server.close()


def test_probe_reports_a_webhook_that_accepts_but_never_answers(silent_listener: int) -> None:
    found = probe_once("127.0.0.1", silent_listener, timeout=0.5)
    assert found == f"the webhook on port {silent_listener} did not answer within 0.5s"


def test_probe_reports_a_closed_port() -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
    found = probe_once("127.0.0.1", port, timeout=0.5)
    assert found is not None
    assert "cannot be reached" in found


def test_probe_is_clear_once_the_webhook_answers_200(tls_listener: tuple[int, list[bytes]]) -> None:
    port, answer = tls_listener
    probe = WebhookProbe("0.0.0.0", port, timeout=2)
    assert probe.host == "127.0.0.1"
    assert probe.check() is None
    answer[0] = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n"
    assert probe.check() == "the webhook answered 'HTTP/1.1 503 Service Unavailable'"
    assert probe.problem() == probe.check()
    answer[0] = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n"
    probe.check()
    assert probe.problem() is None
