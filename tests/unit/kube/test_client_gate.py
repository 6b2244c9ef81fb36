"""A gated client view: writes call the gate first, so a refused write never leaves."""

from __future__ import annotations

import pytest

from volcano_py.api.resources import PODS
from volcano_py.kube.client import KubeClient
from volcano_py.kube.config import ClientConfig
from volcano_py.kube.errors import NotLeader


def test_gated_view_refuses_writes_before_sending_and_leaves_the_base_client_alone() -> None:
    # A closed loopback port: a write that got past the gate would fail to connect.
    base = KubeClient(ClientConfig(host="https://127.0.0.1:9"), timeout=0.1)
    calls: list[tuple[str, str]] = []

    def gate(method: str, path: str) -> None:
        calls.append((method, path))
        raise NotLeader(f"{method} {path}: not sent")

    view = base.gated(gate)
    for write in (
        lambda: view.create(PODS, {"metadata": {"name": "p"}}, "ns"),
        lambda: view.patch(PODS, "p", {"metadata": {}}, "ns"),
        lambda: view.delete(PODS, "p", "ns"),
    ):
        with pytest.raises(NotLeader):
            write()
    assert [m for m, _ in calls] == ["POST", "PATCH", "DELETE"]
    assert calls[0][1] == "/api/v1/namespaces/ns/pods"
    assert base._write_gate is None
    assert view._transport is base._transport  # one connection pool
