"""A tiny in-memory stand-in for the few ``KubeClient`` verbs leader election and events use.

Our own boundary, for unit tests only: get / create / update / patch on a dict, with
resourceVersion checks and the real ``volcano_py.kube.errors`` classes. ``fail`` queues
errors to raise from the next calls of a verb. Integration tests use the real API server.
"""

from __future__ import annotations

import copy
import itertools
import threading
from collections import defaultdict, deque
from typing import Any

from volcano_py.api.resources import APIResource
from volcano_py.kube.errors import AlreadyExists, ApiError, Conflict, NotFound

JSON = dict[str, Any]


class MemoryClient:
    def __init__(self) -> None:
        self.objects: dict[tuple[str, str, str], JSON] = {}
        self.calls: list[tuple[str, str, str]] = []  # (verb, plural, name)
        self.failures: defaultdict[str, deque[ApiError]] = defaultdict(deque)
        self._rv = itertools.count(1)
        self._lock = threading.Lock()

    def fail(self, verb: str, *errors: ApiError) -> None:
        with self._lock:
            self.failures[verb].extend(errors)

    def _start(self, verb: str, resource: APIResource, name: str) -> None:
        self.calls.append((verb, resource.plural, name))
        if self.failures[verb]:
            raise self.failures[verb].popleft()

    def stored(self, resource: APIResource, name: str, namespace: str = "") -> JSON:
        return self.objects[(resource.plural, namespace, name)]

    def of(self, resource: APIResource) -> list[JSON]:
        return [o for (plural, _, _), o in self.objects.items() if plural == resource.plural]

    def get(self, resource: APIResource, name: str, namespace: str | None = None) -> JSON:
        with self._lock:
            self._start("get", resource, name)
            obj = self.objects.get((resource.plural, namespace or "", name))
            if obj is None:
                raise NotFound(404, "NotFound", f"{resource.plural} {name!r} not found")
            return copy.deepcopy(obj)

    def create(self, resource: APIResource, body: JSON, namespace: str | None = None) -> JSON:
        with self._lock:
            name = body["metadata"]["name"]
            self._start("create", resource, name)
            ns = namespace or body["metadata"].get("namespace") or ""
            key = (resource.plural, ns, name)
            if key in self.objects:
                raise AlreadyExists(409, "AlreadyExists", f"{name!r} already exists")
            obj = copy.deepcopy(body)
            obj["metadata"]["namespace"] = ns
            obj["metadata"]["resourceVersion"] = str(next(self._rv))
            self.objects[key] = obj
            return copy.deepcopy(obj)

    def update(self, resource: APIResource, body: JSON) -> JSON:
        with self._lock:
            meta = body["metadata"]
            self._start("update", resource, meta["name"])
            key = (resource.plural, meta.get("namespace") or "", meta["name"])
            current = self.objects.get(key)
            if current is None:
                raise NotFound(404, "NotFound", f"{meta['name']!r} not found")
            if meta.get("resourceVersion") != current["metadata"]["resourceVersion"]:
                raise Conflict(409, "Conflict", "the object has been modified")
            obj = copy.deepcopy(body)
            obj["metadata"]["resourceVersion"] = str(next(self._rv))
            self.objects[key] = obj
            return copy.deepcopy(obj)

    def patch(
        self, resource: APIResource, name: str, patch: Any, namespace: str | None = None
    ) -> JSON:
        with self._lock:
            self._start("patch", resource, name)
            key = (resource.plural, namespace or "", name)
            current = self.objects.get(key)
            if current is None:
                raise NotFound(404, "NotFound", f"{name!r} not found")
            current.update(copy.deepcopy(patch))  # a flat merge patch is all we need
            current["metadata"]["resourceVersion"] = str(next(self._rv))
            return copy.deepcopy(current)

    def bump(self, resource: APIResource, name: str, namespace: str, **spec: Any) -> None:
        """Another writer changes the object: new resourceVersion, optional spec fields."""
        with self._lock:
            obj = self.objects[(resource.plural, namespace, name)]
            obj.setdefault("spec", {}).update(spec)
            obj["metadata"]["resourceVersion"] = str(next(self._rv))
