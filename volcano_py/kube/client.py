"""A raw JSON client for the Kubernetes API: dicts in, dicts out, errors mapped from status.

Why not the ``kubernetes`` package's API classes: its model layer costs ~10x ``json.loads``
per object, and its ``Watch.stream(deserialize=False)`` cannot survive ERROR events. We use
that package for one thing only, loading kubeconfig / in-cluster configuration (auth plugins,
token refresh: ``volcano_py.kube.config``), and talk HTTP/1.1 ourselves through
``volcano_py.kube.transport`` (why not urllib3: its docstring has the measured cost).

Contract:

- every method takes a ``APIResource`` (see ``volcano_py.api.resources``) and plain dicts;
- a non-2xx answer raises the matching ``volcano_py.kube.errors.ApiError`` subclass, and a
  request that got no answer raises ``ConnectionFailed``; nothing else escapes;
- the client is thread-safe and rate-limited (a token bucket of ``qps`` and ``burst``;
  ``qps=0`` turns the limit off);
- ``watch`` returns a ``WatchStream`` that yields ``(type, object)`` pairs parsed from the
  raw stream and can be closed from another thread.
"""

from __future__ import annotations

import builtins
import copy
import functools
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any
from urllib.parse import quote, urlencode

import orjson

from volcano_py.api import JSON
from volcano_py.api.resources import APIResource
from volcano_py.kube.config import ClientConfig, ssl_context
from volcano_py.kube.errors import (
    ApiError,
    ConnectionFailed,
    TooManyRequests,
    error_for,
)
from volcano_py.kube.foreground import Foreground
from volcano_py.kube.ratelimit import BucketRateLimiter
from volcano_py.kube.slimjson import Decode
from volcano_py.kube.transport import Stream, Transport

PATCH_CONTENT_TYPES = {
    "merge": "application/merge-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "json": "application/json-patch+json",
    "apply": "application/apply-patch+yaml",
}
_MAX_THROTTLE_RETRIES = 3
_READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def resource_path(
    resource: APIResource,
    namespace: str | None = None,
    name: str | None = None,
    subresource: str | None = None,
) -> str:
    """The URL path of a collection, an object, or an object's subresource."""
    parts = ["/api/v1" if not resource.group else f"/apis/{resource.group}/{resource.version}"]
    if resource.namespaced and namespace:
        parts.append(f"/namespaces/{quote(namespace, safe='')}")
    parts.append(f"/{resource.plural}")
    if name:
        parts.append(f"/{quote(name, safe='')}")
        if subresource:
            parts.append(f"/{subresource}")
    return "".join(parts)


class WatchStream:
    """An open watch: iterate for ``(type, object)``; ``close()`` from any thread."""

    def __init__(self, stream: Stream, decode: Decode = orjson.loads) -> None:
        self._stream = stream
        self._decode = decode
        self._closed = False

    def __iter__(self) -> Iterator[tuple[str, JSON]]:
        loads = self._decode
        pending = b""
        try:
            for chunk in self._stream:
                lines = (pending + chunk).split(b"\n") if pending else chunk.split(b"\n")
                pending = lines.pop()
                for line in lines:
                    if line:
                        event = loads(line)
                        yield event["type"], event["object"]
            if pending.strip():
                event = loads(pending)
                yield event["type"], event["object"]
        except (OSError, ValueError) as e:
            if not self._closed:
                raise ConnectionFailed(f"watch stream broke: {e}") from e
        finally:
            self._stream.close()

    def close(self) -> None:
        """Stop the stream; a blocked iteration ends promptly."""
        self._closed = True
        self._stream.abort()


class KubeClient:
    """Thread-safe JSON client for one API server. See the module docstring for the contract."""

    def __init__(
        self,
        config: ClientConfig,
        *,
        qps: float = 500.0,
        burst: int = 1000,
        timeout: float = 30.0,
        pool_size: int = 32,
    ) -> None:
        self.config = config
        self._limiter: BucketRateLimiter[str] | None = (
            BucketRateLimiter(qps, burst) if qps > 0 else None
        )
        self._timeout = timeout
        self._transport = Transport(
            config.host, ssl_context=ssl_context(config), max_idle=pool_size
        )
        static = [("Accept", "application/json"), ("User-Agent", config.user_agent)]
        if config.impersonate_user:
            static.append(("Impersonate-User", config.impersonate_user))
        static.extend(("Impersonate-Group", group) for group in config.impersonate_groups)
        self._static_headers = _header_block(static)
        self._content_types: dict[str, bytes] = {}
        self._write_gate: Callable[[str, str], None] | None = None
        # the calls background writes give way to (``foreground.py``), shared by every view
        self.foreground = Foreground()

    def gated(self, gate: Callable[[str, str], None]) -> KubeClient:
        """A view of this client whose writes first call ``gate(method, path)``.

        The view shares the connections and the rate limiter; reads and watches are not
        gated. ``gate`` raises (``NotLeader``) to stop a write before anything is sent.
        """
        view = copy.copy(self)
        view._write_gate = gate
        return view

    # -- plumbing -------------------------------------------------------------------------

    def _throttle(self) -> None:
        """Client-side qps/burst: wait for this request's token (0 qps: unlimited)."""
        if self._limiter is not None:
            wait = self._limiter.when("request")
            if wait > 0:
                time.sleep(wait)

    def _headers(self, content_type: str | None) -> bytes:
        """The header block: the fixed headers, then Content-Type and Authorization."""
        block = self._static_headers
        if content_type:
            typed = self._content_types.get(content_type)
            if typed is None:
                typed = self._content_types[content_type] = _header_block(
                    [("Content-Type", content_type)]
                )
            block += typed
        if self.config.token is not None:
            token = self.config.token()
            if token:
                token = token.strip()
                value = token if " " in token else f"Bearer {token}"
                block += _header_block([("Authorization", value)])
        return block

    @staticmethod
    def _target(path: str, query: Mapping[str, Any] | None) -> str:
        """Path plus query string (None and empty values left out, booleans as true/false)."""
        if query:
            items = {
                k: ("true" if v is True else "false" if v is False else v)
                for k, v in query.items()
                if v is not None and v != ""
            }
            if items:
                return f"{path}?{urlencode(items)}"
        return path

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        timeout: float | None = None,
        retry_throttled: bool = True,
        decode: Decode = orjson.loads,
    ) -> JSON:
        """Send one request and return the decoded JSON answer (``{}`` when empty).

        A 429 is retried (after its ``Retry-After``) unless ``retry_throttled`` is False: an
        eviction refused by a PodDisruptionBudget is an answer, not throttling. ``decode``
        decodes a successful answer (``kube/slimjson.py``: without managedFields).
        """
        before_send: Callable[[], None] | None = None
        gate = self._write_gate
        if gate is not None and method not in _READ_METHODS:
            gate(method, path)  # early: no throttling or encoding for a refused write
            before_send = functools.partial(gate, method, path)  # and again at the socket
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else orjson.dumps(body)
        target = self._target(path, query)
        for attempt in range(_MAX_THROTTLE_RETRIES + 1):
            self._throttle()
            try:
                status, answer = self._transport.request(
                    method,
                    target,
                    self._headers(content_type if data is not None else None),
                    data,
                    timeout or self._timeout,
                    before_send,
                )
            except (OSError, ValueError) as e:
                raise ConnectionFailed(f"{method} {path}: {e}") from e
            if status < 300:
                result: JSON = decode(answer) if answer else {}
                return result
            error = _decode_error(status, answer)
            if (
                retry_throttled
                and isinstance(error, TooManyRequests)
                and attempt < _MAX_THROTTLE_RETRIES
            ):
                time.sleep(min(error.retry_after or 1.0, 10.0))
                continue
            try:
                raise error
            finally:
                # This frame would keep the error, whose traceback keeps this frame and every
                # caller's: a cycle holding the caller's data (a whole scheduling cycle) until
                # a full collection, which this process runs rarely (``kube/runtime.py``).
                del error
        raise AssertionError("unreachable")  # pragma: no cover

    # -- verbs ----------------------------------------------------------------------------

    def get(self, resource: APIResource, name: str, namespace: str | None = None) -> JSON:
        """GET one object."""
        return self.request("GET", resource_path(resource, namespace, name))

    def list(
        self,
        resource: APIResource,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
        resource_version: str | None = None,
        decode: Decode = orjson.loads,
    ) -> JSON:
        """LIST one page of a collection (the raw ``*List`` object), decoded by ``decode``."""
        query = {
            "labelSelector": label_selector,
            "fieldSelector": field_selector,
            "limit": limit,
            "continue": continue_token,
            "resourceVersion": resource_version,
        }
        return self.request("GET", resource_path(resource, namespace), query=query, decode=decode)

    def list_all(
        self,
        resource: APIResource,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> builtins.list[JSON]:
        """Every item of a collection, following ``continue`` tokens."""
        pages = list_pages(
            self, resource, namespace, label_selector=label_selector, field_selector=field_selector
        )
        return [item for page in pages for item in page.get("items") or []]

    def create(
        self,
        resource: APIResource,
        body: JSON,
        namespace: str | None = None,
        *,
        subresource_of: str | None = None,
        subresource: str | None = None,
        retry_throttled: bool = True,
    ) -> JSON:
        """POST a new object (or, with ``subresource_of``, to an object's subresource)."""
        if namespace is None and resource.namespaced:
            namespace = (body.get("metadata") or {}).get("namespace")
        path = resource_path(resource, namespace, subresource_of, subresource)
        return self.request("POST", path, body=body, retry_throttled=retry_throttled)

    def update(self, resource: APIResource, body: JSON, *, subresource: str | None = None) -> JSON:
        """PUT an object (optimistic concurrency through ``metadata.resourceVersion``)."""
        meta = body.get("metadata") or {}
        path = resource_path(resource, meta.get("namespace"), meta["name"], subresource)
        return self.request("PUT", path, body=body)

    def patch(
        self,
        resource: APIResource,
        name: str,
        patch: Any,
        namespace: str | None = None,
        *,
        patch_type: str = "merge",
        subresource: str | None = None,
        field_manager: str | None = None,
        force: bool | None = None,
    ) -> JSON:
        """PATCH an object; ``patch_type`` is merge, strategic, json or apply."""
        path = resource_path(resource, namespace, name, subresource)
        query = {"fieldManager": field_manager, "force": force}
        return self.request(
            "PATCH", path, query=query, body=patch, content_type=PATCH_CONTENT_TYPES[patch_type]
        )

    def delete(
        self,
        resource: APIResource,
        name: str,
        namespace: str | None = None,
        *,
        propagation_policy: str | None = None,
        preconditions: Mapping[str, str] | None = None,
    ) -> JSON:
        """DELETE an object; returns the final object or a Status."""
        body: JSON = {"apiVersion": "v1", "kind": "DeleteOptions"}
        if propagation_policy:
            body["propagationPolicy"] = propagation_policy
        if preconditions:
            body["preconditions"] = dict(preconditions)
        return self.request("DELETE", resource_path(resource, namespace, name), body=body)

    def watch(
        self,
        resource: APIResource,
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        timeout_seconds: int = 300,
        allow_bookmarks: bool = True,
        decode: Decode = orjson.loads,
    ) -> WatchStream:
        """Open a watch (events decoded by ``decode``); ``ApiError`` if the server refuses it."""
        query = {
            "watch": True,
            "resourceVersion": resource_version,
            "labelSelector": label_selector,
            "fieldSelector": field_selector,
            "timeoutSeconds": timeout_seconds,
            "allowWatchBookmarks": allow_bookmarks,
        }
        target = self._target(resource_path(resource, namespace), query)
        self._throttle()
        try:
            stream = self._transport.open_stream(
                "GET", target, self._headers(None), timeout_seconds + 30.0
            )
        except (OSError, ValueError) as e:
            raise ConnectionFailed(f"watch {resource}: {e}") from e
        if stream.status >= 300:
            try:
                data = stream.read()
            except OSError:
                data = b""
            stream.close()
            raise _decode_error(stream.status, data)
        return WatchStream(stream, decode)

    def close(self) -> None:
        """Drop pooled connections."""
        self._transport.close()


def _header_block(headers: list[tuple[str, str]]) -> bytes:
    """CRLF-ended ``Name: value`` lines; a value with a line break is refused, not sent."""
    lines = []
    for name, value in headers:
        if "\r" in value or "\n" in value:
            raise ValueError(f"header {name} holds a line break")
        lines.append(f"{name}: {value}\r\n")
    return "".join(lines).encode("latin-1")


def _decode_error(status: int, data: bytes) -> ApiError:
    try:
        body = orjson.loads(data) if data else {}
    except orjson.JSONDecodeError:
        body = {"message": data[:500].decode("utf-8", "replace")}
    if not isinstance(body, dict):
        body = {"message": str(body)[:500]}
    return error_for(status, body)


LIST_PAGE = 500
"""Objects per LIST page when a whole collection is read (client-go's reflector uses 500)."""


def list_pages(
    client: KubeClient,
    resource: APIResource,
    namespace: str | None = None,
    *,
    label_selector: str | None = None,
    field_selector: str | None = None,
    decode: Decode = orjson.loads,
) -> Iterator[JSON]:
    """Each page of a collection (``LIST_PAGE`` objects), following ``continue`` tokens."""
    token: str | None = None
    while True:
        page = client.list(
            resource,
            namespace,
            label_selector=label_selector,
            field_selector=field_selector,
            limit=LIST_PAGE,
            continue_token=token,
            decode=decode,
        )
        yield page
        token = (page.get("metadata") or {}).get("continue")
        if not token:
            return
