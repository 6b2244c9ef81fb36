"""Many small requests in flight from one thread: the scheduler's binds (``client.Sender``).

Why: a bind is one small POST, and a placed gang is many of them at once. Posted by a pool of
threads, one blocking request each, a bind cost 124-138 µs of user CPU and 33-40 µs of system
CPU in this process (2,000 binds, 32 threads, on the 2-core development machine): mostly the
GIL and the pool's queue passed between 32 threads as the answers come back. One thread that
keeps every connection non-blocking and waits on all of them at once posted the same binds
as fast at 71-77 µs and 10-20 µs. While a gang binds, the API server is what limits the pace,
and on a small machine every CPU second this process does not spend, the API server gets.

Contract:

- ``submit`` queues one request (its bytes, ready to send) and returns at once; its ``done``
  is called on the pump's thread exactly once: ``done(status, body, None)`` with the whole
  answer, or ``done(0, b"", error)``;
- at most ``parallel`` requests are in flight, each on a keep-alive connection of the pump's
  own, opened when needed and kept for the next request; an idle connection the server closed
  is dropped;
- a request is sent no earlier than its ``not_before`` (``time.monotonic``; the client's rate
  limiter), and only if its ``before_send`` returns (the leader fence): what that raises is
  the request's error, and nothing is sent;
- a request without a whole answer within its ``timeout`` fails, and its connection is closed;
  a request whose connection fails once it was sent is never sent again (a POST may have been
  applied); the caller decides;
- ``close`` takes no more requests, lets those queued and in flight get their answers (or
  fail by their timeouts) and ends the thread; ``close(drain=False)`` fails them at once.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import logging
import selectors
import socket
import ssl
import threading
import time
from collections import deque
from collections.abc import Callable

from volcano_py.kube.transport import Transport, TransportError, head_framing

log = logging.getLogger(__name__)

Done = Callable[[int, bytes, BaseException | None], None]

_READ = 64 * 1024
_SWEEP_S = 0.1  # how often in-flight requests are checked against their timeouts
_MAX_HEAD = 256 * 1024
_WOULD_BLOCK = (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError)


class _Call:
    __slots__ = ("_done", "before_send", "data", "deadline", "method", "not_before", "timeout")

    def __init__(
        self,
        method: str,
        data: bytes,
        timeout: float,
        not_before: float,
        before_send: Callable[[], None] | None,
        done: Done,
    ) -> None:
        self.method = method
        self.data = data
        self.timeout = timeout
        self.not_before = not_before
        self.before_send = before_send
        self._done = done
        self.deadline = 0.0

    def done(self, status: int, body: bytes, error: BaseException | None) -> None:
        """Hand the outcome over; a failing callback is logged, the pump goes on."""
        try:
            self._done(status, body, error)
        except Exception:
            log.exception("%s: the answer's callback failed", self.method)


class _Conn:
    __slots__ = ("buf", "call", "sock")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.call: _Call | None = None  # the request in flight; None while idle
        self.buf = bytearray()


def whole_answer(buf: bytearray, method: str, eof: bool) -> tuple[int, bytes, bool] | None:
    """``(status, body, close)`` once ``buf`` holds a whole answer; None while it does not.

    ``eof``: the server has closed the connection (a body up to close is then whole). Interim
    1xx answers are skipped. Raises ``TransportError`` for an answer that cannot be whole.
    """
    start = 0
    while True:
        end = buf.find(b"\r\n\r\n", start)
        if end < 0:
            if len(buf) - start > _MAX_HEAD:
                raise TransportError("answer head too long")
            if eof:
                raise TransportError("connection closed before a whole answer")
            return None
        line, *headers = bytes(buf[start:end]).split(b"\r\n")
        status, framing = head_framing(line, headers, method)
        body_at = end + 4
        if not 100 <= status < 200:
            break
        start = body_at
    if framing.chunked:
        pieces: list[bytes] = []
        at = body_at
        while True:
            line_end = buf.find(b"\r\n", at)
            if line_end < 0:
                break
            size = int(bytes(buf[at:line_end]).split(b";", 1)[0], 16)
            if size == 0:
                if buf.find(b"\r\n\r\n", line_end) < 0:  # trailers not all here yet
                    break
                return status, b"".join(pieces), framing.close
            chunk_end = line_end + 2 + size
            if len(buf) < chunk_end + 2:
                break
            if buf[chunk_end : chunk_end + 2] != b"\r\n":
                raise TransportError("chunk cut short")
            pieces.append(bytes(buf[line_end + 2 : chunk_end]))
            at = chunk_end + 2
    elif framing.length is not None:
        if len(buf) >= body_at + framing.length:
            return status, bytes(buf[body_at : body_at + framing.length]), framing.close
    elif eof:
        return status, bytes(buf[body_at:]), True
    if eof:
        raise TransportError("connection closed inside the answer's body")
    return None


class RequestPump:
    """One thread, up to ``parallel`` requests in flight (see the module docstring)."""

    def __init__(self, transport: Transport, parallel: int, name: str) -> None:
        self._transport = transport
        self._parallel = max(1, parallel)
        self._lock = threading.Lock()
        self._submitted: deque[_Call] = deque()
        self._sleeping = False
        self._closed = False  # no more submissions
        self._drain = True  # once closed: answer what is left before ending
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._wake_r, selectors.EVENT_READ, None)
        self._ready: deque[_Call] = deque()
        self._later: list[tuple[float, int, _Call]] = []  # (not_before, order, call)
        self._order = itertools.count()
        self._idle: list[_Conn] = []
        self._busy: set[_Conn] = set()
        self._sweep_at = 0.0  # when in-flight requests are next checked for their timeout
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(
        self,
        method: str,
        data: bytes,
        done: Done,
        *,
        timeout: float,
        not_before: float = 0.0,
        before_send: Callable[[], None] | None = None,
    ) -> None:
        """Queue one request (see the module docstring)."""
        call = _Call(method, data, timeout, not_before, before_send, done)
        with self._lock:
            if not self._closed:
                self._submitted.append(call)
                if self._sleeping:
                    self._sleeping = False
                    with contextlib.suppress(OSError):
                        self._wake_w.send(b"\0")
                return
        done(0, b"", TransportError("the request pump is closed"))

    def close(self, *, drain: bool = True) -> None:
        """Take no more requests; end once the rest are answered (or at once: ``drain``)."""
        with self._lock:
            self._closed = True
            self._drain = self._drain and drain
            with contextlib.suppress(OSError):
                self._wake_w.send(b"\0")
        if self._thread is not threading.current_thread():
            self._thread.join()

    # -- the thread ------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """Whether it takes no more requests (``close``, or its thread ended on a fault)."""
        return self._closed

    def _run(self) -> None:
        try:
            while self._turn():
                pass
        except Exception:  # a fault here: fail what is left rather than leave it unanswered
            log.exception("%s: the request pump failed", self._thread.name)
        finally:
            self._shut()

    def _turn(self) -> bool:
        """Take new requests, send what may go, wait for answers; False once closed."""
        with self._lock:
            submitted, self._submitted = self._submitted, deque()
            if self._closed and not (
                self._drain and (submitted or self._ready or self._later or self._busy)
            ):
                self._submitted = submitted  # failed by ``_shut``
                return False
        now = time.monotonic()
        for call in submitted:
            if call.not_before > now:
                heapq.heappush(self._later, (call.not_before, next(self._order), call))
            else:
                self._ready.append(call)
        while self._later and self._later[0][0] <= now:
            self._ready.append(heapq.heappop(self._later)[2])
        while self._ready and (self._idle or len(self._busy) < self._parallel):
            call = self._ready.popleft()
            try:
                self._start(call)
            except Exception as e:  # a fault: this request fails, the pump goes on
                log.exception("%s: starting a request failed", self._thread.name)
                self._fault(call, e)
        wait: float | None = None
        if self._busy:
            if now >= self._sweep_at:
                self._sweep(now)
            wait = max(0.0, self._sweep_at - now)
        if self._later:
            later = max(0.0, self._later[0][0] - now)
            wait = later if wait is None else min(wait, later)
        with self._lock:
            if self._submitted or (self._closed and not self._drain):
                wait = 0.0
            else:
                self._sleeping = True
        events = self._selector.select(wait)
        with self._lock:
            self._sleeping = False
        for key, _ in events:
            conn = key.data
            if conn is None:
                with contextlib.suppress(OSError):
                    while self._wake_r.recv(4096):
                        pass
            elif conn.call is None:
                self._idle_readable(conn)
            else:
                try:
                    self._readable(conn)
                except Exception as e:  # a fault: this request fails, the pump goes on
                    log.exception("%s: reading an answer failed", self._thread.name)
                    if conn.call is not None:
                        self._fail(conn, TransportError(f"the request pump failed: {e}"))
        return True

    def _fault(self, call: _Call, error: Exception) -> None:
        """Fail ``call`` after a fault in the pump; its connection, if any, is dropped."""
        for conn in [c for c in self._busy if c.call is call]:
            self._fail(conn, TransportError(f"the request pump failed: {error}"))
            return
        call.done(0, b"", TransportError(f"the request pump failed: {error}"))

    def _sweep(self, now: float) -> None:
        """Fail the requests past their timeout; the next look is ``_SWEEP_S`` later."""
        for conn in [c for c in self._busy if c.call is not None and c.call.deadline <= now]:
            self._fail(conn, TransportError("timed out waiting for the answer"))
        self._sweep_at = now + _SWEEP_S

    def _start(self, call: _Call) -> None:
        if call.before_send is not None:
            try:
                call.before_send()
            except BaseException as e:  # the fence: the request is refused, not sent
                call.done(0, b"", e)
                return
        conn = self._idle.pop() if self._idle else None
        if conn is None:
            try:
                conn = _Conn(self._transport.connect())
            except TransportError as e:
                call.done(0, b"", e)
                return
            conn.sock.setblocking(False)
            self._selector.register(conn.sock, selectors.EVENT_READ, conn)
        conn.call = call
        call.deadline = time.monotonic() + call.timeout
        self._busy.add(conn)
        try:
            self._send(conn.sock, call.data, call.deadline)
        except OSError as e:
            self._fail(conn, TransportError(f"{call.method}: sending: {e}"))

    @staticmethod
    def _send(sock: socket.socket, data: bytes, deadline: float) -> None:
        """Write all of ``data``; a request is small, so the socket's buffer seldom fills."""
        view = memoryview(data)
        while view:
            try:
                view = view[sock.send(view) :]
            except _WOULD_BLOCK:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError("timed out sending the request") from None
                with selectors.DefaultSelector() as one:
                    one.register(sock, selectors.EVENT_WRITE)
                    one.select(left)

    def _receive(self, conn: _Conn) -> bool:
        """Append what the socket has to ``conn.buf``; True once the server closed it."""
        while True:
            try:
                data = conn.sock.recv(_READ)
            except _WOULD_BLOCK:
                return False
            if not data:
                return True
            conn.buf += data

    def _idle_readable(self, conn: _Conn) -> None:
        """An idle connection woke: TLS housekeeping is fine; data or a close retires it."""
        try:
            eof = self._receive(conn)
        except OSError:
            eof = True
        if eof or conn.buf:
            self._idle.remove(conn)
            self._drop(conn)

    def _readable(self, conn: _Conn) -> None:
        call = conn.call
        assert call is not None
        try:
            eof = self._receive(conn)
            answer = whole_answer(conn.buf, call.method, eof)
        except (OSError, ValueError) as e:
            self._fail(conn, e if isinstance(e, TransportError) else TransportError(str(e)))
            return
        if answer is None:
            return
        status, body, close = answer
        self._busy.discard(conn)
        conn.call = None
        conn.buf = bytearray()
        if close or eof:
            self._drop(conn)
        else:
            self._idle.append(conn)
        call.done(status, body, None)

    def _fail(self, conn: _Conn, error: TransportError) -> None:
        call = conn.call
        self._busy.discard(conn)
        conn.call = None
        self._drop(conn)
        if call is not None:
            call.done(0, b"", error)

    def _drop(self, conn: _Conn) -> None:
        with contextlib.suppress(KeyError, ValueError):
            self._selector.unregister(conn.sock)
        with contextlib.suppress(OSError):
            conn.sock.close()

    def _shut(self) -> None:
        """Fail everything left and release the sockets (the thread's last act)."""
        with self._lock:
            self._closed = True
            left = list(self._submitted) + list(self._ready) + [c for _, _, c in self._later]
            self._submitted.clear()
        closed = TransportError("the request pump is closed")
        for conn in list(self._busy):
            self._fail(conn, closed)
        for conn in self._idle:
            self._drop(conn)
        self._idle.clear()
        for call in left:
            call.done(0, b"", closed)
        self._selector.close()
        self._wake_r.close()
        self._wake_w.close()
