"""``volcano-py validate FILE... [--existing FILE]``: lint HyperNode manifests without a cluster.

Runs, for every HyperNode in the files, exactly what a cluster running volcano-py would do
on create: the CRD's structural schema and CEL rules (what the API server checks), then the
webhook's checks (the ValidatingAdmissionPolicy rules, RE2 patterns, the tree). Files may be
YAML or JSON, hold several documents, or ``List`` objects; objects of other kinds are
skipped (``examples/`` mixes HyperNodes with workloads).

Tree checks see the HyperNodes of ``--existing`` (what is already in the cluster) plus each
object of the input that was allowed before it, as if the files were applied in order.

Output, one line per HyperNode: ``OK <name>`` or ``DENIED <name>: <message>``, followed by
``WARNING <name>: <warning>`` lines. Exit 0 when everything is allowed, 1 when something is
denied, 2 when a file cannot be read or parsed (the message names the file and line).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from webhooks.hypernodes.tree import StaticLister
from webhooks.hypernodes.validator import HyperNodeValidator

KIND = "HyperNode"
API_GROUP = "topology.volcano.sh/"
NO_NAME = "metadata.name: Required value: name or generateName is required"


class InputError(Exception):
    """A file that cannot be read or parsed; the message names the file and line."""


@dataclass(frozen=True, slots=True)
class Document:
    """One object from a file, with where it starts."""

    obj: dict[str, Any]
    path: str
    line: int


def add_parser(subparsers: Any) -> None:
    """Register ``validate``."""
    parser = subparsers.add_parser(
        "validate",
        help="check HyperNode manifests the way the cluster's admission would",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="YAML/JSON manifests ('-': stdin)")
    parser.add_argument(
        "--existing",
        action="append",
        default=[],
        metavar="FILE",
        help="HyperNodes already in the cluster, for the tree checks (repeatable)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Validate every HyperNode in ``args.files``; see the module docstring for exit codes."""
    try:
        existing = [d.obj for f in args.existing for d in read_documents(f) if is_hypernode(d.obj)]
        documents = [d for f in args.files for d in read_documents(f)]
    except InputError as e:
        sys.stderr.write(f"error: {e}\n")
        return 2
    lines, denied = validate_documents(documents, existing)
    sys.stdout.write("".join(line + "\n" for line in lines))
    return 1 if denied else 0


def validate_documents(
    documents: list[Document], existing: list[dict[str, Any]]
) -> tuple[list[str], bool]:
    """The output lines and whether anything was denied."""
    lister = StaticLister(existing)
    validator = HyperNodeValidator(lister)
    lines: list[str] = []
    any_denied = False
    for doc in documents:
        if not is_hypernode(doc.obj):
            continue
        name = _name(doc.obj)
        if not name:
            lines.append(f"DENIED {doc.path}:{doc.line}: {NO_NAME}")
            any_denied = True
            continue
        verdict = validator.validate(doc.obj)
        if verdict.allowed:
            lines.append(f"OK {name}")
            lister.put(doc.obj)
        else:
            lines.append(f"DENIED {name}: {verdict.message}")
            any_denied = True
        lines += [f"WARNING {name}: {w}" for w in verdict.warnings]
    return lines, any_denied


def is_hypernode(obj: Any) -> bool:
    """A ``topology.volcano.sh`` HyperNode object."""
    return (
        isinstance(obj, dict)
        and obj.get("kind") == KIND
        and str(obj.get("apiVersion", "")).startswith(API_GROUP)
    )


def read_documents(path: str) -> list[Document]:
    """Every object in ``path`` (``-`` = stdin), Lists flattened; raises ``InputError``."""
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: cannot read: {e}") from e
    return list(_documents(text, path))


def _documents(text: str, path: str) -> Iterator[Document]:
    loader = yaml.SafeLoader(text)
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            line = node.start_mark.line + 1
            obj = loader.construct_document(node)
            if obj is None:
                continue
            if not isinstance(obj, dict):
                raise InputError(
                    f"{path}:{line}: a document must be an object, got {type(obj).__name__}"
                )
            yield from _flatten(obj, path, line)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else path
        problem = getattr(e, "problem", None) or str(e)
        raise InputError(f"{where}: invalid YAML/JSON: {problem}") from e
    finally:
        loader.dispose()


def _flatten(obj: dict[str, Any], path: str, line: int) -> Iterator[Document]:
    kind = obj.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and "items" in obj:
        items = obj.get("items") or []
        if not isinstance(items, list):
            raise InputError(f"{path}:{line}: {kind}.items must be a list")
        for item in items:
            if not isinstance(item, dict):
                raise InputError(f"{path}:{line}: {kind}.items holds a non-object")
            yield from _flatten(item, path, line)
        return
    yield Document(obj, path, line)


def _name(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) else ""
