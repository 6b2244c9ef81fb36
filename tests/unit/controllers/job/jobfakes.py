"""Objects and a recording client for job-controller's unit tests.

``RecordingClient`` stands in for the three ``KubeClient`` verbs the job controller uses
(our own boundary, ``JobClient``): it records every call, gives written objects a new
resourceVersion and raises queued errors. Integration tests use the real API server.
"""

from __future__ import annotations

import copy
import itertools
from collections import defaultdict, deque
from dataclasses import dataclass, field
from typing import Any

import yaml

from volcano_py.api.resources import APIResource
from volcano_py.api.vcjob import JobView
from volcano_py.controllers.job.builder import build_podgroup
from volcano_py.controllers.job.interfaces import (
    JOB_UID_INDEX,
    Caches,
    Request,
    job_uid_index,
)
from volcano_py.controllers.job.sync import JobSync
from volcano_py.kube.clock import FakeClock
from volcano_py.kube.errors import AlreadyExists, ApiError, NotFound
from volcano_py.kube.events import FakeRecorder
from volcano_py.kube.store import Store, key_of

JSON = dict[str, Any]
_VERSIONS = itertools.count(1000)


@dataclass
class Call:
    verb: str
    plural: str
    name: str
    body: Any = None
    subresource: str | None = None


@dataclass
class RecordingClient:
    calls: list[Call] = field(default_factory=list)
    failures: defaultdict[str, deque[ApiError]] = field(default_factory=lambda: defaultdict(deque))
    # objects that exist on the "server" (plural, name) -> body: plugins' objects created
    # here, or put by a test; creating one of them again is AlreadyExists
    objects: dict[tuple[str, str], JSON] = field(default_factory=dict)

    def fail(self, verb: str, *errors: ApiError) -> None:
        self.failures[verb].extend(errors)

    def _record(self, call: Call) -> None:
        self.calls.append(call)
        if self.failures[call.verb]:
            raise self.failures[call.verb].popleft()

    def verbs(self) -> list[tuple[str, str, str]]:
        return [(c.verb, c.plural + ("/" + c.subresource if c.subresource else ""), c.name)
                for c in self.calls]  # fmt: skip

    def of(self, verb: str, plural: str) -> list[Call]:
        return [c for c in self.calls if c.verb == verb and c.plural == plural]

    def get(self, resource: APIResource, name: str, namespace: str | None = None) -> JSON:
        self._record(Call("get", resource.plural, name))
        try:
            return copy.deepcopy(self.objects[(resource.plural, name)])
        except KeyError:
            raise NotFound(404, "NotFound", f"{resource.plural} {name!r} not found") from None

    def create(self, resource: APIResource, body: JSON, namespace: str | None = None) -> JSON:
        name = body["metadata"]["name"]
        self._record(Call("create", resource.plural, name, body))
        if resource.plural != "pods" and (resource.plural, name) in self.objects:
            raise AlreadyExists(409, "AlreadyExists", f"{resource.plural} {name!r} exists")
        out = copy.deepcopy(body)
        out["metadata"]["resourceVersion"] = str(next(_VERSIONS))
        out["metadata"].setdefault("uid", f"uid-{out['metadata']['name']}")
        out.setdefault("status", {"phase": "Pending"} if resource.plural == "pods" else {})
        if resource.plural != "pods":
            self.objects[(resource.plural, name)] = copy.deepcopy(out)
        return out

    def update(self, resource: APIResource, body: JSON, *, subresource: str | None = None) -> JSON:
        name = body["metadata"]["name"]
        self._record(Call("update", resource.plural, name, copy.deepcopy(body), subresource))
        out = copy.deepcopy(body)
        out["metadata"]["resourceVersion"] = str(next(_VERSIONS))
        if (resource.plural, name) in self.objects and subresource is None:
            self.objects[(resource.plural, name)] = copy.deepcopy(out)
        return out

    def delete(
        self,
        resource: APIResource,
        name: str,
        namespace: str | None = None,
        *,
        propagation_policy: str | None = None,
        preconditions: Any = None,
    ) -> JSON:
        self._record(Call("delete", resource.plural, name, preconditions))
        self.objects.pop((resource.plural, name), None)
        return {}


def load_job(text: str, *, uid: str = "uid-1", namespace: str = "ns") -> JSON:
    job: JSON = yaml.safe_load(text)
    job["metadata"].setdefault("namespace", namespace)
    job["metadata"]["uid"] = uid
    job["metadata"]["resourceVersion"] = "1"
    return job


def with_phase(job: JSON, phase: str, **status: Any) -> JSON:
    out = copy.deepcopy(job)
    out["status"] = {"state": {"phase": phase, "lastTransitionTime": "2026-01-01T00:00:00Z"},
                     **status}  # fmt: skip
    return out


def podgroup_for(job: JSON, phase: str) -> JSON:
    """The PodGroup the controller builds for ``job``, as the scheduler left it in ``phase``."""
    pg = build_podgroup(job, JobView.from_dict(job))
    pg["metadata"]["resourceVersion"] = "5"
    pg["status"] = {"phase": phase}
    return pg


def job_pod(
    job: JSON,
    task: str,
    ix: int,
    phase: str,
    *,
    uid: str | None = None,
    version: int = 0,
    deleting: bool = False,
    exit_code: int | None = None,
) -> JSON:
    meta = job["metadata"]
    name = f"{meta['name']}-{task}-{ix}"
    pod: JSON = {
        "metadata": {
            "name": name, "namespace": meta["namespace"], "uid": f"pod-{name}",
            "resourceVersion": "7",
            "annotations": {"volcano.sh/task-spec": task, "volcano.sh/job-name": meta["name"],
                            "volcano.sh/job-version": str(version)},
            "labels": {"volcano.sh/task-spec": task},
            "ownerReferences": [{"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                                 "name": meta["name"], "uid": uid or meta["uid"],
                                 "controller": True}],
        },
        "spec": {},
        "status": {"phase": phase},
    }  # fmt: skip
    if deleting:
        pod["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    if exit_code is not None:
        pod["status"]["containerStatuses"] = [{"state": {"terminated": {"exitCode": exit_code}}}]
    return pod


@dataclass
class Harness:
    client: RecordingClient
    recorder: FakeRecorder
    sync: JobSync
    delayed: list[tuple[Request, float]]
    caches: Caches

    def run(self, key: str = "ns/job", **request: Any) -> None:
        self.sync.sync(Request(key, **request))

    def status_writes(self) -> list[JSON]:
        return [c.body["status"] for c in self.client.of("update", "jobs")]

    def reasons(self) -> list[str]:
        return [reason for _, reason, _ in self.recorder.events]


def harness(
    *,
    jobs: tuple[JSON, ...] = (),
    pods: tuple[JSON, ...] = (),
    podgroups: tuple[JSON, ...] = (),
    clock: FakeClock | None = None,
) -> Harness:
    def store(objs: tuple[JSON, ...], indexed: bool = False) -> Store:
        s = Store({JOB_UID_INDEX: job_uid_index} if indexed else None)
        for obj in objs:
            s.put(key_of(obj), copy.deepcopy(obj))
        return s

    client = RecordingClient()
    recorder = FakeRecorder()
    delayed: list[tuple[Request, float]] = []
    caches = Caches(store(jobs), store(pods, indexed=True), store(podgroups))
    sync = JobSync(client, caches, recorder,
                   enqueue_after=lambda r, d: delayed.append((r, d)), clock=clock,
                   create_threads=1)  # fmt: skip
    return Harness(client, recorder, sync, delayed, caches)
