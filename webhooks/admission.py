"""AdmissionReview in, AdmissionReview out: the wire format, and never a 5xx for client input.

``handle_review(body, content_type, func)`` turns one HTTP request into ``(status, payload)``:

- a body over ``MAX_BODY_BYTES`` (3 MiB, the API server's own request limit), a Content-Type
  other than JSON, a body that is not JSON, or JSON that is not an ``admission.k8s.io/v1``
  AdmissionReview with a ``request.uid`` -> a 4xx with a ``reason`` (and the uid when one
  could be read);
- otherwise 200 and an AdmissionReview whose ``response.uid`` is the request's uid, always;
- an exception in the admission function is logged and answered as a denial (200, with the
  uid): the object is refused with a message instead of the API server seeing a 5xx.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import orjson

from webhooks.router import AdmitFunc

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 3 * 1024 * 1024
API_VERSION = "admission.k8s.io/v1"
KIND = "AdmissionReview"


def allowed(warnings: list[str] | tuple[str, ...] = ()) -> dict[str, Any]:
    """An allowing response (the uid is filled in by ``handle_review``)."""
    response: dict[str, Any] = {"allowed": True}
    if warnings:
        response["warnings"] = list(warnings)
    return response


def denied(
    message: str, reason: str = "Invalid", code: int = 400, warnings: tuple[str, ...] = ()
) -> dict[str, Any]:
    """A denying response with a Status the API server shows to the user."""
    response: dict[str, Any] = {
        "allowed": False,
        "status": {"status": "Failure", "message": message, "reason": reason, "code": code},
    }
    if warnings:
        response["warnings"] = list(warnings)
    return response


def review(uid: str, response: Mapping[str, Any]) -> dict[str, Any]:
    """Wrap ``response`` in an AdmissionReview answering request ``uid``."""
    return {"apiVersion": API_VERSION, "kind": KIND, "response": {**response, "uid": uid}}


def _problem(status: int, reason: str, uid: str | None = None) -> tuple[int, dict[str, Any]]:
    payload: dict[str, Any] = {"kind": "Status", "status": "Failure", "code": status}
    payload["reason"] = reason
    if uid is not None:
        payload["uid"] = uid
    return status, payload


def is_json_content_type(content_type: str | None) -> bool:
    """``application/json`` (any parameters, any case)."""
    if not content_type:
        return False
    return content_type.split(";", 1)[0].strip().lower() == "application/json"


def handle_review(
    body: bytes, content_type: str | None, func: AdmitFunc
) -> tuple[int, dict[str, Any]]:
    """One admission HTTP exchange: see the module docstring."""
    if len(body) > MAX_BODY_BYTES:
        return _problem(413, f"request body is larger than {MAX_BODY_BYTES} bytes")
    if not is_json_content_type(content_type):
        return _problem(415, f"Content-Type must be application/json, got {content_type!r}")
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as e:
        return _problem(400, f"request body is not JSON: {e}")
    if not isinstance(data, dict):
        return _problem(400, "request body is not an AdmissionReview (not a JSON object)")
    request = data.get("request")
    uid = request.get("uid") if isinstance(request, dict) else None
    uid = uid if isinstance(uid, str) and uid else None
    if data.get("kind") != KIND or data.get("apiVersion") != API_VERSION:
        return _problem(
            400,
            f"request body is not an {API_VERSION} {KIND}: apiVersion="
            f"{data.get('apiVersion')!r} kind={data.get('kind')!r}",
            uid,
        )
    if uid is None:
        return _problem(400, "AdmissionReview has no request.uid", None)
    try:
        response = func(data)
    except Exception as e:  # the object is refused, the API server never sees a 5xx
        log.exception("admission function failed for request %s", uid)
        response = denied(
            f"internal error while validating: {type(e).__name__}: {e}", "InternalError", 500
        )
    return 200, review(uid, response)
