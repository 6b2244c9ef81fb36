"""``volcano-py discover --config FILE --objects FILE [-o yaml|json]``: run discovery once.

Runs every enabled discoverer of a ``volcano-controller.conf`` document (``--config``: the
document itself, or the whole ConfigMap holding it) once, over the Nodes, Secrets and
existing HyperNodes in ``--objects`` (YAML or JSON, several documents or ``List`` objects;
other kinds are ignored), and prints the HyperNodes they produce as a ``List``, each
labelled ``volcano.sh/network-topology-source=<source>`` exactly as the controller would
create it. Nothing is written to a cluster; a ``ufm`` source really calls its endpoint
(credentials come from the Secrets in ``--objects``). Existing HyperNodes let the ``label``
source reuse their names, as it does in the cluster.

Problems go to stderr, each naming the source or the config entry. Exit 0 when every
enabled source produced a result, 1 when a source or an entry failed (the other sources'
HyperNodes are still printed), 2 when a file cannot be read.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import yaml

from volcano_py.api import JSON
from volcano_py.api import resources as R
from volcano_py.api.meta import name_of, namespace_of
from volcano_py.api.safeload import CONFIG_LIMITS, FILE_LIMITS, LoadError, load_yaml, load_yaml_all
from volcano_py.commands.inputs import InputError, read_text
from volcano_py.controllers.hypernode.bodies import desired_body
from volcano_py.controllers.hypernode.config import (
    ConfigError,
    NetworkTopologyConfig,
    config_from_configmap,
    parse_config_text,
)
from volcano_py.controllers.hypernode.controller import register_builtin_discoverers
from volcano_py.controllers.hypernode.discovery import (
    DiscovererRegistry,
    DiscovererStartError,
    DiscoveryContext,
    DiscoveryResult,
)
from volcano_py.kube.errors import NotFound
from volcano_py.kube.store import Store

DEFAULT_TIMEOUT_S = 120.0


def add_parser(subparsers: Any) -> None:
    """Register ``discover``."""
    parser = subparsers.add_parser(
        "discover",
        help="run the configured HyperNode discoverers once and print what they find",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--config", required=True, metavar="FILE", help="volcano-controller.conf")
    parser.add_argument(
        "--objects", required=True, metavar="FILE", help="Nodes, Secrets, HyperNodes"
    )
    parser.add_argument("-o", "--output", choices=("yaml", "json"), default="yaml")
    parser.add_argument(
        "--timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
        help="how long to wait for each source's first result (default 120)",
    )  # fmt: skip
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Discover once; see the module docstring for the output and exit codes."""
    try:
        config = read_config(args.config)
        objects = read_objects(args.objects)
    except InputError as e:
        sys.stderr.write(f"error: {e}\n")
        return 2
    registry = DiscovererRegistry()
    register_builtin_discoverers(registry)
    hypernodes, problems = discover_once(config, objects, registry, timeout=args.timeout)
    for problem in problems:
        sys.stderr.write(f"error: {problem}\n")
    listing = {"apiVersion": "v1", "kind": "List", "items": hypernodes}
    if args.output == "json":
        sys.stdout.write(json.dumps(listing, indent=2) + "\n")
    else:
        sys.stdout.write(yaml.safe_dump(listing, sort_keys=False))
    return 1 if problems else 0


def read_config(path: str) -> NetworkTopologyConfig:
    """The configuration in ``path``: a ``volcano-controller.conf`` document or its ConfigMap."""
    text = read_text(path)
    try:
        document = load_yaml(text, path, CONFIG_LIMITS)
        if isinstance(document, Mapping) and document.get("kind") == "ConfigMap":
            return config_from_configmap(document, default_namespace=namespace_of(document))
        return parse_config_text(text)
    except LoadError as e:
        raise InputError(str(e)) from None
    except ConfigError as e:
        raise InputError(f"{path}: {e}") from None


def read_objects(path: str) -> list[JSON]:
    """Every object in ``path`` (``List`` objects flattened)."""
    text = read_text(path)
    try:
        documents = load_yaml_all(text, path, FILE_LIMITS)
    except LoadError as e:
        raise InputError(str(e)) from None
    objects: list[JSON] = []
    for document in documents:
        if not isinstance(document, dict):
            continue
        if str(document.get("kind", "")).endswith("List") and isinstance(
            document.get("items"), list
        ):
            objects.extend(item for item in document["items"] if isinstance(item, dict))
        else:
            objects.append(document)
    return objects


class _FirstResult:
    """A ``ResultSink`` that keeps the first result and then asks the discoverer to stop."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.result: DiscoveryResult | None = None
        self.done = threading.Event()

    def _keep(self, result: DiscoveryResult) -> bool:
        if self.result is not None:
            return False
        self.result = result
        self.done.set()
        return True

    def submit(self, hypernodes: Sequence[JSON], explained: Collection[str] = ()) -> bool:
        return self._keep(DiscoveryResult(self.source, tuple(hypernodes)))

    def fail(self, reason: str) -> bool:
        return self._keep(DiscoveryResult(self.source, error=reason))

    @property
    def stopped(self) -> bool:
        return self.result is not None


def discover_once(
    config: NetworkTopologyConfig,
    objects: list[JSON],
    registry: DiscovererRegistry,
    *,
    timeout: float = DEFAULT_TIMEOUT_S,
) -> tuple[list[JSON], list[str]]:
    """The labelled HyperNodes of every enabled source, and the problems, in source order."""
    stores = {R.NODES.kind: Store(), R.HYPERNODES.kind: Store()}
    secrets: dict[tuple[str, str], JSON] = {}
    for obj in objects:
        kind = obj.get("kind")
        if kind in stores and name_of(obj):
            stores[kind].put(name_of(obj), obj)
        elif kind == R.SECRETS.kind and name_of(obj):
            secrets[(namespace_of(obj) or "default", name_of(obj))] = obj

    def get_secret(namespace: str, name: str) -> JSON:
        try:
            return secrets[(namespace, name)]
        except KeyError:
            raise NotFound(404, "NotFound", f"secrets {name!r} not found") from None

    problems = [problem.message for problem in config.problems]
    context = DiscoveryContext(
        nodes=stores[R.NODES.kind],
        hypernodes=stores[R.HYPERNODES.kind],
        get_secret=get_secret,
        report=problems.append,
    )
    hypernodes: list[JSON] = []
    for entry in sorted(config.enabled().values(), key=lambda c: c.index):
        sink = _FirstResult(entry.source)
        try:
            discoverer = registry.create(entry, context)
            discoverer.start(sink)
        except (ConfigError, DiscovererStartError) as e:
            problems.append(f"{entry.entry}: {e}")
            continue
        try:
            finished = sink.done.wait(timeout)
        finally:
            discoverer.stop()
        result = sink.result
        if not finished or result is None:
            problems.append(f"{entry.entry}: no result within {timeout:g}s")
        elif not result.ok:
            problems.append(f"source {entry.source}: {result.error}")
        else:
            hypernodes.extend(desired_body(h, entry.source) for h in result.hypernodes)
    return hypernodes, problems
