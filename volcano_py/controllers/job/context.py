"""What every step of the job controller's reconcile works with, built once by ``JobSync``.

The steps (``sync_step.py``, ``kill_step.py``, ``plugin_steps.py``, ``commands.py``,
``ttl.py``) are functions of a ``JobContext`` and the Job they act on; they keep no state of
their own. The state lives in two owners: ``JobStatusWriter`` (our writes of the Job) and
``PodWriter`` (the pods in flight), plus ``reported``, the PodGroup condition each Job was
last told about.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from volcano_py.controllers.job.interfaces import Caches, JobClient, Request
from volcano_py.controllers.job.podwork import PodWriter
from volcano_py.controllers.job.writer import JobStatusWriter
from volcano_py.kube.clock import Clock
from volcano_py.kube.events import Recorder


@dataclass(frozen=True, slots=True)
class JobContext:
    """The client, caches, recorder, clock and writers the steps share."""

    client: JobClient
    caches: Caches
    recorder: Recorder
    clock: Clock
    writer: JobStatusWriter
    pods: PodWriter
    enqueue_after: Callable[[Request, float], None]
    # job key -> the PodGroup condition last reported on the Job (PodGroupPending), so a
    # condition is one Event, not one per sync
    reported: dict[str, tuple[str, str, str]] = field(default_factory=dict)
