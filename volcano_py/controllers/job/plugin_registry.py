"""Job plugins by name: the ``PluginRegistry`` of job-controller (Volcano's plugin factory).

An object filled explicitly, iterated in name order; ``plugins_of(view)`` builds a Job's
plugins from ``spec.plugins`` (name -> Volcano flags) and names the ones volcano-py lacks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from volcano_py.api.vcjob import JobView
from volcano_py.controllers.job.frameworks import MpiPlugin, PytorchPlugin, TensorflowPlugin
from volcano_py.controllers.job.frameworks_more import HcclRankPlugin, RayPlugin
from volcano_py.controllers.job.plugins import EnvPlugin, JobPlugin, SshPlugin, SvcPlugin

PluginBuilder = Callable[[Sequence[str]], JobPlugin]

BUILDERS: dict[str, PluginBuilder] = {
    "env": lambda args: EnvPlugin(),
    "hcclrank": lambda args: HcclRankPlugin(tuple(args)),
    "mpi": lambda args: MpiPlugin(tuple(args)),
    "pytorch": lambda args: PytorchPlugin(tuple(args)),
    "ray": lambda args: RayPlugin(tuple(args)),
    "ssh": lambda args: SshPlugin(tuple(args)),
    "svc": lambda args: SvcPlugin(tuple(args)),
    "tensorflow": lambda args: TensorflowPlugin(tuple(args)),
}


def plugins_of(view: JobView) -> tuple[list[JobPlugin], list[str]]:
    """The job's plugins in name order, and the names volcano-py does not know."""
    known = [BUILDERS[n](view.plugins[n]) for n in sorted(view.plugins) if n in BUILDERS]
    return known, sorted(n for n in view.plugins if n not in BUILDERS)
