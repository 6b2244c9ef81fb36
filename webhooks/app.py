"""The Flask app factory: one POST route per registered admission service, plus health.

``create_app(router)`` builds a fresh app (there is no module-level app): for every service in
the router, ``POST <path>`` runs ``admission.handle_review``; ``GET /healthz`` and
``GET /readyz`` answer ``ok`` (``ready`` decides readiness, e.g. "caches synced"). Flask's own
error pages are replaced by JSON so that nothing a client sends yields a 5xx: an oversized
body is refused before it is read (``MAX_CONTENT_LENGTH``), unknown paths are 404s, and any
unexpected exception in the view is logged and answered 400 without reaching the API server
as a server error.

Routing: werkzeug matches a path through a recursive closure that refers to itself, so every
request it routes leaves a reference cycle (function, cells, a set, a tuple) that only the
cyclic garbage collector frees. In the manager that collector walks a heap of cached cluster
objects, and at 300 admissions/s those cycles alone triggered a young-generation pass every
~15 s that held the GIL for 25-38 ms on a busy machine (``bench/bench_process.py``). Every
route here is a fixed path, so ``_FixedPathMatcher`` answers them from a dict and leaves
werkzeug's matcher for anything else (wrong method, trailing slash, unknown path), which keeps
its answers (405, 308, 404) unchanged.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, MutableMapping
from typing import Any

import orjson
from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException
from werkzeug.routing import Map, Rule
from werkzeug.routing.matcher import StateMachineMatcher

from volcano_py.metrics import WEBHOOK_LATENCY
from webhooks.admission import MAX_BODY_BYTES, handle_review
from webhooks.router import AdmissionRouter, AdmitFunc

log = logging.getLogger(__name__)


def _json(status: int, payload: Any) -> Response:
    return Response(orjson.dumps(payload), status=status, mimetype="application/json")


class _FixedPathMatcher(StateMachineMatcher):
    """werkzeug's matcher behind a dict lookup for rules without variables (no garbage)."""

    def __init__(self, merge_slashes: bool) -> None:
        super().__init__(merge_slashes)
        self._fixed: dict[tuple[str, ...], list[Rule]] = {}

    def add(self, rule: Rule) -> None:
        super().add(rule)
        parts = rule._parts  # the domain part, then one per path segment
        if all(part.static for part in parts) and not rule.alias:
            self._fixed.setdefault(tuple(part.content for part in parts), []).append(rule)

    def match(
        self, domain: str, path: str, method: str, websocket: bool
    ) -> tuple[Rule, MutableMapping[str, Any]]:
        for rule in self._fixed.get((domain, *path.split("/")), ()):
            if (rule.methods is None or method in rule.methods) and rule.websocket == websocket:
                return rule, dict(rule.defaults or {})
        return super().match(domain, path, method, websocket)


class _FixedPathMap(Map):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        matcher = _FixedPathMatcher(self.merge_slashes)
        for rule in self.iter_rules():  # rules given to the constructor
            if not rule.build_only:
                matcher.add(rule)
        self._matcher = matcher


class _App(Flask):
    url_map_class = _FixedPathMap


def create_app(
    router: AdmissionRouter,
    *,
    ready: Callable[[], bool] | None = None,
    extra: Callable[[Flask], None] | None = None,
) -> Flask:
    """A Flask app serving every service of ``router``; ``extra(app)`` may add routes."""
    app = _App("volcano-py-webhooks")
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY_BYTES

    for service in router:
        app.add_url_rule(
            service.path,
            endpoint=f"admit:{service.path}",
            view_func=_view(service.func),
            methods=["POST"],
        )

    @app.get("/healthz")
    def healthz() -> Response:
        return Response("ok", mimetype="text/plain")

    @app.get("/readyz")
    def readyz() -> Response:
        if ready is not None and not ready():
            return Response("not ready", status=503, mimetype="text/plain")
        return Response("ok", mimetype="text/plain")

    @app.errorhandler(HTTPException)
    def http_error(e: HTTPException) -> Response:
        code = e.code or 400
        return _json(
            code,
            {
                "kind": "Status",
                "status": "Failure",
                "code": code,
                "reason": e.description or e.name,
            },
        )

    if extra is not None:
        extra(app)
    return app


def _view(func: AdmitFunc) -> Callable[[], Response]:
    def admit() -> Response:
        started = time.perf_counter()
        try:
            body = request.get_data(cache=False)
            status, payload = handle_review(body, request.content_type, func)
        except HTTPException:
            raise
        except Exception as e:  # never a 5xx for what a client sent
            log.exception("admission request on %s failed", request.path)
            status, payload = (
                400,
                {
                    "kind": "Status",
                    "status": "Failure",
                    "code": 400,
                    "reason": f"bad request: {type(e).__name__}",
                },
            )
        response = payload.get("response") if isinstance(payload, dict) else None
        allowed = str(response.get("allowed")).lower() if isinstance(response, dict) else "error"
        WEBHOOK_LATENCY.labels(request.path, allowed).observe(
            (time.perf_counter() - started) * 1000
        )
        return _json(status, payload)

    return admit
