"""gunicorn's gthread worker, with every request read in full before a thread is committed to it.

The stock ``gthread`` worker hands a connection to a pool thread as soon as its first bytes
arrive, and the thread then reads the request with blocking calls and no deadline. A client
that sends half a request line (or the headers and never the body) holds that thread for as
long as it keeps the socket open; eight of them (one per thread) stop every admission, the
controller's own HyperNode writes included, because the API server fails them on its 10 s
webhook timeout.

``GuardedThreadWorker`` moves the *reading* onto the worker's event loop (the selector that
already accepts connections and parks keep-alive ones):

- a new connection's TLS handshake and every request's bytes are read non-blocking, as they
  arrive, into a buffer owned by the loop;
- only when the buffer holds a **complete request** (the head up to the blank line and, with
  ``Content-Length``, the whole body; with chunked coding, the last chunk) is the connection
  given to a pool thread, with those bytes already in gunicorn's parser, so the thread never
  waits on the client;
- a connection that has not delivered a complete request within ``request_timeout`` seconds
  of its first byte being expected (accept, or the end of the previous response) is closed.

So slow or idle clients cost a file descriptor and a buffer, never a thread: every thread is
always available to requests that are complete. The limits on a request line and header fields
stay gunicorn's (its parser answers 400); the buffer is handed over early once it is larger
than ``MAX_BUFFERED`` so gunicorn's own limits speak.

This subclasses gunicorn 27's ``ThreadWorker`` internals (``accept``,
``on_client_socket_readable``, ``murder_pending``, ``TConn``); ``setup.cfg`` pins the major
version, and ``tests/unit/webhooks/test_worker.py`` checks the hooks it relies on exist.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import selectors
import ssl
import time
from collections import deque
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from gunicorn import http
from gunicorn import sock as gsock
from gunicorn.workers.gthread import TConn, ThreadWorker

log = logging.getLogger(__name__)

DEFAULT_REQUEST_TIMEOUT_S = 5.0
MAX_BUFFERED = 4 * 1024 * 1024
_HEAD_END = b"\r\n\r\n"
_LAST_CHUNK = b"\r\n0\r\n"


def request_complete(buf: bytes | bytearray) -> bool:
    """Whether ``buf`` starts with one whole HTTP/1.x request (head, and body if it has one).

    A head without ``Content-Length`` or chunked coding has no body. A head gunicorn's parser
    refuses is "complete" as soon as it is whole, so the parser answers 400 at once instead of
    the loop waiting for a body the request will never get: a malformed or second
    ``Content-Length`` (two different lengths are the classic request-smuggling shape),
    ``Transfer-Encoding`` together with ``Content-Length``, an obsolete folded header line
    (starting with a space or tab). A length over ``MAX_BUFFERED`` is handed over at once too:
    the application refuses such a body unread (413).
    """
    end = buf.find(_HEAD_END)
    if end < 0:
        return False
    body_start = end + len(_HEAD_END)
    length: int | None = None
    chunked = False
    encoded = False
    for line in bytes(buf[:end]).split(b"\r\n")[1:]:
        if line[:1] in (b" ", b"\t"):
            return True  # obs-fold
        name, _, value = line.partition(b":")
        key = name.strip().lower()
        if key == b"content-length":
            digits = value.strip()
            if length is not None or not digits.isdigit():
                return True
            length = int(digits)
        elif key == b"transfer-encoding":
            encoded = True
            chunked = chunked or b"chunked" in value.lower()
    if encoded and length is not None:
        return True
    if chunked:
        last = buf.find(_LAST_CHUNK, body_start - 2)
        return last >= 0 and buf.find(_HEAD_END, last + 2) >= 0
    if length is None or length > MAX_BUFFERED:
        return True
    return len(buf) - body_start >= length


@dataclass(slots=True)
class _Reading:
    """A connection whose next request is being read on the event loop."""

    conn: TConn
    deadline: float
    handshaking: bool
    buf: bytearray = field(default_factory=bytearray)


class GuardedThreadWorker(ThreadWorker):  # type: ignore[misc]
    """See the module docstring. ``request_timeout`` is set by ``WebhookServer`` before fork."""

    request_timeout: float = DEFAULT_REQUEST_TIMEOUT_S
    dropped_slow: int = 0  # connections closed for not completing a request in time

    def init_process(self) -> None:
        """Set up the reading queue, then gunicorn's own initialisation (which runs the loop)."""
        self.reading: deque[_Reading] = deque()
        super().init_process()

    # -- gunicorn hooks ---------------------------------------------------------------------

    def accept(self, listener: Any) -> None:
        """A new connection: start reading its first request on the loop, not in a thread."""
        try:
            client_sock, client_addr = listener.accept()
        except OSError as e:
            if e.errno not in (errno.EAGAIN, errno.ECONNABORTED, errno.EWOULDBLOCK):
                raise
            return
        self.nr_conns += 1
        conn = TConn(self.cfg, client_sock, client_addr, listener.getsockname())
        handshaking = False
        if self.cfg.is_ssl:
            try:
                conn.sock = gsock.ssl_context(self.cfg).wrap_socket(
                    conn.sock,
                    server_side=True,
                    do_handshake_on_connect=False,
                    suppress_ragged_eofs=self.cfg.suppress_ragged_eofs,
                )
            except (OSError, ssl.SSLError) as e:
                log.debug("webhook: TLS setup failed for %s: %s", client_addr, e)
                self._drop(conn)
                return
            handshaking = True
        self._start_reading(conn, handshaking)

    def on_client_socket_readable(self, conn: TConn, client: Any) -> None:
        """A kept-alive connection sends again: read that request on the loop too."""
        self.poller.unregister(client)
        self.keepalived_conns.remove(conn)
        if conn.parser is not None and conn.parser.unreader.buf.getvalue():
            self.enqueue_req(conn)  # bytes read ahead already wait in the parser
            return
        self._start_reading(conn, handshaking=False)

    def murder_pending(self) -> None:
        """The stock pending sweep, plus closing requests that did not complete in time."""
        super().murder_pending()
        now = time.monotonic()
        while self.reading and self.reading[0].deadline <= now:
            reading = self.reading.popleft()
            self._unregister(reading.conn)
            GuardedThreadWorker.dropped_slow += 1
            log.debug(
                "webhook: closed %s: no complete request within %.1fs (%d bytes read)",
                reading.conn.client,
                self.request_timeout,
                len(reading.buf),
            )
            self._drop(reading.conn)

    # -- reading on the loop ----------------------------------------------------------------

    def _start_reading(self, conn: TConn, handshaking: bool) -> None:
        conn.sock.setblocking(False)
        reading = _Reading(conn, time.monotonic() + self.request_timeout, handshaking)
        self.reading.append(reading)
        self.poller.register(conn.sock, selectors.EVENT_READ, partial(self._on_readable, reading))

    def _on_readable(self, reading: _Reading, _sock: Any) -> None:
        conn = reading.conn
        try:
            if reading.handshaking:
                conn.sock.do_handshake()
                reading.handshaking = False
            while not request_complete(reading.buf) and len(reading.buf) <= MAX_BUFFERED:
                chunk = conn.sock.recv(65536)
                if not chunk:
                    self._finish_reading(reading)
                    self._drop(conn)  # closed before a whole request: nothing to answer
                    return
                reading.buf += chunk
        except (ssl.SSLWantReadError, BlockingIOError):
            return  # wait for more bytes; the deadline still runs
        except ssl.SSLWantWriteError:
            return  # the handshake's reply is queued; the client answers, the socket reads
        except (OSError, ssl.SSLError) as e:
            log.debug("webhook: connection from %s failed while reading: %s", conn.client, e)
            self._finish_reading(reading)
            self._drop(conn)
            return
        self._finish_reading(reading)
        self._hand_over(conn, bytes(reading.buf))

    def _finish_reading(self, reading: _Reading) -> None:
        self._unregister(reading.conn)
        with contextlib.suppress(ValueError):
            self.reading.remove(reading)

    def _hand_over(self, conn: TConn, data: bytes) -> None:
        """Give a connection with a complete request (already read) to a pool thread."""
        conn.sock.setblocking(True)
        if conn.parser is None:
            conn.parser = http.get_parser(self.cfg, conn.sock, conn.client)
            conn.initialized = True
        conn.data_ready = True
        conn.parser.unreader.unread(data)
        self.enqueue_req(conn)

    def _unregister(self, conn: TConn) -> None:
        with contextlib.suppress(KeyError, ValueError, OSError):
            self.poller.unregister(conn.sock)

    def _drop(self, conn: TConn) -> None:
        self.nr_conns -= 1
        conn.close()
