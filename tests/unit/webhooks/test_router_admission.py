"""The router, the AdmissionReview handling and the Flask app (test client, no sockets)."""

from __future__ import annotations

import gc
from typing import Any

import orjson
import pytest
from werkzeug.exceptions import NotFound

from webhooks.admission import MAX_BODY_BYTES, allowed, denied, handle_review
from webhooks.app import create_app
from webhooks.router import AdmissionRouter, WebhookRule, rule_for

RULE = WebhookRule(("CREATE",), ("g",), ("v1",), ("things",))


def _review(uid: str = "u-1", **request: Any) -> dict[str, Any]:
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {"uid": uid, "operation": "CREATE", "object": {}, **request},
    }


def _allow(review: Any) -> dict[str, Any]:
    return allowed(["careful"])


def _boom(review: Any) -> dict[str, Any]:
    raise RuntimeError("bug")


def test_rule_for_splits_the_group_version_and_reads_v1_as_the_core_group() -> None:
    queues = rule_for("scheduling.volcano.sh/v1beta1", "queues", "Cluster", "CREATE", "DELETE")
    assert queues.to_dict() == {
        "operations": ["CREATE", "DELETE"],
        "apiGroups": ["scheduling.volcano.sh"],
        "apiVersions": ["v1beta1"],
        "resources": ["queues"],
        "scope": "Cluster",
    }
    assert rule_for("v1", "pods", "*", "CREATE") == WebhookRule(
        ("CREATE",), ("",), ("v1",), ("pods",)
    )


def test_router_register_rejects_duplicate_path() -> None:
    router = AdmissionRouter()
    router.register("/a", _allow, [RULE])
    with pytest.raises(ValueError, match="already registered"):
        router.register("/a", _allow)


def test_router_get_unknown_path_names_known_paths() -> None:
    router = AdmissionRouter()
    router.register("/b", _allow)
    router.register("/a", _allow)
    with pytest.raises(KeyError, match=r"registered: /a, /b"):
        router.get("/c")
    assert [s.path for s in router] == ["/a", "/b"]


def test_router_register_rejects_relative_path() -> None:
    with pytest.raises(ValueError, match="must start with '/'"):
        AdmissionRouter().register("a", _allow)


JSON = "application/json"


@pytest.mark.parametrize(
    ("body", "content_type", "status", "reason"),
    [
        (b"x" * (MAX_BODY_BYTES + 1), JSON, 413, "larger than"),
        (b"{}", "text/plain", 415, "Content-Type must be application/json"),
        (b"{not json", JSON, 400, "not JSON"),
        (b"[1, 2]", JSON, 400, "not a JSON object"),
        (orjson.dumps({"kind": "Pod", "request": {"uid": "u"}}), JSON, 400, "not an admission"),
        (orjson.dumps({**_review(), "request": {}}), JSON, 400, "no request.uid"),
    ],
    ids=["too-large", "wrong-content-type", "not-json", "not-object", "not-review", "no-uid"],
)
def test_handle_review_refuses_bad_input_with_4xx_and_reason(
    body: bytes, content_type: str, status: int, reason: str
) -> None:
    code, payload = handle_review(body, content_type, _allow)
    assert code == status
    assert reason in payload["reason"]


def test_handle_review_echoes_uid_when_refusing_wrong_kind() -> None:
    body = orjson.dumps({**_review("u-9"), "kind": "Other"})
    code, payload = handle_review(body, JSON, _allow)
    assert (code, payload["uid"]) == (400, "u-9")


def test_handle_review_echoes_uid_and_warnings() -> None:
    code, payload = handle_review(
        orjson.dumps(_review("u-2")), "application/json; charset=utf-8", _allow
    )
    assert code == 200
    assert payload["response"] == {"allowed": True, "warnings": ["careful"], "uid": "u-2"}
    assert payload["kind"] == "AdmissionReview"


def test_handle_review_denies_with_uid_when_function_raises() -> None:
    code, payload = handle_review(orjson.dumps(_review("u-3")), JSON, _boom)
    assert code == 200
    assert payload["response"]["uid"] == "u-3"
    assert payload["response"]["allowed"] is False
    assert "RuntimeError: bug" in payload["response"]["status"]["message"]


def test_denied_carries_status_message_and_reason() -> None:
    assert denied("no", "Forbidden", 403)["status"] == {
        "status": "Failure",
        "message": "no",
        "reason": "Forbidden",
        "code": 403,
    }


@pytest.fixture
def app_client() -> Any:
    router = AdmissionRouter()
    router.register("/things/validate", _allow, [RULE])
    return create_app(router, ready=lambda: False).test_client()


def test_app_serves_registered_path(app_client: Any) -> None:
    resp = app_client.post(
        "/things/validate", data=orjson.dumps(_review("u-4")), content_type="application/json"
    )
    assert resp.status_code == 200
    assert resp.get_json()["response"]["uid"] == "u-4"


def test_app_refuses_oversized_body_before_reading_it(app_client: Any) -> None:
    resp = app_client.post(
        "/things/validate", data=b"x" * (MAX_BODY_BYTES + 10), content_type="application/json"
    )
    assert resp.status_code == 413
    assert resp.get_json()["code"] == 413


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("get", "/things/validate", 405),
        ("post", "/nope", 404),
        ("get", "/healthz", 200),
        ("get", "/readyz", 503),
    ],
    ids=["wrong-method", "unknown-path", "healthz", "readyz-not-ready"],
)
def test_app_answers_other_requests_without_5xx_from_client_input(
    app_client: Any, method: str, path: str, status: int
) -> None:
    assert getattr(app_client, method)(path).status_code == status


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("post", "/things/validate/", 404),  # strict slashes, as werkzeug answers
        ("post", "/things//validate", 308),  # merged slashes redirect, as werkzeug answers
        ("get", "/healthz/", 404),
        ("head", "/healthz", 200),  # GET rules accept HEAD
        ("put", "/things/validate", 405),
    ],
)
def test_app_routing_edge_cases_keep_werkzeugs_answers(
    app_client: Any, method: str, path: str, status: int
) -> None:
    assert getattr(app_client, method)(path).status_code == status


def test_fixed_paths_are_matched_without_leaving_garbage_cycles() -> None:
    router = AdmissionRouter()
    router.register("/things/validate", _allow, [RULE])
    app = create_app(router)
    adapter = app.url_map.bind("localhost")
    adapter.match("/healthz", method="GET")  # first match builds werkzeug's state machine
    gc.collect()
    gc.disable()
    try:
        for _ in range(100):
            rule, args = adapter.match("/things/validate", method="POST", return_rule=True)
            assert rule.endpoint == "admit:/things/validate"
            assert args == {}
            assert adapter.match("/healthz", method="GET") == ("healthz", {})
        assert gc.collect() == 0
        with pytest.raises(NotFound):  # what it does not know goes to werkzeug (which cycles)
            adapter.match("/nope", method="GET")
        assert gc.collect() > 0
    finally:
        gc.enable()
