"""Snapshot arguments and loading shared by the offline scheduler commands.

``simulate`` and ``explain`` take the same ``--cluster``/``--scheduler-conf``/
``--scheduler-name``/``--implicit-podgroups`` and build a ``Simulator`` the same way
(errors to stderr, exit 2).

Not a subcommand itself (it is not listed in ``COMMANDS``).
"""

from __future__ import annotations

import argparse
import sys

from volcano_py.api import JSON
from volcano_py.commands.argtypes import boolean
from volcano_py.controllers.podgroup.implicit import implicit_podgroup
from volcano_py.scheduler.framework.arguments import ConfError
from volcano_py.scheduler.framework.registry import load_conf
from volcano_py.scheduler.scheduler import builtin_registries
from volcano_py.scheduler.simulator import (
    Simulator,
    SnapshotError,
    load_objects,
    load_scheduler_conf,
)


def add_snapshot_arguments(parser: argparse.ArgumentParser, *, live: bool = False) -> None:
    """``--cluster``, ``--scheduler-conf`` and ``--scheduler-name``.

    ``live``: ``--cluster`` is optional; without it the command reads the cluster
    (``--kubeconfig``, ``--api-wait``, added by the command).
    """
    parser.add_argument(
        "--cluster",
        required=not live,
        metavar="FILE",
        help="cluster snapshot" + (" (default: the live cluster)" if live else ""),
    )
    parser.add_argument("--scheduler-conf", metavar="FILE", help="volcano-scheduler.conf")
    parser.add_argument("--scheduler-name", default="volcano", help="spec.schedulerName served")
    parser.add_argument(
        "--implicit-podgroups",
        type=boolean,
        default=True,
        metavar="BOOL",
        help="schedule bare pods without a PodGroup as the manager does (false: they wait "
        "for one, as with Volcano)",
    )


def load_simulator(
    args: argparse.Namespace,
    objects: list[JSON] | None = None,
    conf_text: str | None = None,
    workloads: bool = False,
) -> Simulator | None:
    """The simulator over ``objects`` (else ``--cluster``'s), or None after saying why not.

    The conf: ``--scheduler-conf``, else ``conf_text`` (a live cluster's ConfigMap), else the
    built-in tiers. ``workloads``: the cluster serves Workloads (``Simulator``).
    """
    try:
        if objects is None:
            objects = load_objects(args.cluster)
        if conf_text is not None and args.scheduler_conf is None:
            conf = load_conf(conf_text, *builtin_registries())
        else:
            conf = load_scheduler_conf(args.scheduler_conf)
        implicit = implicit_podgroup if args.implicit_podgroups else None
        return Simulator(objects, conf, args.scheduler_name, implicit, workloads=workloads)
    except (SnapshotError, ConfError) as e:
        sys.stderr.write(f"error: {e}\n")
        return None
