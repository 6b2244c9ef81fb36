"""Reaching the cluster from a command: kubeconfig errors and an API server that does not answer.

``tree`` (live) and ``manager`` call ``connect`` before they do anything else. It loads the
configuration (``ConfigError`` names the kubeconfig to fix) and asks the API server for
``/version`` until it answers, retrying with a capped exponential backoff and saying so
(``say``: stderr for offline commands, the log for the manager) on every retry. After
``wait`` seconds (``--api-wait``, default ``DEFAULT_API_WAIT``) it gives up with a
``CommandError`` that names the server and the last error; the command prints it and exits 1.
The bound is ``wait`` plus the attempt in flight: the client's connect timeout (10 s, TLS
handshake included) and ``PROBE_TIMEOUT`` for the answer.
Credentials the server refuses (401/403) are not retried: waiting will not fix them.

Not a subcommand itself (it is not listed in ``COMMANDS``).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass

from volcano_py.commands.argtypes import non_negative_float
from volcano_py.kube.client import KubeClient
from volcano_py.kube.config import load_config
from volcano_py.kube.errors import (
    ApiError,
    ConfigError,
    ConnectionFailed,
    Forbidden,
    ServerError,
    TooManyRequests,
    Unauthorized,
)
from volcano_py.kube.retry import Backoff

DEFAULT_API_WAIT = 30.0
"""Seconds a command waits for an API server that does not answer before it exits 1."""

RETRY_BACKOFF = Backoff(duration=0.5, factor=2.0, jitter=0.1, steps=8, cap=8.0)
"""Between attempts: 0.5 s, 1 s, 2 s, 4 s, then every 8 s (plus up to 10 %)."""

PROBE_TIMEOUT = 5.0
"""Seconds one ``/version`` request may take (a server that accepts but never answers)."""


class CommandError(Exception):
    """What a command prints as ``error: <message>`` before it exits with ``exit_code``."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


@dataclass(frozen=True, slots=True)
class Waiting:
    """The injected clock of ``wait_for_api_server`` (tests pass fakes; nothing sleeps)."""

    now: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep


def add_api_wait_argument(parser: argparse.ArgumentParser) -> None:
    """``--api-wait SECONDS``: how long to retry an API server that does not answer."""
    parser.add_argument(
        "--api-wait",
        type=non_negative_float,
        default=DEFAULT_API_WAIT,
        metavar="SECONDS",
        help=(
            "retry an API server that does not answer for this long, then exit 1"
            f" (default {DEFAULT_API_WAIT:g}; 0: one attempt)"
        ),
    )


def connect(
    kubeconfig: str | None,
    wait: float,
    say: Callable[[str], None],
    *,
    qps: float = 500.0,
    burst: int = 1000,
) -> KubeClient:
    """A client whose API server has answered ``/version``; ``CommandError`` otherwise."""
    try:
        config = load_config(kubeconfig)
    except ConfigError as e:
        raise CommandError(str(e), exit_code=2) from e
    try:
        client = KubeClient(config, qps=qps, burst=burst)
    except ValueError as e:  # a server address that is not http(s)://host[:port]
        where = f"kubeconfig {kubeconfig}" if kubeconfig else "the cluster configuration"
        raise CommandError(f"{where}: {e}", exit_code=2) from e
    try:
        wait_for_api_server(
            lambda: client.request("GET", "/version", timeout=PROBE_TIMEOUT), config.host, wait, say
        )
    except BaseException:
        client.close()
        raise
    return client


def wait_for_api_server(
    probe: Callable[[], object],
    host: str,
    wait: float,
    say: Callable[[str], None],
    waiting: Waiting | None = None,
) -> None:
    """Call ``probe`` until it succeeds; retry unreachable/overloaded servers for ``wait`` s."""
    clock = waiting or Waiting()
    deadline = clock.now() + wait
    delays = RETRY_BACKOFF.delays()
    attempts = 0
    while True:
        attempts += 1
        try:
            probe()
            return
        except (Unauthorized, Forbidden) as e:
            raise CommandError(
                f"the API server at {host} refused our credentials ({e}); "
                "check the user in the kubeconfig"
            ) from e
        except (ConnectionFailed, ServerError, TooManyRequests) as e:
            last: ApiError = e
        left = deadline - clock.now()
        if left <= 0:
            raise CommandError(
                f"the API server at {host} did not answer after {attempts} attempt(s) in "
                f"{wait:g}s: {_short(last)} (is the cluster up? --api-wait sets how long to wait)"
            ) from last
        delay = min(next(delays), left)
        say(
            f"cannot reach the API server at {host}: {_short(last)}; retrying in {delay:.1f}s "
            f"(giving up in {left:.0f}s)"
        )
        clock.sleep(delay)


def _short(error: ApiError) -> str:
    text = error.message if isinstance(error, ConnectionFailed) else str(error)
    return " ".join(text.split())
