"""``volcano-py tree [--cluster FILE] [-o text|json|svg]``: draw the HyperNode tree.

From a snapshot file (Nodes, HyperNodes, Pods) or, without ``--cluster``, from the live
cluster (``--kubeconfig``). Per HyperNode: tier, tierName, parent, children, the real nodes
under it, node count, allocatable and free cpu / memory / GPUs; broken links (cycles, two
parents, a node in two HyperNodes) are flagged. JSON: ``{"ready", "errors", "hyperNodes":
{name: {"tier", "tierName", "parent", "children", "nodes", "nodeCount", "allocatable",
"free"}}}``. SVG: tiers as rows with usage bars, for a browser.
Exit 0; 2 when the input or the kubeconfig cannot be read; 1 when the API server does not
answer within ``--api-wait`` seconds (it is retried with backoff meanwhile, said on stderr).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import orjson

from volcano_py.api import JSON
from volcano_py.api.resources import HYPERNODES, NODES, PODS
from volcano_py.commands.cluster_access import CommandError, add_api_wait_argument, connect
from volcano_py.kube.errors import ApiError
from volcano_py.scheduler.cache import SchedulerCache
from volcano_py.scheduler.simulator import SnapshotError, fill_cache, load_objects
from volcano_py.scheduler.treesvg import render_svg
from volcano_py.scheduler.treeview import text_tree, tree_report


def add_parser(subparsers: Any) -> None:
    """Register ``tree``."""
    parser = subparsers.add_parser(
        "tree",
        help="draw the HyperNode tree with node counts and free resources",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--cluster", metavar="FILE", help="snapshot file (default: live cluster)")
    parser.add_argument("--kubeconfig", help="kubeconfig for the live cluster")
    add_api_wait_argument(parser)
    parser.add_argument("-o", "--output", choices=("text", "json", "svg"), default="text")
    parser.set_defaults(handler=run)


def live_objects(kubeconfig: str | None, api_wait: float) -> list[JSON]:
    """Nodes, HyperNodes and non-terminated pods from the cluster; ``CommandError`` if not."""
    client = connect(kubeconfig, api_wait, _say)
    objects: list[JSON] = []
    try:
        for resource, kind, selector in (
            (NODES, "Node", None),
            (HYPERNODES, "HyperNode", None),
            (PODS, "Pod", "status.phase!=Succeeded,status.phase!=Failed"),
        ):
            try:
                items = list(client.list_all(resource, field_selector=selector))
            except ApiError as e:
                raise CommandError(f"listing {resource.plural}: {e}") from e
            objects += [dict(item, kind=kind) for item in items]
    finally:
        client.close()
    return objects


def _say(message: str) -> None:
    sys.stderr.write(f"volcano-py tree: {message}\n")


def run(args: argparse.Namespace) -> int:
    """Print the tree."""
    try:
        if args.cluster:
            objects = load_objects(args.cluster)
        else:
            objects = live_objects(args.kubeconfig, args.api_wait)
        cache = SchedulerCache()
        fill_cache(cache, objects)
    except (SnapshotError, OSError) as e:
        sys.stderr.write(f"error: {e}\n")
        return 2
    report = tree_report(cache)
    if args.output == "json":
        sys.stdout.write(orjson.dumps(report, option=orjson.OPT_INDENT_2).decode() + "\n")
    elif args.output == "svg":
        sys.stdout.write(render_svg(report))
    else:
        sys.stdout.write(text_tree(report))
    return 0
