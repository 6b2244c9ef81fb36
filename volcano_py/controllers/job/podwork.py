"""The job controller's pod writes: create missing pods in slow-start batches, delete owned ones.

``PodWriter`` is the only part of the job controller that creates or deletes pods. Its
promises:

- **Bounded by what exists.** The caller hands it the missing pods as a lazy iterator; it
  takes at most ``max_creates_per_sync`` of them per sync (Kubernetes' Job controller caps
  one sync at 500 the same way), so a task asking for 2^31 replicas costs a sync the pods
  that exist plus one batch, never a list of every pod the spec names.
- **Slow start.** Within a sync it creates in batches of 1, 2, 4, ... (Kubernetes'
  ``slowStartBatch``); a batch with a failure ends the sync's creates, so a template the API
  server rejects costs one request, not thousands.
- **Remembers its own writes until the informer has seen them** (Kubernetes' controller
  expectations). A created pod counts as Pending until the informer delivers any event for
  it (``observed``: add, update or delete), not until a sync happens to find it in the
  cache: a pod created and deleted between two syncs is seen as gone and created again,
  instead of counting as Pending forever (the stranded 12th pod of jobseq's "Restart job
  when job is unschedulable"). An expectation the informer never meets expires after
  ``CREATE_EXPECTATION_TTL_S`` on the injected clock. A deleted pod's disappearance is not
  an eviction (``deleted_by_us``). Both sets are per Job and hold at most the pods in flight.
- **Deletes only what the Job owns**: a pod whose controller owner reference is another
  object (or this name under another Job's uid) is never deleted, and every delete carries
  the pod's uid as a precondition, so a pod of the same name created since is never hit.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from volcano_py.api import JSON
from volcano_py.api import resources as R
from volcano_py.api.meta import annotations_of, controller_ref, name_of, namespace_of, uid_of
from volcano_py.api.vcjob import JOB_NAME_KEY, JobView, TaskSpec
from volcano_py.controllers.job.builder import build_pod
from volcano_py.controllers.job.interfaces import JobClient
from volcano_py.controllers.job.plugins import JobPlugin, PluginError
from volcano_py.kube.clock import Clock, RealClock
from volcano_py.kube.errors import AlreadyExists, Conflict, Forbidden, Invalid, NotFound

CREATE_THREADS = 16
# Kubernetes' Job controller: MaxPodCreateDeletePerSync and SlowStartInitialBatchSize.
MAX_CREATES_PER_SYNC = 500
SLOW_START_INITIAL_BATCH = 1
# Kubernetes' ExpectationsTimeout: an expectation the informer never meets is dropped.
CREATE_EXPECTATION_TTL_S = 300.0

Created = tuple[TaskSpec, JSON]


class PodWriter:
    """Creates and deletes a Job's pods; see the module docstring."""

    def __init__(
        self,
        client: JobClient,
        *,
        create_threads: int = CREATE_THREADS,
        max_creates_per_sync: int = MAX_CREATES_PER_SYNC,
        clock: Clock | None = None,
    ) -> None:
        self.client = client
        self.clock: Clock = clock or RealClock()
        self.create_threads = create_threads
        self.max_creates_per_sync = max(1, max_creates_per_sync)
        self._lock = threading.Lock()
        self._deleted: set[str] = set()  # uids of pods we deleted, until their delete is seen
        # job key -> {pod name: (uid, created at)} for pods we created, until observed
        self._created: dict[str, dict[str, tuple[str, float]]] = {}
        self._executor: ThreadPoolExecutor | None = None

    # --- what is in flight ---------------------------------------------------------------------

    def created_not_cached(self, job_key: str, cached: Mapping[str, Any]) -> dict[str, str]:
        """Pods (name -> uid) we created for ``job_key`` that the informer has not shown yet.

        ``cached`` (the Job's cached pods by name) also meets an expectation: the informer
        delivered that pod before its handler ran.
        """
        oldest = self.clock.now() - CREATE_EXPECTATION_TTL_S
        with self._lock:
            names = self._created.get(job_key)
            if not names:
                return {}
            for name in [n for n, (_, at) in names.items() if n in cached or at < oldest]:
                del names[name]
            if not names:
                del self._created[job_key]
            return {name: uid for name, (uid, _) in names.items()}

    def observed(self, pod: Mapping[str, Any]) -> None:
        """The informer delivered an event for ``pod``: a create expectation is met."""
        job = annotations_of(pod).get(JOB_NAME_KEY)
        if not job:
            return
        job_key = f"{namespace_of(pod)}/{job}"
        with self._lock:
            names = self._created.get(job_key)
            if names is not None and names.pop(name_of(pod), None) is not None and not names:
                del self._created[job_key]

    def deleted_by_us(self, pod: Mapping[str, Any]) -> bool:
        """Whether we deleted ``pod`` (its disappearance is then no eviction); forgets it."""
        uid = (pod.get("metadata") or {}).get("uid", "")
        with self._lock:
            if uid in self._deleted:
                self._deleted.discard(uid)
                return True
        return False

    def forget(self, job_key: str) -> None:
        """The Job is gone: drop the pods we remember creating for it."""
        with self._lock:
            self._created.pop(job_key, None)

    # --- creating ----------------------------------------------------------------------------

    def create(
        self,
        job: JSON,
        view: JobView,
        missing: Iterator[tuple[TaskSpec, int]],
        plugins: list[JobPlugin],
        errors: list[str],
    ) -> tuple[list[Created], bool]:
        """Create up to ``max_creates_per_sync`` of ``missing`` in slow-start batches.

        Returns the pods created and whether missing pods are left for another sync (the
        cap was reached; a failed batch is reported through ``errors`` instead).
        """

        def create_one(item: tuple[TaskSpec, int]) -> Created | None:
            task, ix = item
            body = build_pod(job, view, task, ix)
            try:
                for plugin in plugins:
                    plugin.on_pod_create(body, view)
                return task, self.client.create(R.PODS, body, view.namespace)
            except AlreadyExists:
                return None  # counted once the cache shows it
            except (Invalid, Forbidden, PluginError) as e:
                with self._lock:
                    errors.append(f"failed to create pod {body['metadata']['name']}: {e}")
                return None

        made: list[Created] = []
        budget, batch_size = self.max_creates_per_sync, SLOW_START_INITIAL_BATCH
        while budget > 0:
            batch = list(itertools.islice(missing, min(batch_size, budget)))
            if not batch:
                return made, False
            budget -= len(batch)
            failed_before = len(errors)
            if len(batch) > 1 and self.create_threads > 1:
                results = list(self._pool().map(create_one, batch))
            else:
                results = [create_one(item) for item in batch]
            made += [r for r in results if r is not None]
            self._remember_created(view, made)
            if len(errors) > failed_before:
                return made, False
            batch_size *= 2
        return made, next(missing, None) is not None

    def _remember_created(self, view: JobView, made: list[Created]) -> None:
        if not made:
            return
        now = self.clock.now()
        with self._lock:
            names = self._created.setdefault(f"{view.namespace}/{view.name}", {})
            names.update((name_of(body), (uid_of(body), now)) for _, body in made)

    def _pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(
                    self.create_threads, thread_name_prefix="controller:job-controller:create"
                )
            return self._executor

    def close(self) -> None:
        """Stop the pod-creating threads."""
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True)

    # --- deleting ----------------------------------------------------------------------------

    def delete(self, view: JobView, pod: Mapping[str, Any], errors: list[str]) -> bool:
        """Delete ``pod`` when the Job controls it; whether it is now going away."""
        owner = controller_ref(pod)
        if owner is None or owner.get("uid") != view.uid:
            return False  # never delete a pod this Job does not own
        return self.delete_created(view, name_of(pod), uid_of(pod), errors)

    def delete_created(self, view: JobView, name: str, uid: str, errors: list[str]) -> bool:
        """Delete the pod ``name`` only while it is the one with ``uid`` (ours)."""
        with self._lock:
            self._deleted.add(uid)
        try:
            self.client.delete(R.PODS, name, view.namespace, preconditions={"uid": uid})
        except (NotFound, Conflict):
            return True  # gone, or the name now belongs to a newer pod: ours is gone
        except (Invalid, Forbidden) as e:
            errors.append(f"failed to delete pod {name}: {e}")
            return False
        return True
