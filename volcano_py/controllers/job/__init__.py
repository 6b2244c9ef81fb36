"""``job-controller``: Volcano Jobs (vcjobs) -> a PodGroup and ``<job>-<task>-<index>`` pods.

``controller.py`` wires informers to a queue, ``sync.py`` reconciles one request,
``state.py`` is the phase machine, ``policies.py`` maps events to actions, ``builder.py``
builds the PodGroup and pods. See ``docs/vcjob.md`` for the user's view.
"""

from volcano_py.controllers.job.controller import JobController

__all__ = ["JobController"]
