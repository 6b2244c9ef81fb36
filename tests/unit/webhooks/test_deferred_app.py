"""The manager's webhook app is built on its first request or when warmed (webhooks/deferred.py)."""

from __future__ import annotations

import contextlib
import threading
from typing import Any

from tests.unit.waits import WAIT_S
from webhooks.deferred import DeferredApp


def test_built_once_on_the_first_request_even_when_requests_race() -> None:
    builds: list[int] = []
    gate = threading.Event()

    def build() -> Any:
        gate.wait(5)
        builds.append(1)

        def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
            start_response("200 OK", [])
            return [environ["PATH_INFO"].encode()]

        return app

    deferred = DeferredApp(build)
    assert not deferred.built
    answers: list[list[bytes]] = []
    threads = [
        threading.Thread(
            target=lambda: answers.append(list(deferred({"PATH_INFO": "/x"}, lambda *a: None)))
        )
        for _ in range(4)
    ]
    for t in threads:
        t.start()
    gate.set()
    for t in threads:
        t.join(WAIT_S)
    assert builds == [1]
    assert answers == [[b"/x"]] * 4
    assert deferred.built


def test_a_build_that_raised_is_tried_again() -> None:
    attempts: list[int] = []

    def build() -> Any:
        attempts.append(1)
        if len(attempts) == 1:
            raise RuntimeError("first build fails")
        return lambda environ, start_response: [b"ok"]

    deferred = DeferredApp(build)
    with contextlib.suppress(RuntimeError):
        deferred.warm()
    assert not deferred.built
    assert list(deferred({}, lambda *a: None)) == [b"ok"]
    assert len(attempts) == 2
