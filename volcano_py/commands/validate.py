"""``volcano-py validate FILE... [--existing FILE]``: lint HyperNode manifests without a cluster.

Volcano Jobs (``batch.volcano.sh/v1alpha1``) in the files are checked too, with the Job
webhook's create rules (``webhooks/jobs``) except the queue lookup.

Runs, for every HyperNode in the files, exactly what a cluster running volcano-py would do
on ``kubectl apply``: strict field validation (an unknown field such as ``spec.tierNmae`` is
refused, as kubectl does by default), the CRD's structural schema and CEL rules (what the API
server checks), then the webhook's checks (the ValidatingAdmissionPolicy rules, RE2
patterns, the tree). Files may be
YAML or JSON, hold several documents, or ``List`` objects; every document is checked.

Refused as the cluster would refuse them, with the file and line: a ``kind`` that is not
``HyperNode`` (``Hypernode``) or an ``apiVersion`` the CRD does not serve
(``topology.volcano.sh/v1beta1``), a document without ``apiVersion``/``kind``, a file with no
objects, and an object of another kind (``--ignore-other-kinds`` skips those instead, for files
that mix HyperNodes with workloads; a misspelt HyperNode is still refused).

Tree checks see the HyperNodes of ``--existing`` (what is already in the cluster) plus each
object of the input that was allowed before it, as if the files were applied in order.

Output, one line per HyperNode: ``OK <name>`` or ``DENIED <name>: <message>``, followed by
``WARNING <name>: <warning>`` lines; a document that is not a HyperNode at all is
``DENIED <file>:<line>: <message>``. Exit 0 when everything is allowed, 1 when something is
denied, 2 when a file cannot be read or parsed (the message names the file and line).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml

from volcano_py.api.safeload import FILE_LIMITS, BoundedLoader
from volcano_py.commands.inputs import InputError, read_text, yaml_problem
from volcano_py.commands.strictfields import unknown_fields
from webhooks.hypernodes.tree import StaticLister
from webhooks.hypernodes.validator import HyperNodeValidator
from webhooks.jobs.rules import plugin_warnings, validate_create

KIND = "HyperNode"
API_GROUP = "topology.volcano.sh/"
API_VERSION = API_GROUP + "v1alpha1"
VCJOB_API_VERSION = "batch.volcano.sh/v1alpha1"
NO_NAME = "metadata.name: Required value: name or generateName is required"


@dataclass(frozen=True, slots=True)
class Document:
    """One object from a file, with where it starts and the line of each top-level field."""

    obj: dict[str, Any]
    path: str
    line: int
    field_lines: dict[str, int] = field(default_factory=dict)

    def where(self, key: str | None = None) -> str:
        """``<file>:<line>`` of the document, or of its field ``key`` when it has one."""
        return f"{self.path}:{self.field_lines.get(key or '', self.line)}"


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
    parser.add_argument(
        "--ignore-other-kinds",
        action="store_true",
        help="skip objects of other kinds instead of refusing them (files mixing workloads)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Validate every HyperNode in ``args.files``; see the module docstring for exit codes."""
    try:
        existing = [
            d.obj
            for f in args.existing
            for d in read_documents(f, allow_empty=True)
            if is_hypernode(d.obj)
        ]
        documents = [d for f in args.files for d in read_documents(f)]
    except InputError as e:
        sys.stderr.write(f"error: {e}\n")
        return 2
    lines, denied = validate_documents(documents, existing, args.ignore_other_kinds)
    sys.stdout.write("".join(line + "\n" for line in lines))
    return 1 if denied else 0


def validate_documents(
    documents: list[Document], existing: list[dict[str, Any]], ignore_other_kinds: bool = False
) -> tuple[list[str], bool]:
    """The output lines and whether anything was denied."""
    lister = StaticLister(existing)
    validator = HyperNodeValidator(lister)
    lines: list[str] = []
    any_denied = False
    for doc in documents:
        if is_vcjob(doc.obj):
            job_lines, job_denied = validate_vcjob(doc)
            lines += job_lines
            any_denied |= job_denied
            continue
        if not is_hypernode(doc.obj):
            refusal = type_refusal(doc, ignore_other_kinds)
            if refusal:
                lines.append(f"DENIED {refusal}")
                any_denied = True
            continue
        name = _name(doc.obj)
        if not name:
            lines.append(f"DENIED {doc.path}:{doc.line}: {NO_NAME}")
            any_denied = True
            continue
        unknown = unknown_fields(doc.obj)
        if unknown:
            fields = ", ".join(f'unknown field "{f}"' for f in unknown)
            where = doc.where(unknown[0].split(".")[0].split("[")[0])
            lines.append(f"DENIED {name}: {where}: strict decoding error: {fields}")
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


def is_vcjob(obj: Any) -> bool:
    """A Volcano Job (``batch.volcano.sh/v1alpha1``): checked with the Job admission rules."""
    return (
        isinstance(obj, dict)
        and obj.get("kind") == "Job"
        and obj.get("apiVersion") == (VCJOB_API_VERSION)
    )


def validate_vcjob(doc: Document) -> tuple[list[str], bool]:
    """The Job webhook's create rules, offline (the queue is not looked up)."""
    name = _name(doc.obj) or f"{doc.path}:{doc.line}"
    problems = validate_create(doc.obj)
    if problems:
        return [f"DENIED {name}: {'; '.join(problems)}"], True
    return [f"OK {name}"] + [f"WARNING {name}: {w}" for w in plugin_warnings(doc.obj)], False


def is_hypernode(obj: Any) -> bool:
    """A ``topology.volcano.sh/v1alpha1`` HyperNode object (the one version the CRD serves)."""
    return (
        isinstance(obj, dict) and obj.get("kind") == KIND and obj.get("apiVersion") == API_VERSION
    )


def type_refusal(doc: Document, ignore_other_kinds: bool) -> str:
    """Why the cluster would not take ``doc`` as a HyperNode (``<file>:<line>: ...``), or ``""``.

    A document that looks meant as a HyperNode (its kind spelt any case, or the
    ``topology.volcano.sh`` group) is always refused; other kinds only without
    ``ignore_other_kinds``.
    """
    api_version, kind = doc.obj.get("apiVersion"), doc.obj.get("kind")
    for key, value in (("apiVersion", api_version), ("kind", kind)):
        if not value:
            return (
                f"{doc.where(key)}: {key}: Required value: a HyperNode has "
                f'"apiVersion: {API_VERSION}" and "kind: {KIND}"'
            )
        if not isinstance(value, str):
            return f"{doc.where(key)}: {key}: Invalid value: must be a string"
    api_version, kind = str(api_version), str(kind)
    no_match = f'no matches for kind "{kind}" in version "{api_version}"'
    if kind != KIND and (kind.lower() == KIND.lower() or api_version.startswith(API_GROUP)):
        hint = f'did you mean "{KIND}"?' if kind.lower() == KIND.lower() else f"served: {KIND}"
        return f'{doc.where("kind")}: kind: Invalid value: "{kind}": {no_match} ({hint})'
    if kind == KIND:
        return (
            f'{doc.where("apiVersion")}: apiVersion: Invalid value: "{api_version}": '
            f'{no_match} (HyperNode is served as "{API_VERSION}")'
        )
    if ignore_other_kinds:
        return ""
    return (
        f'{doc.where()}: {kind} "{_name(doc.obj)}" ({api_version}) is not a HyperNode '
        "(--ignore-other-kinds skips objects of other kinds)"
    )


def read_documents(path: str, allow_empty: bool = False) -> list[Document]:
    """Every object in ``path`` (``-`` = stdin), Lists flattened; raises ``InputError``.

    A file without any object is an error unless ``allow_empty`` (``kubectl apply`` says
    "no objects passed to apply").
    """
    documents = list(_documents(read_text(path), path))
    if not documents and not allow_empty:
        raise InputError(f"{path}:1: no objects in the file (expected HyperNode manifests)")
    return documents


def _documents(text: str, path: str) -> Iterator[Document]:
    loader = BoundedLoader(text, FILE_LIMITS)
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
            yield from _flatten(obj, node, path)
    except yaml.YAMLError as e:
        raise InputError(yaml_problem(path, e)) from e
    finally:
        loader.dispose()


def _flatten(obj: dict[str, Any], node: yaml.Node, path: str) -> Iterator[Document]:
    line = node.start_mark.line + 1
    fields = _field_nodes(node)
    kind = obj.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and "items" in obj:
        items = obj.get("items") or []
        if not isinstance(items, list):
            raise InputError(f"{path}:{line}: {kind}.items must be a list")
        _, item_nodes = fields.get("items", (node, node))
        children = item_nodes.value if isinstance(item_nodes, yaml.SequenceNode) else []
        for i, item in enumerate(items):
            child = children[i] if i < len(children) else node
            if not isinstance(item, dict):
                raise InputError(
                    f"{path}:{child.start_mark.line + 1}: {kind}.items[{i}] is not an object"
                )
            yield from _flatten(item, child, path)
        return
    lines = {key: k.start_mark.line + 1 for key, (k, _) in fields.items()}
    yield Document(obj, path, line, lines)


def _field_nodes(node: yaml.Node) -> dict[str, tuple[yaml.Node, yaml.Node]]:
    """The top-level fields of a mapping node: name -> (key node, value node)."""
    if not isinstance(node, yaml.MappingNode):
        return {}
    return {
        str(key.value): (key, value)
        for key, value in node.value
        if isinstance(key, yaml.ScalarNode)
    }


def _name(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) else ""
