"""The HyperNode service builds its validator on first use (or ``warm()``), once."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.webhooks.test_hypernode_validator import ex, hn
from webhooks import hypernodes
from webhooks.hypernodes import DeferredValidator, HyperNodeValidator
from webhooks.router import AdmissionRouter


def _review(obj: dict[str, Any]) -> dict[str, Any]:
    return {"request": {"uid": "u", "operation": "CREATE", "object": obj}}


def test_register_builds_no_validator_until_the_first_review(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: list[HyperNodeValidator] = []
    real = hypernodes.HyperNodeValidator

    def counting(*args: Any, **kwargs: Any) -> HyperNodeValidator:
        built.append(real(*args, **kwargs))
        return built[-1]

    monkeypatch.setattr(hypernodes, "HyperNodeValidator", counting)
    router = AdmissionRouter()
    admit = hypernodes.register(router).func
    assert built == []
    assert admit(_review(hn("ok", 1, [ex("n1")])))["allowed"] is True
    denied = admit(_review(hn("bad", -1, [ex("n1")])))
    assert denied["allowed"] is False
    assert "spec.tier" in denied["status"]["message"]
    assert len(built) == 1


def test_warm_builds_once_and_a_failed_build_is_retried() -> None:
    calls: list[int] = []

    def build() -> HyperNodeValidator:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("policy does not compile")
        return HyperNodeValidator()

    deferred = DeferredValidator(build)
    with pytest.raises(RuntimeError, match="does not compile"):
        deferred.warm()
    assert not deferred.built
    first = deferred.warm()
    assert deferred.built
    assert deferred.warm() is first
    assert deferred.validate(hn("ok", 1, [ex("n1")])).allowed
    assert len(calls) == 2
