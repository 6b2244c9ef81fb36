"""``job-controller``: Volcano Jobs (vcjobs) -> a PodGroup and ``<job>-<task>-<index>`` pods.

``controller.py`` wires informers to a queue; ``sync.py`` reconciles one request by running
one step: ``sync_step.py`` (PodGroup, pods, status), ``kill_step.py`` (delete pods),
``plugin_steps.py``, ``commands.py`` and ``ttl.py``, each a function of the ``JobContext``
(``context.py``) whose state lives in ``writer.py`` (Job status) and ``podwork.py`` (pod
creates in slow-start batches, deletes of owned pods). ``state.py`` is the phase machine,
``policies.py`` maps events to actions, ``builder.py`` builds the PodGroup and pods. See
``docs/vcjob.md`` for the user's view.
"""

from volcano_py.controllers.job.controller import JobController

__all__ = ["JobController"]
