"""A 429 is retried as throttling, unless the caller says it is an answer (an eviction)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from volcano_py.api import resources as R
from volcano_py.kube import client as client_module
from volcano_py.kube.client import KubeClient
from volcano_py.kube.config import ClientConfig
from volcano_py.kube.errors import TooManyRequests


class _Always429:
    def __init__(self) -> None:
        self.calls = 0

    def request(self, *args: Any) -> tuple[int, bytes]:
        self.calls += 1
        body = {"kind": "Status", "code": 429, "reason": "TooManyRequests", "message": "budget"}
        return 429, orjson.dumps(body)


def _client(monkeypatch: pytest.MonkeyPatch) -> tuple[KubeClient, _Always429]:
    monkeypatch.setattr(client_module.time, "sleep", lambda _s: None)
    kube = KubeClient(ClientConfig(host="https://127.0.0.1:9"), qps=0)
    fake = _Always429()
    kube._transport = fake  # type: ignore[assignment]
    return kube, fake


def test_throttled_requests_are_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    kube, fake = _client(monkeypatch)
    with pytest.raises(TooManyRequests):
        kube.create(R.PODS, {"metadata": {"name": "p", "namespace": "d"}})
    assert fake.calls == client_module._MAX_THROTTLE_RETRIES + 1


def test_an_eviction_429_is_an_answer_not_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    kube, fake = _client(monkeypatch)
    with pytest.raises(TooManyRequests):
        kube.create(
            R.PODS,
            {"metadata": {"name": "p", "namespace": "d"}},
            subresource_of="p",
            subresource="eviction",
            retry_throttled=False,
        )
    assert fake.calls == 1
