"""HTTP/1.1 to one API server over a pool of keep-alive connections: the client's wire.

Why not urllib3 (which the client used first): under the manager's load every placed pod costs
about five API requests, and urllib3 spent ~350 µs of Python per request on pool lookup, URL
parsing, retry and timeout objects and ``http.client``'s e-mail header parser (measured against
kube-apiserver on the development machine). That CPU holds the GIL the webhook's admissions
need. What the API server speaks is small: a request line, a few headers, a body with
Content-Length; an answer with Content-Length, chunked transfer coding, or a body up to close.
Reading exactly that costs ~95 µs per request.

Contract:

- ``request`` sends one request and returns ``(status, body)``; any failure to get a whole
  answer raises ``TransportError`` (an ``OSError``), never a partial body;
- ``open_stream`` returns a ``Stream`` of body pieces for watches on a connection of its own;
  ``abort`` from another thread ends a blocked read promptly;
- connections are reused last-in-first-out; one that became readable while idle (the server
  closed it) is dropped before use; a reused connection that fails is retried once on a fresh one
  when the request is idempotent or nothing of it was sent, never otherwise;
- thread-safe: a connection belongs to one request at a time.
"""

from __future__ import annotations

import contextlib
import select
import socket
import ssl
import threading
from collections.abc import Callable, Iterator
from io import BufferedReader
from urllib.parse import urlsplit

_MAX_LINE = 64 * 1024
_MAX_HEADERS = 200
_IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})
_CRLF = b"\r\n"


class TransportError(OSError):
    """No whole answer: the connection failed, timed out, or the server broke the protocol."""


class _Connection:
    """One socket and its buffered reader; used by one request at a time."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.reader: BufferedReader = sock.makefile("rb", buffering=64 * 1024)  # type: ignore[assignment]
        self.reused = False

    def dropped(self) -> bool:
        """Whether the idle connection is readable: the server closed it (or sent junk)."""
        poller = select.poll()
        poller.register(self.sock, select.POLLIN)
        return bool(poller.poll(0))

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.reader.close()
            self.sock.close()

    def abort(self) -> None:
        """Shut the socket down under a reader blocked in another thread."""
        with contextlib.suppress(OSError):
            socket.socket.shutdown(self.sock, socket.SHUT_RDWR)


class Stream:
    """An answer whose body is read piece by piece (a watch); iterate, then ``close``.

    Its connection is never pooled again: ``abort`` may come from another thread at any
    time, and must never reach a connection that meanwhile carries someone else's request.
    """

    def __init__(self, conn: _Connection, status: int, framing: _Framing) -> None:
        self.status = status
        self._conn = conn
        self._framing = framing

    def __iter__(self) -> Iterator[bytes]:
        """Body pieces as they arrive (each chunk of a chunked answer)."""
        try:
            yield from _pieces(self._conn.reader, self._framing)
        except (OSError, ValueError) as e:
            raise TransportError(f"reading the answer: {e}") from e

    def read(self) -> bytes:
        """The whole (remaining) body."""
        return b"".join(self)

    def abort(self) -> None:
        """End a blocked iteration from another thread."""
        self._conn.abort()

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()


class _Framing:
    """How the body of an answer ends."""

    __slots__ = ("chunked", "close", "length")

    def __init__(self, length: int | None, chunked: bool, close: bool) -> None:
        self.length = length
        self.chunked = chunked
        self.close = close


class Transport:
    """Keep-alive HTTP/1.1 to the server at ``url`` (``https://host:port`` or ``http://...``)."""

    def __init__(
        self,
        url: str,
        *,
        ssl_context: ssl.SSLContext | None = None,
        connect_timeout: float = 10.0,
        max_idle: int = 32,
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) server address: {url!r}")
        tls = parts.scheme == "https"
        if tls and ssl_context is None:
            ssl_context = ssl.create_default_context()
        self._context = ssl_context
        self._hostname = parts.hostname
        self._port = parts.port or (443 if tls else 80)
        self._host_header = f"Host: {parts.netloc}\r\n".encode("ascii")
        self._prefix = parts.path.rstrip("/")
        self._connect_timeout = connect_timeout
        self._max_idle = max_idle
        self._idle: list[_Connection] = []
        self._lock = threading.Lock()

    # -- connections ---------------------------------------------------------------------

    def _connect(self) -> _Connection:
        try:
            sock = socket.create_connection(
                (self._hostname, self._port), timeout=self._connect_timeout
            )
        except OSError as e:
            raise TransportError(f"connecting to {self._hostname}:{self._port}: {e}") from e
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self._context is not None:
                sock = self._context.wrap_socket(sock, server_hostname=self._hostname)
        except (OSError, ValueError) as e:
            sock.close()
            raise TransportError(f"TLS with {self._hostname}:{self._port}: {e}") from e
        return _Connection(sock)

    def _acquire(self) -> _Connection:
        while True:
            with self._lock:
                conn = self._idle.pop() if self._idle else None
            if conn is None:
                return self._connect()
            if not conn.dropped():
                return conn
            conn.close()

    def _release(self, conn: _Connection) -> None:
        conn.reused = True
        with self._lock:
            if len(self._idle) < self._max_idle:
                self._idle.append(conn)
                return
        conn.close()

    def close(self) -> None:
        """Close every idle connection (connections in use close when their request ends)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    # -- requests ------------------------------------------------------------------------

    def _head(self, method: str, target: str, headers: bytes, body: bytes | None) -> bytes:
        length = b"" if body is None else b"Content-Length: %d\r\n" % len(body)
        line = f"{method} {self._prefix}{target} HTTP/1.1\r\n".encode("ascii")
        return b"".join((line, self._host_header, headers, length, _CRLF, body or b""))

    def _exchange(
        self,
        method: str,
        data: bytes,
        timeout: float,
        before_send: Callable[[], None] | None = None,
    ) -> tuple[_Connection, int, _Framing]:
        """Send ``data`` and read the answer's head; one retry on a stale reused connection.

        ``before_send`` runs right before the bytes are written (after a connection was found,
        which may take a while); when it raises, nothing is sent and the connection is kept.
        """
        for attempt in (0, 1):
            conn = self._acquire()
            if before_send is not None:
                try:
                    before_send()
                except BaseException:
                    self._release(conn)
                    raise
            sent = False
            try:
                conn.sock.settimeout(timeout)
                conn.sock.sendall(data)
                sent = True
                status, framing = _read_head(conn.reader, method)
                return conn, status, framing
            except (OSError, ValueError) as e:
                conn.close()
                stale = isinstance(e, OSError) and not isinstance(e, TimeoutError)
                if stale and conn.reused and attempt == 0 and (not sent or method in _IDEMPOTENT):
                    continue
                if isinstance(e, TransportError):
                    raise
                raise TransportError(f"{method}: {e}") from e
        raise AssertionError("unreachable")  # pragma: no cover

    def request(
        self,
        method: str,
        target: str,
        headers: bytes,
        body: bytes | None,
        timeout: float,
        before_send: Callable[[], None] | None = None,
    ) -> tuple[int, bytes]:
        """Send one request; return the status and the whole body.

        ``target`` is the path and query; ``headers`` is a block of CRLF-ended header lines;
        ``before_send`` as in ``_exchange`` (a last check that may refuse the request).
        """
        conn, status, framing = self._exchange(
            method, self._head(method, target, headers, body), timeout, before_send
        )
        try:
            data = b"".join(_pieces(conn.reader, framing))
        except (OSError, ValueError) as e:
            conn.close()
            raise TransportError(f"{method}: reading the answer: {e}") from e
        if framing.close:
            conn.close()
        else:
            self._release(conn)
        return status, data

    def open_stream(self, method: str, target: str, headers: bytes, timeout: float) -> Stream:
        """Send a bodiless request and return its answer unread (for watches)."""
        conn, status, framing = self._exchange(
            method, self._head(method, target, headers, None), timeout
        )
        return Stream(conn, status, framing)


def _readline(reader: BufferedReader) -> bytes:
    line = reader.readline(_MAX_LINE + 1)
    if len(line) > _MAX_LINE:
        raise TransportError("answer line too long")
    return line


def _read_head(reader: BufferedReader, method: str) -> tuple[int, _Framing]:
    """Read a status line and headers (skipping 1xx answers); return status and framing."""
    while True:
        line = _readline(reader)
        if not line:
            raise TransportError("connection closed before an answer")
        if not line.startswith(b"HTTP/1.") or len(line) < 12:
            raise TransportError(f"not an HTTP/1.x status line: {line[:80]!r}")
        status = int(line[9:12])
        close = line[5:8] == b"1.0"
        length: int | None = None
        chunked = False
        for _ in range(_MAX_HEADERS):
            header = _readline(reader)
            if header in (b"\r\n", b"\n"):
                break
            if not header:
                raise TransportError("connection closed inside the answer's headers")
            name, _, value = header.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
                if length < 0:
                    raise TransportError("negative Content-Length")
            elif name == b"transfer-encoding":
                chunked = b"chunked" in value.lower()
            elif name == b"connection":
                close = b"close" in value.lower()
        else:
            raise TransportError(f"more than {_MAX_HEADERS} headers")
        if 100 <= status < 200:
            continue
        if method == "HEAD" or status in (204, 304):
            return status, _Framing(0, False, close)
        if chunked:
            return status, _Framing(None, True, close)
        if length is None:
            return status, _Framing(None, False, True)
        return status, _Framing(length, False, close)


def _pieces(reader: BufferedReader, framing: _Framing) -> Iterator[bytes]:
    """The body's pieces: each chunk, the Content-Length bytes, or everything up to close."""
    if framing.chunked:
        while True:
            size_line = _readline(reader)
            if not size_line:
                raise TransportError("connection closed inside a chunked body")
            size = int(size_line.split(b";", 1)[0], 16)
            if size == 0:
                while _readline(reader) not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return
            data = reader.read(size)
            if len(data) < size or reader.read(2) != _CRLF:
                raise TransportError("chunk cut short")
            yield data
    elif framing.length is not None:
        if framing.length:
            data = reader.read(framing.length)
            if len(data) < framing.length:
                raise TransportError(f"body cut short: {len(data)} of {framing.length} bytes")
            yield data
    else:
        while data := reader.read1(64 * 1024):
            yield data
