"""Objects and a recording client for pg-controller's unit tests.

``RecordingClient`` stands in for the five ``KubeClient`` verbs pg-controller uses (our own
boundary, ``PodGroupClient``): it records every call, answers ``get`` from ``objects`` and
raises queued errors (``fail``). Integration tests use the real API server.
"""

from __future__ import annotations

import copy
from collections import defaultdict, deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from volcano_py.api.resources import APIResource
from volcano_py.controllers.podgroup.interfaces import (
    CONTROLLER_UID_INDEX,
    Caches,
    Request,
    controller_uid_index,
)
from volcano_py.controllers.podgroup.sync import PodGroupSync
from volcano_py.kube.errors import ApiError, NotFound
from volcano_py.kube.events import FakeRecorder
from volcano_py.kube.store import Store, key_of

JSON = dict[str, Any]


@dataclass
class Call:
    verb: str
    plural: str
    name: str
    namespace: str | None
    body: Any = None
    patch_type: str | None = None


@dataclass
class RecordingClient:
    objects: dict[tuple[str, str, str], JSON] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    failures: defaultdict[str, deque[ApiError]] = field(default_factory=lambda: defaultdict(deque))

    def fail(self, verb: str, *errors: ApiError) -> None:
        self.failures[verb].extend(errors)

    def _record(self, call: Call) -> None:
        self.calls.append(call)
        if self.failures[call.verb]:
            raise self.failures[call.verb].popleft()

    def verbs(self) -> list[tuple[str, str, str]]:
        return [(c.verb, c.plural, c.name) for c in self.calls]

    def get(self, resource: APIResource, name: str, namespace: str | None = None) -> JSON:
        self._record(Call("get", resource.plural, name, namespace))
        try:
            return copy.deepcopy(self.objects[(resource.plural, namespace or "", name)])
        except KeyError:
            raise NotFound(404, "NotFound", f"{resource.plural} {name!r} not found") from None

    def create(self, resource: APIResource, body: JSON, namespace: str | None = None) -> JSON:
        self._record(Call("create", resource.plural, body["metadata"]["name"], namespace, body))
        return body

    def update(self, resource: APIResource, body: JSON) -> JSON:
        meta = body["metadata"]
        self._record(Call("update", resource.plural, meta["name"], meta.get("namespace"), body))
        return body

    def patch(
        self,
        resource: APIResource,
        name: str,
        patch: Any,
        namespace: str | None = None,
        *,
        patch_type: str = "merge",
    ) -> JSON:
        self._record(Call("patch", resource.plural, name, namespace, patch, patch_type))
        return {}

    def delete(self, resource: APIResource, name: str, namespace: str | None = None) -> JSON:
        self._record(Call("delete", resource.plural, name, namespace))
        return {}


def store_of(*objects: Mapping[str, Any], pods: bool = False) -> Store:
    store = Store({CONTROLLER_UID_INDEX: controller_uid_index} if pods else None)
    for obj in objects:
        store.put(key_of(dict(obj)), dict(obj))
    return store


@dataclass
class Harness:
    client: RecordingClient
    recorder: FakeRecorder
    sync: PodGroupSync
    queued: list[Request]


def harness(
    *,
    pods: tuple[JSON, ...] = (),
    podgroups: tuple[JSON, ...] = (),
    replicasets: tuple[JSON, ...] = (),
    statefulsets: tuple[JSON, ...] = (),
    scheduler_names: tuple[str, ...] = ("volcano",),
    inherit_owner_annotations: bool = True,
) -> Harness:
    client = RecordingClient()
    recorder = FakeRecorder()
    queued: list[Request] = []
    caches = Caches(
        store_of(*pods, pods=True),
        store_of(*podgroups),
        store_of(*replicasets),
        store_of(*statefulsets),
    )
    sync = PodGroupSync(
        client,
        caches,
        recorder,
        scheduler_names=scheduler_names,
        inherit_owner_annotations=inherit_owner_annotations,
        enqueue=queued.append,
    )
    return Harness(client, recorder, sync, queued)


def pod(
    name: str,
    *,
    namespace: str = "ns",
    uid: str | None = None,
    scheduler: str = "volcano",
    annotations: Mapping[str, str] | None = None,
    labels: Mapping[str, str] | None = None,
    owner: Mapping[str, Any] | None = None,
    requests: Mapping[str, str] | None = None,
    limits: Mapping[str, str] | None = None,
    spec: Mapping[str, Any] | None = None,
    resource_version: str = "10",
) -> JSON:
    resources: JSON = {}
    if requests is not None:
        resources["requests"] = dict(requests)
    if limits is not None:
        resources["limits"] = dict(limits)
    body: JSON = {
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": uid or f"uid-{name}",
            "resourceVersion": resource_version,
            "annotations": dict(annotations or {}),
            "labels": dict(labels or {}),
        },
        "spec": {
            "schedulerName": scheduler,
            "containers": [{"name": "main", "resources": resources}],
            **(spec or {}),
        },
        "status": {"phase": "Pending"},
    }
    if owner is not None:
        body["metadata"]["ownerReferences"] = [owner_ref(owner)]
    return body


def owner_ref(owner: Mapping[str, Any], *, controller: bool = True) -> JSON:
    return {
        "apiVersion": owner.get("apiVersion", "apps/v1"),
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": controller,
        "blockOwnerDeletion": True,
    }


def workload(
    kind: str,
    name: str,
    *,
    replicas: int = 1,
    namespace: str = "ns",
    uid: str | None = None,
    annotations: Mapping[str, str] | None = None,
    update_revision: str | None = None,
) -> JSON:
    body: JSON = {
        "apiVersion": "apps/v1" if kind != "Job" else "batch/v1",
        "kind": kind,
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": uid or f"uid-{name}",
            "annotations": dict(annotations or {}),
        },
        "spec": {"replicas": replicas},
        "status": {},
    }
    if update_revision is not None:
        body["status"]["updateRevision"] = update_revision
    return body
