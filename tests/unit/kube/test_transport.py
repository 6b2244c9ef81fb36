"""The client's HTTP/1.1 wire against a scripted server on a loopback socket.

Each test gives the server one script per accepted connection: the script reads requests off the
socket and writes raw answers, so framing, reuse, retries and failures are exercised byte for
byte. The API-server side of the same code runs in every integration test.
"""

from __future__ import annotations

import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.unit.waits import WAIT_S, wait_until
from volcano_py.kube.client import KubeClient
from volcano_py.kube.config import ClientConfig
from volcano_py.kube.errors import ConnectionFailed, NotFound
from volcano_py.kube.transport import Transport, TransportError
from webhooks import certs

Script = Callable[["Peer"], None]


class Peer:
    """The server's side of one connection."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.reader = sock.makefile("rb")

    def request(self) -> bytes:
        """One whole request (head and Content-Length body); b"" at EOF."""
        head = b""
        while not head.endswith(b"\r\n\r\n"):
            line = self.reader.readline()
            if not line:
                return b""
            head += line
        length = 0
        for line in head.split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.lower() == b"content-length":
                length = int(value)
        return head + self.reader.read(length)

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)


class Server:
    """Accepts connections on loopback and runs the next script on each."""

    def __init__(self, *scripts: Script, tls: ssl.SSLContext | None = None) -> None:
        self.scripts = list(scripts)
        self.requests: list[bytes] = []
        self.connections = 0
        self.closed = 0  # connections whose script has ended
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.tls = tls
        self.errors: list[BaseException] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while self.scripts:
            try:
                sock, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            script = self.scripts.pop(0)
            threading.Thread(target=self._run, args=(sock, script), daemon=True).start()

    def _run(self, sock: socket.socket, script: Script) -> None:
        try:
            if self.tls is not None:
                sock = self.tls.wrap_socket(sock, server_side=True)
            script(RecordingPeer(sock, self.requests))
        except BaseException as e:  # pragma: no cover - surfaced by the test
            self.errors.append(e)
        finally:
            sock.close()
            self.closed += 1

    def close(self) -> None:
        self.listener.close()


class RecordingPeer(Peer):
    def __init__(self, sock: socket.socket, log: list[bytes]) -> None:
        super().__init__(sock)
        self.log = log

    def request(self) -> bytes:
        data = super().request()
        if data:
            self.log.append(data)
        return data


@pytest.fixture
def serve() -> Iterator[Callable[..., Server]]:
    servers: list[Server] = []

    def start(*scripts: Script, tls: ssl.SSLContext | None = None) -> Server:
        servers.append(Server(*scripts, tls=tls))
        return servers[-1]

    yield start
    for server in servers:
        server.close()
        assert not server.errors


def ok(body: bytes) -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)


def answer_each(*answers: bytes) -> Script:
    """Read a request, write the next answer; then wait for the client to hang up."""

    def script(peer: Peer) -> None:
        for answer in answers:
            assert peer.request()
            peer.send(answer)
        peer.request()

    return script


def transport(server: Server, **kw: float) -> Transport:
    return Transport(f"http://127.0.0.1:{server.port}", **kw)  # type: ignore[arg-type]


def test_request_writes_one_http11_request_with_host_length_and_given_headers(
    serve: Callable[..., Server],
) -> None:
    server = serve(answer_each(ok(b'{"a":1}')))
    status, body = transport(server).request(
        "POST", "/api/v1/pods?limit=5", b"Accept: application/json\r\n", b'{"x":2}', 5.0
    )
    assert (status, body) == (200, b'{"a":1}')
    assert server.requests == [
        b"POST /api/v1/pods?limit=5 HTTP/1.1\r\n"
        + f"Host: 127.0.0.1:{server.port}\r\n".encode()
        + b'Accept: application/json\r\nContent-Length: 7\r\n\r\n{"x":2}'
    ]


def test_keep_alive_connection_is_reused_for_the_next_request(
    serve: Callable[..., Server],
) -> None:
    server = serve(answer_each(ok(b"one"), ok(b"two"), ok(b"three")))
    wire = transport(server)
    bodies = [wire.request("GET", "/", b"", None, 5.0)[1] for _ in range(3)]
    assert bodies == [b"one", b"two", b"three"]
    assert server.connections == 1


def test_chunked_answer_with_extensions_and_trailers_is_joined(
    serve: Callable[..., Server],
) -> None:
    chunked = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"5;name=x\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: y\r\n\r\n"
    )
    server = serve(answer_each(chunked, ok(b"next")))
    wire = transport(server)
    assert wire.request("GET", "/", b"", None, 5.0) == (200, b"hello world")
    # the trailers were consumed: the same connection carries the next answer intact
    assert wire.request("GET", "/", b"", None, 5.0) == (200, b"next")
    assert server.connections == 1


def test_interim_1xx_answers_are_skipped_and_204_has_no_body(
    serve: Callable[..., Server],
) -> None:
    server = serve(
        answer_each(
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\n{}",
            b"HTTP/1.1 204 No Content\r\n\r\n",
            ok(b"after"),
        )
    )
    wire = transport(server)
    assert wire.request("POST", "/", b"", b"{}", 5.0) == (201, b"{}")
    assert wire.request("DELETE", "/", b"", None, 5.0) == (204, b"")
    assert wire.request("GET", "/", b"", None, 5.0) == (200, b"after")


def test_body_up_to_close_is_read_whole_and_the_connection_not_reused(
    serve: Callable[..., Server],
) -> None:
    def until_close(peer: Peer) -> None:
        assert peer.request()
        peer.send(b"HTTP/1.1 200 OK\r\n\r\nall of it")

    server = serve(until_close, answer_each(ok(b"fresh")))
    wire = transport(server)
    assert wire.request("GET", "/", b"", None, 5.0) == (200, b"all of it")
    assert wire.request("GET", "/", b"", None, 5.0) == (200, b"fresh")
    assert server.connections == 2


def test_connection_close_header_retires_the_connection(serve: Callable[..., Server]) -> None:
    server = serve(
        answer_each(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx"),
        answer_each(ok(b"y")),
    )
    wire = transport(server)
    assert wire.request("GET", "/", b"", None, 5.0)[1] == b"x"
    assert wire.request("GET", "/", b"", None, 5.0)[1] == b"y"
    assert server.connections == 2


def test_idle_connection_the_server_closed_is_dropped_before_a_post(
    serve: Callable[..., Server],
) -> None:
    def once_then_close(peer: Peer) -> None:
        assert peer.request()
        peer.send(ok(b"first"))

    server = serve(once_then_close, answer_each(ok(b"second")))
    wire = transport(server)
    assert wire.request("POST", "/", b"", b"a", 5.0)[1] == b"first"
    wait_until(lambda: server.closed == 1, "the server closed the first connection")
    assert wire.request("POST", "/", b"", b"b", 5.0)[1] == b"second"
    assert [r[-1:] for r in server.requests] == [b"a", b"b"]


def close_after_reading_the_second(peer: Peer) -> None:
    """Answer one request; read the next and hang up without answering."""
    assert peer.request()
    peer.send(ok(b"first"))
    assert peer.request()


def test_reused_connection_closed_before_answering_retries_a_get_once(
    serve: Callable[..., Server],
) -> None:
    server = serve(close_after_reading_the_second, answer_each(ok(b"retried")))
    wire = transport(server)
    wire.request("GET", "/", b"", None, 5.0)
    assert wire.request("GET", "/x", b"", None, 5.0) == (200, b"retried")
    assert [r.split(b" ")[1] for r in server.requests] == [b"/", b"/x", b"/x"]


def test_reused_connection_closed_before_answering_never_replays_a_post(
    serve: Callable[..., Server],
) -> None:
    server = serve(close_after_reading_the_second, answer_each(ok(b"unused")))
    wire = transport(server)
    wire.request("POST", "/", b"", b"1", 5.0)
    with pytest.raises(TransportError, match="closed before an answer"):
        wire.request("POST", "/", b"", b"2", 5.0)
    assert len(server.requests) == 2  # the second POST was sent exactly once


def test_body_cut_short_raises_and_the_connection_is_not_reused(
    serve: Callable[..., Server],
) -> None:
    def short(peer: Peer) -> None:
        assert peer.request()
        peer.send(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")

    server = serve(short, answer_each(ok(b"whole")))
    wire = transport(server)
    with pytest.raises(TransportError, match="cut short: 3 of 10"):
        wire.request("GET", "/", b"", None, 5.0)
    assert wire.request("GET", "/", b"", None, 5.0) == (200, b"whole")
    assert server.connections == 2


def test_garbage_instead_of_a_status_line_raises(serve: Callable[..., Server]) -> None:
    server = serve(answer_each(b"SSH-2.0-OpenSSH\r\n\r\n"))
    with pytest.raises(TransportError, match=r"not an HTTP/1\.x status line"):
        transport(server).request("GET", "/", b"", None, 5.0)


def test_silent_server_times_out_without_a_retry(serve: Callable[..., Server]) -> None:
    gate = threading.Event()

    def silent(peer: Peer) -> None:
        assert peer.request()
        gate.wait(2 * WAIT_S)

    server = serve(silent)
    started = time.monotonic()
    with pytest.raises(TransportError, match="timed out"):
        transport(server).request("GET", "/", b"", None, 0.2)
    gate.set()
    assert time.monotonic() - started < WAIT_S  # not held until the server's 60 s
    assert len(server.requests) == 1


def test_refused_connection_raises_transport_error() -> None:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = probe.getsockname()[1]
    with pytest.raises(TransportError, match=r"connecting to 127\.0\.0\.1"):
        Transport(f"http://127.0.0.1:{port}").request("GET", "/", b"", None, 1.0)


def test_stream_yields_chunks_as_they_come_and_abort_ends_a_blocked_read(
    serve: Callable[..., Server],
) -> None:
    gate = threading.Event()

    def watch(peer: Peer) -> None:
        assert peer.request()
        peer.send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        peer.send(b"6\r\nevent1\r\n")
        gate.wait(2 * WAIT_S)

    server = serve(watch)
    stream = transport(server).open_stream("GET", "/watch", b"", 60.0)
    assert stream.status == 200
    pieces = iter(stream)
    assert next(pieces) == b"event1"
    threading.Timer(0.2, stream.abort).start()
    started = time.monotonic()
    with pytest.raises((TransportError, StopIteration)):
        next(pieces)
    assert time.monotonic() - started < WAIT_S  # not blocked until the server's 60 s
    stream.close()
    gate.set()


def test_tls_server_is_verified_against_the_given_ca(
    serve: Callable[..., Server], tmp_path: Path
) -> None:
    bundle = certs.issue_serving(certs.generate_ca(), ["localhost"])
    (tmp_path / "tls.crt").write_bytes(bundle.cert)
    (tmp_path / "tls.key").write_bytes(bundle.key)
    (tmp_path / "ca.crt").write_bytes(bundle.ca_cert)
    server_side = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_side.load_cert_chain(tmp_path / "tls.crt", tmp_path / "tls.key")
    server = serve(answer_each(ok(b'{"kind":"Pod"}')), answer_each(), tls=server_side)
    trusted = KubeClient(
        ClientConfig(host=f"https://127.0.0.1:{server.port}", ca_file=str(tmp_path / "ca.crt")),
        qps=0,
    )
    assert trusted.request("GET", "/api/v1/pods") == {"kind": "Pod"}
    untrusted = KubeClient(ClientConfig(host=f"https://127.0.0.1:{server.port}"), qps=0)
    with pytest.raises(ConnectionFailed, match="CERTIFICATE_VERIFY_FAILED"):
        untrusted.request("GET", "/api/v1/pods")
    wait_until(lambda: server.errors, "the server saw the client's refusal")
    assert [type(e) for e in server.errors] == [ssl.SSLError]  # the client's refusal
    server.errors.clear()


def test_client_maps_answers_and_sends_token_without_its_trailing_newline(
    serve: Callable[..., Server],
) -> None:
    missing = b'{"kind":"Status","reason":"NotFound","message":"pods \\"x\\" not found","code":404}'
    server = serve(
        answer_each(
            b"HTTP/1.1 404 Not Found\r\nContent-Length: %d\r\n\r\n%s" % (len(missing), missing)
        )
    )
    client = KubeClient(
        ClientConfig(host=f"http://127.0.0.1:{server.port}", token=lambda: "abc\n"), qps=0
    )
    with pytest.raises(NotFound, match='pods "x" not found'):
        client.request("GET", "/api/v1/namespaces/d/pods/x")
    assert b"\r\nAuthorization: Bearer abc\r\n" in server.requests[0]


def test_client_refuses_a_token_with_a_line_break_inside() -> None:
    client = KubeClient(
        ClientConfig(host="http://127.0.0.1:1", token=lambda: "abc\r\nX-Evil: 1"), qps=0
    )
    with pytest.raises(ConnectionFailed, match="line break"):
        client.request("GET", "/")


def test_a_finished_stream_keeps_its_connection_so_a_late_abort_hits_nobody(
    serve: Callable[..., Server],
) -> None:
    server = serve(
        answer_each(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nend\r\n0\r\n\r\n"),
        answer_each(ok(b"a"), ok(b"b")),
    )
    wire = transport(server)
    stream = wire.open_stream("GET", "/watch", b"", 5.0)
    assert list(stream) == [b"end"]
    stream.close()
    assert wire.request("GET", "/", b"", None, 5.0) == (200, b"a")
    stream.abort()  # e.g. an informer stopping after its watch already ended
    assert wire.request("GET", "/", b"", None, 5.0) == (200, b"b")
    assert server.connections == 2
