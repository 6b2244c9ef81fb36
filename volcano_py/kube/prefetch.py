"""A head start for the informers: their first lists, fetched while the process starts.

``volcano-py manager``'s master process imports the product (~0.3 s) before gunicorn forks
the worker that caches the cluster, and the worker then listed every resource itself
(0.25 s at 500 nodes, 1.1 s at 5,000), so the lists waited for the imports and the first
bind for both. ``ListPrefetch`` lists on threads of the master *while* it imports: the
requests wait on the API server, not on the GIL. The worker inherits the results through
the fork, and each cluster-wide informer of those resources starts from its list
(``SharedInformerFactory(head_start=...)``) and watches from the list's resourceVersion, so
a change made after the list arrives as a watch event, exactly as after the informer's own
list (and an expired resourceVersion re-lists, 410 Gone, as always).

The rules that keep it safe:

- **Best effort.** A list that fails (the API server not up yet, a CRD not installed, RBAC)
  is simply absent and its informer lists for itself, with its own retries and messages.
  The failure is logged at debug level only: the informer's own attempt says what is wrong.
- **Before the fork.** ``wait`` joins every thread before gunicorn forks (threads do not
  survive ``fork``; a thread mid-request would leave its locks held in the child), and then
  waits until the system has ended them too: a joined thread may still be running C
  libraries' exit handlers under their locks (``runtime.threads_exited``).
- **Once.** ``take`` hands a list out and forgets it; the master calls ``drop`` right after
  it spawned the first worker, so a worker gunicorn restarts later lists afresh, and the
  master keeps no copy of the cluster (its memory goes back with the objects).

Objects go through the resource's default transform (``kube.transforms``) as their page
lands, as in the informer, so the master holds them slimmed, never whole.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable

from volcano_py.api.resources import APIResource
from volcano_py.kube.client import KubeClient
from volcano_py.kube.informer import Listed, list_objects
from volcano_py.kube.runtime import threads_exited
from volcano_py.kube.transforms import default_transform

log = logging.getLogger(__name__)

# how long ``wait`` gives joined threads to end in the system before the fork, at most
EXIT_WAIT_S = 5.0


class ListPrefetch:
    """Cluster-wide lists of ``resources``, fetched on threads; see the module docstring."""

    def __init__(self, connect: Callable[[], KubeClient], resources: Iterable[APIResource]) -> None:
        self._connect = connect
        self._resources = tuple(resources)
        self._lists: dict[APIResource, Listed] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._native_ids: list[int] = []  # every thread's, for ``threads_exited``
        self._closed = False  # after drop(): a list that lands late is not kept
        self.seconds = 0.0  # how long the lists took (start to the last one's end)

    def start(self) -> None:
        """Start listing; returns at once."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="prefetch", daemon=True)
            self._thread.start()
            self._note_native_id(self._thread)

    def _note_native_id(self, thread: threading.Thread) -> None:
        if thread.native_id is not None:
            with self._lock:
                self._native_ids.append(thread.native_id)

    def wait(self, timeout: float) -> bool:
        """Wait for every list; False (and nothing to hand out) if ``timeout`` passed first."""
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                log.warning("prefetch: lists unfinished after %.1fs; the worker lists", timeout)
                self.drop()
                return False
            with self._lock:
                native_ids = list(self._native_ids)
            if not threads_exited(native_ids, EXIT_WAIT_S):
                log.warning("prefetch: threads joined but not ended in %.1fs", EXIT_WAIT_S)
        with self._lock:
            ready = sorted(r.plural for r in self._lists)
        log.info("prefetch: %s listed in %.2fs", ", ".join(ready) or "nothing", self.seconds)
        return True

    def take(self, resource: APIResource) -> Listed | None:
        """The list of ``resource`` (once; None when there is none)."""
        with self._lock:
            return self._lists.pop(resource, None)

    def drop(self) -> None:
        """Forget every list not handed out, and any that lands later."""
        with self._lock:
            self._closed = True
            self._lists.clear()

    def _run(self) -> None:
        started = time.monotonic()
        try:
            client = self._connect()
        except Exception as e:  # the command's own connect says what is wrong, and waits
            log.debug("prefetch: no client: %s", e)
            return
        threads = [
            threading.Thread(
                target=self._list,
                args=(client, resource),
                name=f"prefetch:{resource.plural}",
                daemon=True,
            )
            for resource in self._resources
        ]
        for thread in threads:
            thread.start()
            self._note_native_id(thread)
        for thread in threads:
            thread.join()
        client.close()
        self.seconds = time.monotonic() - started
        log.debug("prefetch: %d lists in %.3fs", len(self._lists), self.seconds)

    def _list(self, client: KubeClient, resource: APIResource) -> None:
        try:
            listed = list_objects(client, resource, default_transform(resource))
        except Exception as e:  # best effort: the informer lists and reports for itself
            log.debug("prefetch: %s: %s", resource.plural, e)
            return
        with self._lock:
            if not self._closed:
                self._lists[resource] = listed
