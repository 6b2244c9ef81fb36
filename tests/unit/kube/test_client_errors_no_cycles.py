"""An API error leaves no reference cycle behind (issue 17, R12).

The process runs full garbage collections rarely (``volcano_py/kube/runtime.py``). An error
kept in the raising frame's locals made error -> traceback -> frame -> error a cycle that held
every caller's frame, and with them a whole scheduling cycle's data, until one ran.
"""

from __future__ import annotations

import gc
from typing import Any

import orjson

from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.kube.config import ClientConfig
from volcano_py.kube.errors import NotFound


class _Always404:
    def request(self, *args: Any) -> tuple[int, bytes]:
        body = {"kind": "Status", "code": 404, "reason": "NotFound", "message": "gone"}
        return 404, orjson.dumps(body)


def test_a_caught_api_error_is_freed_by_reference_counting() -> None:
    kube = KubeClient(ClientConfig(host="https://127.0.0.1:9"), qps=0)
    kube._transport = _Always404()  # type: ignore[assignment]
    caught = 0
    gc.collect()
    gc.disable()
    try:
        for _ in range(20):
            try:
                kube.update(R.PODGROUPS, {"metadata": {"name": "pg", "namespace": "d"}})
            except NotFound:
                caught += 1
        unreachable = gc.collect()
    finally:
        gc.enable()
    assert caught == 20
    assert unreachable == 0
