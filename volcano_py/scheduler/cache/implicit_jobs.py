"""Implicit jobs: bare pods scheduled with a PodGroup that lives only in the scheduler's cache.

The manager hands the cache a *classifier* (``controllers/podgroup/implicit.py``): for a pod
of ours with no group name it returns the PodGroup pg-controller would have created, when
that PodGroup would be a plain gang of one, and None otherwise. Such a pod is not given a
PodGroup object (the pg-controller uses the same classifier and leaves it alone); the cache
keeps the returned body under the name pg-controller would use, ``podgroup-<pod uid>``
(``podgroup-<pod name>`` for a pod without a uid: offline inputs), and the pod joins it as
its one task. From there it is a job like any other: enqueued against its
queue, allocated, preempted, counted in its queue's status and shown in the view.

What differs: no API object, so nothing writes it. The job updater (``job_updater.py``)
hands the status it would have written to ``SchedulerCache.keep_implicit_status`` instead
(the phase a later cycle reads is the one the last cycle decided), and PodGroup Events are
not recorded for it (the pod gets the unschedulable condition and Event, as a plain pod does
from kube-scheduler). The job is forgotten when its pod is deleted or joins a real group. A
real PodGroup of the same name (made before the flag was on, or by hand) replaces the cached
one.

``ImplicitJobs`` holds which cached PodGroups are implicit, and owns that set: the cache
asks it (``job_of``, ``__contains__``) and tells it (``replaced``, ``forget``) under its lock.
Without a classifier (Volcano's behaviour) it makes none.
"""

from __future__ import annotations

from collections.abc import Callable

from volcano_py.api import JSON
from volcano_py.api.constants import PODGROUP_NAME_PREFIX, PodGroupPhase

Classifier = Callable[[JSON], JSON | None]


class ImplicitJobs:
    """Which of the cache's PodGroups exist only in the cache (module doc)."""

    __slots__ = ("_keys", "classify")

    def __init__(self, classify: Classifier | None) -> None:
        self.classify = classify
        self._keys: set[str] = set()

    def __contains__(self, key: object) -> bool:
        """Whether the PodGroup ``key`` exists only in the cache."""
        return key in self._keys

    def replaced(self, key: str) -> None:
        """A real PodGroup named ``key`` arrived: it replaces the cache's own."""
        self._keys.discard(key)

    def forget(self, key: str) -> bool:
        """The implicit job ``key`` lost its pod; whether it was one."""
        if key not in self._keys:
            return False
        self._keys.discard(key)
        return True

    def job_of(self, pod: JSON, bound: bool, podgroups: dict[str, JSON]) -> str:
        """The job key for a pod of ours without a group name ("" when it gets none).

        Adds the implicit PodGroup to ``podgroups`` the first time: ``Running`` when the pod
        is already bound (a restart), else ``Pending``.
        """
        if self.classify is None:
            return ""
        meta = pod.get("metadata") or {}
        name = f"{PODGROUP_NAME_PREFIX}{meta.get('uid') or meta.get('name', '')}"
        key = f"{meta.get('namespace', '')}/{name}"
        if key in self._keys:
            return key
        body = self.classify(pod)
        if body is None:
            return ""
        if key in podgroups:
            return key  # a real PodGroup of that name: the pod is its task
        phase = PodGroupPhase.RUNNING if bound else PodGroupPhase.PENDING
        metadata = dict(body.get("metadata") or {}, name=name)
        podgroups[key] = dict(body, metadata=metadata, status={"phase": str(phase)})
        self._keys.add(key)
        return key
