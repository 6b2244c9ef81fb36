"""Unit-test helpers for the hyperNode-controller: a fake API over an informer-like store.

``FakeApi`` is our own boundary stand-in: HyperNodes live in a ``Store`` that the code under
test reads as its cache (so the cache is always up to date, like an informer that has
caught up), and every verb is recorded in ``calls``. Merge patches follow RFC 7386 and honour
``metadata.resourceVersion`` like the API server; ``fail(verb, error)`` injects errors.
"""

from __future__ import annotations

import copy
import itertools
from collections import defaultdict, deque
from collections.abc import Mapping
from typing import Any

from tests.builders import exact as exact
from tests.builders import hypernode_body
from tests.builders import regex as regex
from volcano_py.api import resources as R
from volcano_py.kube.errors import AlreadyExists, ApiError, Conflict, NotFound
from volcano_py.kube.store import Store

JSON = dict[str, Any]
WRITE_VERBS = ("create", "patch", "delete")


def merge_patch(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


class FakeApi:
    def __init__(self, store: Store | None = None) -> None:
        self.store = store if store is not None else Store()
        self.secrets: dict[tuple[str, str], JSON] = {}
        self.calls: list[tuple[str, str, str | None]] = []  # (verb, name, subresource)
        self.failures: defaultdict[str, deque[ApiError]] = defaultdict(deque)
        self._rv = itertools.count(100)
        self._uid = itertools.count(1)

    # -- test helpers -----------------------------------------------------------------

    def fail(self, verb: str, *errors: ApiError) -> None:
        self.failures[verb].extend(errors)

    def writes(self) -> list[tuple[str, str, str | None]]:
        return [c for c in self.calls if c[0] in WRITE_VERBS]

    def put(self, obj: JSON) -> JSON:
        obj = copy.deepcopy(obj)
        meta = obj.setdefault("metadata", {})
        meta.setdefault("resourceVersion", str(next(self._rv)))
        meta.setdefault("uid", f"uid-{next(self._uid)}")
        self.store.put(meta["name"], obj)
        return obj

    def names(self) -> list[str]:
        return sorted(self.store.list_keys())

    def _start(self, verb: str, name: str, subresource: str | None = None) -> None:
        self.calls.append((verb, name, subresource))
        if self.failures[verb]:
            raise self.failures[verb].popleft()

    # -- the client verbs -------------------------------------------------------------

    def get(self, resource: R.APIResource, name: str, namespace: str | None = None) -> JSON:
        if resource == R.SECRETS:
            self._start("get", name)
            secret = self.secrets.get((namespace or "", name))
            if secret is None:
                raise NotFound(404, "NotFound", f"secrets {name!r} not found")
            return copy.deepcopy(secret)
        self._start("get", name)
        obj = self.store.get(name)
        if obj is None:
            raise NotFound(404, "NotFound", f"{resource.plural} {name!r} not found")
        return copy.deepcopy(obj)

    def create(self, resource: R.APIResource, body: JSON, namespace: str | None = None) -> JSON:
        name = body["metadata"]["name"]
        self._start("create", name)
        if name in self.store:
            raise AlreadyExists(409, "AlreadyExists", f"{name!r} already exists")
        obj = copy.deepcopy(body)
        obj["metadata"]["resourceVersion"] = str(next(self._rv))
        obj["metadata"]["uid"] = f"uid-{next(self._uid)}"
        self.store.put(name, obj)
        return copy.deepcopy(obj)

    def patch(
        self,
        resource: R.APIResource,
        name: str,
        patch: Any,
        namespace: str | None = None,
        *,
        patch_type: str = "merge",
        subresource: str | None = None,
    ) -> JSON:
        self._start("patch", name, subresource)
        current = self.store.get(name)
        if current is None:
            raise NotFound(404, "NotFound", f"{name!r} not found")
        want_rv = (patch.get("metadata") or {}).get("resourceVersion")
        if want_rv and want_rv != current["metadata"]["resourceVersion"]:
            raise Conflict(409, "Conflict", "the object has been modified")
        if subresource == "status":
            patch = {"status": patch.get("status")}  # the status endpoint ignores the rest
        elif "status" in patch:
            patch = {k: v for k, v in patch.items() if k != "status"}
        obj = merge_patch(current, patch)
        obj["metadata"]["resourceVersion"] = str(next(self._rv))
        self.store.put(name, obj)
        return copy.deepcopy(obj)

    def delete(
        self,
        resource: R.APIResource,
        name: str,
        namespace: str | None = None,
        *,
        propagation_policy: str | None = None,
        preconditions: Mapping[str, str] | None = None,
    ) -> JSON:
        self._start("delete", name)
        current = self.store.get(name)
        if current is None:
            raise NotFound(404, "NotFound", f"{name!r} not found")
        if preconditions and preconditions.get("uid") not in (None, current["metadata"]["uid"]):
            raise Conflict(409, "Conflict", "precondition failed: uid")
        self.store.remove(name)
        return {"kind": "Status", "status": "Success"}

    def bump(self, name: str, **labels: str) -> None:
        """Another writer changes the object (new resourceVersion, optional labels)."""
        obj = copy.deepcopy(self.store.get(name))
        assert obj is not None
        obj["metadata"].setdefault("labels", {}).update(labels)
        obj["metadata"]["resourceVersion"] = str(next(self._rv))
        self.store.put(name, obj)


def node(name: str, **labels: str) -> JSON:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}


def node_store(*nodes: JSON) -> Store:
    store = Store()
    for obj in nodes:
        store.put(obj["metadata"]["name"], obj)
    return store


hypernode = hypernode_body  # the name these tests use


def label_member(**match: str) -> JSON:
    return {"type": "Node", "selector": {"labelMatch": {"matchLabels": match}}}


def members_of(obj: Mapping[str, Any]) -> list[str]:
    return [m["selector"]["exactMatch"]["name"] for m in obj["spec"]["members"]]
