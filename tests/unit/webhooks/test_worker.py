"""The guarded gthread worker: when a buffered request is complete, and gunicorn's hooks exist."""

from __future__ import annotations

import pytest
from gunicorn.util import load_class
from gunicorn.workers.gthread import TConn, ThreadWorker

from webhooks.worker import GuardedThreadWorker, request_complete

HEAD = b"POST /hypernodes/validate HTTP/1.1\r\nHost: w\r\n"


@pytest.mark.parametrize(
    ("data", "complete"),
    [
        (b"POST /hypernodes/val", False),
        (HEAD, False),
        (HEAD + b"Content-Type: application/json\r\n", False),
        (b"GET /healthz HTTP/1.1\r\nHost: w\r\n\r\n", True),
        (HEAD + b"Content-Length: 4\r\n\r\n{}", False),
        (HEAD + b'Content-Length: 4\r\n\r\n{""}', True),
        (HEAD + b"content-length: 2\r\n\r\n{}GET / HTTP/1.1\r\n", True),
        (HEAD + b"Content-Length: nope\r\n\r\n", True),
        (HEAD + b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n", False),
        (HEAD + b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", True),
        (HEAD + b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", True),
        (HEAD + b"Content-Length: 2\r\nContent-Length: 100\r\n\r\n{}", True),
        (HEAD + b"Content-Length: 2\r\nContent-Length: 2\r\n\r\n", True),
        (HEAD + b"Transfer-Encoding: chunked\r\nContent-Length: 50\r\n\r\n2\r\n{}\r\n", True),
        (HEAD + b"Content-Length: 50\r\nX-A: a\r\n b\r\n\r\n", True),
        (HEAD + b"Content-Length: +5\r\n\r\n", True),
        (HEAD + b"Content-Length: 1_0\r\n\r\n", True),
        (HEAD + b"Content-Length: 99999999999\r\n\r\n", True),
    ],
    ids=[
        "half-request-line",
        "no-blank-line",
        "headers-cut",
        "get-without-body",
        "body-short",
        "body-whole",
        "case-and-read-ahead",
        "bad-length-left-to-parser",
        "chunked-open",
        "chunked-closed",
        "chunked-empty",
        "two-different-lengths",
        "two-equal-lengths",
        "chunked-and-length",
        "obsolete-folding",
        "signed-length",
        "underscore-length",
        "huge-length",
    ],
)
def test_request_complete_only_with_the_whole_head_and_body(data: bytes, complete: bool) -> None:
    assert request_complete(data) is complete


def test_guarded_worker_overrides_hooks_that_gunicorn_still_calls() -> None:
    # Subclassing internals: fail loudly if a gunicorn upgrade renames what we rely on.
    for hook in ("accept", "on_client_socket_readable", "murder_pending", "enqueue_req"):
        assert callable(getattr(ThreadWorker, hook)), hook
    for attribute in ("initialized", "data_ready", "parser"):
        assert attribute in TConn.__init__.__code__.co_names, attribute
    assert load_class("webhooks.worker.GuardedThreadWorker") is GuardedThreadWorker
