"""One module per ``volcano-py`` subcommand.

Each module defines ``add_parser(subparsers)`` which adds its parser and sets
``handler=<function(args) -> int>`` as a default. ``volcano_py.cli`` imports the modules
named in ``COMMANDS`` that exist, in that order, so a subcommand appears exactly when its
module lands.
"""

COMMANDS = ("manager", "webhook", "validate", "discover", "simulate", "explain", "tree")
