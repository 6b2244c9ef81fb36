"""The ops server over a real socket (no control plane needed)."""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

from volcano_py.ops import OpsServer


@pytest.fixture
def state() -> dict[str, list[str]]:
    return {"healthy": [], "ready": ["caches not synced: pods"]}


@pytest.fixture
def server(state: dict[str, list[str]]) -> Iterator[OpsServer]:
    ops = OpsServer("127.0.0.1", 0, healthy=lambda: state["healthy"], ready=lambda: state["ready"])
    ops.start()
    yield ops
    ops.stop()


def get(server: OpsServer, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{server.port}{path}", timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_ops_readyz_is_503_with_reasons_until_ready(
    server: OpsServer, state: dict[str, list[str]]
) -> None:
    assert get(server, "/readyz") == (503, "[-] caches not synced: pods\n")
    state["ready"] = []
    assert get(server, "/readyz") == (200, "ok\n")


def test_ops_healthz_and_metrics_and_unknown_path(
    server: OpsServer, state: dict[str, list[str]]
) -> None:
    assert get(server, "/healthz") == (200, "ok\n")
    state["healthy"] = ["thread scheduler:loop died"]
    assert get(server, "/healthz")[0] == 503
    status, body = get(server, "/metrics")
    assert status == 200
    assert "volcano_e2e_scheduling_latency_milliseconds" in body
    assert get(server, "/nope")[0] == 404


def test_ops_readyz_lists_detail_lines_when_ready() -> None:
    detail = ["scheduler conf: accepted, not implemented: plugin tdm"]
    ops = OpsServer(
        "127.0.0.1", 0, healthy=lambda: [], ready=lambda: [], ready_detail=lambda: detail
    )
    ops.start()
    try:
        assert get(ops, "/readyz") == (200, f"[+] {detail[0]}\nok\n")
        assert get(ops, "/healthz") == (200, "ok\n")
    finally:
        ops.stop()


def test_ops_server_starts_without_resolving_its_host_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the standard library's HTTPServer looks its host name up in DNS (socket.getfqdn) when
    # it binds: where the resolver hangs, so would the start, before any probe answers
    import socket

    def no_dns(*args: object) -> str:
        raise AssertionError("the ops server asked DNS for its own name")

    monkeypatch.setattr(socket, "getfqdn", no_dns)
    ops = OpsServer("127.0.0.1", 0, healthy=list, ready=list)
    ops.start()
    try:
        assert get(ops, "/healthz") == (200, "ok\n")
    finally:
        ops.stop()
