"""RequestPump (``kube/pump.py``) and the client's ``Sender`` against a scripted loopback server."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future

import pytest

from tests.unit.kube.test_transport import Peer, Server, answer_each, ok, serve, transport
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient, Sender
from volcano_py.kube.config import ClientConfig
from volcano_py.kube.errors import Conflict, ConnectionFailed, NotLeader
from volcano_py.kube.pump import RequestPump, whole_answer
from volcano_py.kube.transport import TransportError

__all__ = ["serve"]  # the fixture, used by name

Outcome = tuple[int, bytes, BaseException | None]


class Outcomes:
    """``done`` callbacks that record each request's outcome; ``wait`` for them."""

    def __init__(self) -> None:
        self.got: dict[str, Outcome] = {}
        self._cond = threading.Condition()

    def done(self, name: str) -> Callable[[int, bytes, BaseException | None], None]:
        def record(status: int, body: bytes, error: BaseException | None) -> None:
            with self._cond:
                assert name not in self.got, f"{name} answered twice"
                self.got[name] = (status, body, error)
                self._cond.notify_all()

        return record

    def wait(self, *names: str) -> None:
        with self._cond:
            assert self._cond.wait_for(lambda: all(n in self.got for n in names), 30)


def post(body: bytes) -> bytes:
    return b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)


def echo(count: int) -> Callable[[Peer], None]:
    """Answer up to ``count`` requests on this connection with their bodies, until closed."""

    def script(peer: Peer) -> None:
        for _ in range(count):
            request = peer.request()
            if not request:
                return
            peer.send(ok(request.split(b"\r\n\r\n", 1)[1]))
        peer.request()

    return script


# -- answers parsed from bytes as they come -------------------------------------------------


def test_an_answer_is_whole_only_once_its_content_length_is_there() -> None:
    buf = bytearray(b"HTTP/1.1 201 Created\r\nContent-Length: 5\r\n\r\nab")
    assert whole_answer(buf, "POST", eof=False) is None
    buf += b"cde"
    assert whole_answer(buf, "POST", eof=False) == (201, b"abcde", False)


def test_chunked_answer_with_extensions_and_trailers_and_a_skipped_1xx() -> None:
    buf = bytearray(
        b"HTTP/1.1 100 Continue\r\n\r\n"
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nX-Trailer: 1\r\n"
    )
    assert whole_answer(buf, "GET", eof=False) is None  # the trailers' end is not here yet
    buf += b"\r\n"
    assert whole_answer(buf, "GET", eof=False) == (200, b"abcde", False)


def test_a_body_up_to_close_is_whole_at_eof_and_a_cut_body_raises() -> None:
    up_to_close = bytearray(b"HTTP/1.0 200 OK\r\n\r\nall of it")
    assert whole_answer(up_to_close, "GET", eof=False) is None
    assert whole_answer(up_to_close, "GET", eof=True) == (200, b"all of it", True)
    cut = bytearray(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
    with pytest.raises(TransportError, match="inside the answer's body"):
        whole_answer(cut, "GET", eof=True)
    with pytest.raises(TransportError, match="status line"):
        whole_answer(bytearray(b"SSH-2.0-OpenSSH\r\n\r\n"), "GET", eof=False)


# -- the pump --------------------------------------------------------------------------------


def test_requests_share_at_most_parallel_keep_alive_connections(
    serve: Callable[..., Server],
) -> None:
    server = serve(echo(6), echo(6))
    pump = RequestPump(transport(server), 2, "test:pump")
    outcomes = Outcomes()
    try:
        names = [f"r{i}" for i in range(6)]
        for name in names:
            pump.submit("POST", post(name.encode()), outcomes.done(name), timeout=30)
        outcomes.wait(*names)
    finally:
        pump.close()
    assert {name: outcomes.got[name] for name in names} == {
        name: (200, name.encode(), None) for name in names
    }
    assert server.connections == 2


def test_a_refused_before_send_fails_its_request_and_sends_nothing(
    serve: Callable[..., Server],
) -> None:
    server = serve(echo(1))
    pump = RequestPump(transport(server), 1, "test:pump")
    outcomes = Outcomes()

    def fence() -> None:
        raise NotLeader("not the leader")

    try:
        pump.submit("POST", post(b"fenced"), outcomes.done("fenced"), timeout=30, before_send=fence)
        pump.submit("POST", post(b"next"), outcomes.done("next"), timeout=30)
        outcomes.wait("fenced", "next")
    finally:
        pump.close()
    assert isinstance(outcomes.got["fenced"][2], NotLeader)
    assert outcomes.got["next"] == (200, b"next", None)
    assert [r[-4:] for r in server.requests] == [b"next"]


def test_a_post_whose_connection_closes_before_its_answer_is_never_sent_again(
    serve: Callable[..., Server],
) -> None:
    def hang_up(peer: Peer) -> None:
        assert peer.request()  # read, then close without an answer

    server = serve(hang_up, echo(1))
    pump = RequestPump(transport(server), 1, "test:pump")
    outcomes = Outcomes()
    try:
        pump.submit("POST", post(b"lost"), outcomes.done("lost"), timeout=30)
        outcomes.wait("lost")
        pump.submit("POST", post(b"after"), outcomes.done("after"), timeout=30)
        outcomes.wait("after")
    finally:
        pump.close()
    error = outcomes.got["lost"][2]
    assert isinstance(error, TransportError)
    assert "closed before a whole answer" in str(error)
    assert outcomes.got["after"] == (200, b"after", None)
    assert [r[-4:] for r in server.requests] == [b"lost", b"fter"]  # each sent once


def test_a_silent_server_fails_the_request_at_its_timeout(serve: Callable[..., Server]) -> None:
    gate = threading.Event()

    def silent(peer: Peer) -> None:
        assert peer.request()
        gate.wait(30)

    server = serve(silent)
    pump = RequestPump(transport(server), 1, "test:pump")
    outcomes = Outcomes()
    try:
        pump.submit("POST", post(b"x"), outcomes.done("x"), timeout=0.2)
        outcomes.wait("x")
    finally:
        gate.set()
        pump.close()
    error = outcomes.got["x"][2]
    assert isinstance(error, TransportError)
    assert "timed out" in str(error)


def test_an_idle_connection_the_server_closed_is_dropped_and_the_next_uses_a_new_one(
    serve: Callable[..., Server],
) -> None:
    def once_then_close(peer: Peer) -> None:
        request = peer.request()
        peer.send(ok(request[-5:]))

    server = serve(once_then_close, echo(1))
    pump = RequestPump(transport(server), 1, "test:pump")
    outcomes = Outcomes()
    try:
        pump.submit("POST", post(b"first"), outcomes.done("first"), timeout=30)
        outcomes.wait("first")
        deadline = time.monotonic() + 30
        while server.closed < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.05)  # let the pump see the close
        pump.submit("POST", post(b"again"), outcomes.done("again"), timeout=30)
        outcomes.wait("again")
    finally:
        pump.close()
    assert outcomes.got["first"] == (200, b"first", None)
    assert outcomes.got["again"] == (200, b"again", None)
    assert server.connections == 2


def test_a_request_waits_for_its_not_before_while_later_ones_go(
    serve: Callable[..., Server],
) -> None:
    server = serve(echo(2), echo(2))
    pump = RequestPump(transport(server), 2, "test:pump")
    outcomes = Outcomes()
    try:
        later = time.monotonic() + 0.3
        pump.submit("POST", post(b"late"), outcomes.done("late"), timeout=30, not_before=later)
        pump.submit("POST", post(b"now!"), outcomes.done("now!"), timeout=30)
        outcomes.wait("late", "now!")
    finally:
        pump.close()
    assert [r[-4:] for r in server.requests] == [b"now!", b"late"]
    assert outcomes.got["late"] == (200, b"late", None)


def test_close_lets_the_requests_in_flight_finish_and_refuses_new_ones(
    serve: Callable[..., Server],
) -> None:
    release = threading.Event()

    def slow(peer: Peer) -> None:
        request = peer.request()
        release.wait(30)
        peer.send(ok(request[-4:]))
        peer.request()

    server = serve(slow)
    pump = RequestPump(transport(server), 1, "test:pump")
    outcomes = Outcomes()
    pump.submit("POST", post(b"slow"), outcomes.done("slow"), timeout=30)
    closing = threading.Thread(target=pump.close)
    closing.start()
    while not server.requests:
        time.sleep(0.01)
    release.set()
    closing.join(30)
    assert outcomes.got["slow"] == (200, b"slow", None)
    pump.submit("POST", post(b"late"), outcomes.done("late"), timeout=30)
    assert isinstance(outcomes.got["late"][2], TransportError)


def test_close_without_drain_fails_what_is_in_flight(serve: Callable[..., Server]) -> None:
    release = threading.Event()

    def never(peer: Peer) -> None:
        assert peer.request()
        release.wait(30)

    server = serve(never)
    pump = RequestPump(transport(server), 1, "test:pump")
    outcomes = Outcomes()
    try:
        pump.submit("POST", post(b"held"), outcomes.done("held"), timeout=30)
        pump.submit("POST", post(b"queued"), outcomes.done("queued"), timeout=30)
        while not server.requests:
            time.sleep(0.01)
        pump.close(drain=False)
    finally:
        release.set()
    assert all(isinstance(outcomes.got[n][2], TransportError) for n in ("held", "queued"))


# -- the client's Sender ---------------------------------------------------------------------


def client_for(server: Server) -> KubeClient:
    return KubeClient(ClientConfig(host=f"http://127.0.0.1:{server.port}"), qps=0)


def binding(name: str) -> dict[str, object]:
    return {"kind": "Binding", "metadata": {"name": name}, "target": {"name": "n1"}}


def bind(sender: Sender, name: str) -> Future[dict[str, object]]:
    return sender.create(R.PODS, binding(name), "ns", subresource_of=name, subresource="binding")


def test_sender_retries_a_throttled_post_and_maps_a_conflict(serve: Callable[..., Server]) -> None:
    throttled = b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 0\r\nContent-Length: 2\r\n\r\n{}"
    created = ok(b'{"kind":"Status","status":"Success"}')
    conflict_body = b'{"kind":"Status","reason":"Conflict","code":409,"message":"already bound"}'
    conflict = b"HTTP/1.1 409 Conflict\r\nContent-Length: %d\r\n\r\n%s" % (
        len(conflict_body),
        conflict_body,
    )
    server = serve(answer_each(throttled, created, conflict))
    client = client_for(server)
    sender = client.sender(1, "test:sender")
    try:
        first = sender.create(
            R.PODS, binding("p0"), "ns", subresource_of="p0", subresource="binding"
        )
        assert first.result(30) == {"kind": "Status", "status": "Success"}
        second = sender.create(
            R.PODS, binding("p1"), "ns", subresource_of="p1", subresource="binding"
        )
        with pytest.raises(Conflict, match="already bound"):
            second.result(30)
    finally:
        sender.close()
    lines = [r.split(b"\r\n", 1)[0] for r in server.requests]
    assert lines == [
        b"POST /api/v1/namespaces/ns/pods/p0/binding HTTP/1.1",
        b"POST /api/v1/namespaces/ns/pods/p0/binding HTTP/1.1",  # the retry after the 429
        b"POST /api/v1/namespaces/ns/pods/p1/binding HTTP/1.1",
    ]


def test_sender_stops_a_gated_post_before_anything_is_sent(serve: Callable[..., Server]) -> None:
    server = serve(answer_each(ok(b"{}")))
    allowed = [False]

    def gate(method: str, path: str) -> None:
        if not allowed[0]:
            raise NotLeader(f"{method} {path}: not the leader")

    sender = client_for(server).gated(gate).sender(1, "test:sender")
    try:
        with pytest.raises(NotLeader):
            bind(sender, "p0").result(30)
        allowed[0] = True
        assert sender.create(R.PODS, binding("p1"), "ns").result(30) == {}
    finally:
        sender.close()
    assert len(server.requests) == 1


def test_sender_reports_a_lost_connection_as_connection_failed(
    serve: Callable[..., Server],
) -> None:
    def hang_up(peer: Peer) -> None:
        assert peer.request()

    server = serve(hang_up)
    sender = client_for(server).sender(1, "test:sender")
    try:
        lost = sender.create(
            R.PODS, binding("p0"), "ns", subresource_of="p0", subresource="binding"
        )
        with pytest.raises(ConnectionFailed, match="closed before a whole answer"):
            lost.result(30)
    finally:
        sender.close()


def test_a_fault_fails_its_request_and_the_pump_goes_on(
    serve: Callable[..., Server], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = serve(echo(1))
    pump = RequestPump(transport(server), 1, "test:pump")
    outcomes = Outcomes()
    start = RequestPump._start

    def start_or_fail(self: RequestPump, call: object) -> None:
        if b"bad" in call.data:  # type: ignore[attr-defined]
            raise RuntimeError("a bug")
        start(self, call)  # type: ignore[arg-type]

    monkeypatch.setattr(RequestPump, "_start", start_or_fail)
    try:
        pump.submit("POST", post(b"bad"), outcomes.done("bad"), timeout=30)
        pump.submit("POST", post(b"good"), outcomes.done("good"), timeout=30)
        outcomes.wait("bad", "good")
        assert not pump.closed
    finally:
        pump.close()
    error = outcomes.got["bad"][2]
    assert isinstance(error, TransportError)
    assert "a bug" in str(error)
    assert outcomes.got["good"] == (200, b"good", None)
    assert pump.closed


def test_a_fault_of_the_pump_itself_fails_what_is_left_and_closes_it(
    serve: Callable[..., Server], monkeypatch: pytest.MonkeyPatch
) -> None:
    def unanswered(peer: Peer) -> None:
        assert peer.request()
        peer.request()  # until the pump hangs up

    server = serve(unanswered)
    pump = RequestPump(transport(server), 1, "test:pump")
    outcomes = Outcomes()

    def broken(self: RequestPump, now: float) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(RequestPump, "_sweep", broken)  # runs once a request is in flight
    pump.submit("POST", post(b"left"), outcomes.done("left"), timeout=30)
    outcomes.wait("left")
    assert isinstance(outcomes.got["left"][2], TransportError)
    pump.close()
    assert pump.closed
    pump.submit("POST", post(b"late"), outcomes.done("late"), timeout=30)
    assert isinstance(outcomes.got["late"][2], TransportError)
