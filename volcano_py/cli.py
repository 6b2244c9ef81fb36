"""The ``volcano-py`` command line.

The parser is assembled from ``volcano_py.commands``: each subcommand lives in its own module
with an ``add_parser(subparsers)`` function and appears here as soon as that module exists.
Exit codes: 0 success, 1 the command's own "no" (e.g. a denied HyperNode) or a cluster that
does not answer, 2 bad usage or unreadable input (argparse's message for a bad flag, one
``error:`` line naming the file or kubeconfig otherwise), 130 interrupted. Bad input never
ends in a traceback: a handler raises ``CommandError`` and ``main`` prints its message.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from collections.abc import Sequence

from volcano_py import __version__
from volcano_py.commands import COMMANDS
from volcano_py.commands.argtypes import plain_text
from volcano_py.commands.cluster_access import CommandError


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """Build the top-level parser with every available subcommand registered.

    ``only``: register that subcommand alone (``main`` does when the command line names
    one), so a command imports its own modules and not every other command's: the
    manager's lists start while it imports the rest (``commands/manager.py``).
    """
    parser = argparse.ArgumentParser(
        prog="volcano-py",
        description=(
            "Volcano's network-topology-aware gang scheduling for Kubernetes: HyperNode "
            "admission, the hypernode and podgroup controllers and an embedded scheduler, "
            "in one process."
        ),
    )
    parser.add_argument("--version", action="version", version=f"volcano-py {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        if only is not None and name != only:
            continue
        module_name = f"volcano_py.commands.{name}"
        if importlib.util.find_spec(module_name) is None:
            continue
        importlib.import_module(module_name).add_parser(subparsers)
    for sub in subparsers.choices.values():  # module docstrings are reST; --help is plain text
        sub.description = plain_text(sub.description)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the process exit code."""
    words = list(sys.argv[1:] if argv is None else argv)
    named = words[0] if words and words[0] in COMMANDS else None
    parser = build_parser(named)
    args = parser.parse_args(words)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        result: int = handler(args)
    except CommandError as e:
        sys.stderr.write(f"volcano-py {args.command}: error: {e}\n")
        return e.exit_code
    except KeyboardInterrupt:
        sys.stderr.write(f"volcano-py {args.command}: interrupted\n")
        return 130
    return result
