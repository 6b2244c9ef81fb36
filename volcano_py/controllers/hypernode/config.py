"""The discovery configuration: where it lives, its format, and how it is read.

The hyperNode-controller reads ``volcano-controller.conf`` from the ConfigMap
``<HELM_RELEASE_NAME or "volcano">-controller-configmap`` in ``<KUBE_POD_NAMESPACE or
"volcano-system">`` (Volcano's location and format, so a Volcano install's ConfigMap works
unchanged)::

    networkTopologyDiscovery:
      - source: ufm            # a registered discoverer name
        enabled: true
        interval: 10m          # a Go duration; default 1h
        credentials:
          secretRef: {name: ufm-credentials, namespace: volcano-system}
        config: {endpoint: https://ufm:443}
        maxDeletePercent: 50   # ours: hold back a round that would delete this share of
                               # the source's HyperNodes or more (default 50; 100: no limit)
        deletionGracePeriod: 1m   # ours: a HyperNode the source stops reporting is deleted
                                  # only once it has been missing this long (default 1m)
                                  # and a source removed or disabled here has its
                                  # HyperNodes retired after it (retire.py)
        force: false           # ours: apply a configuration change even when it would
                               # retire maxDeletePercent of the source's HyperNodes or more
                               # while discovering (almost) nothing (plan.py holds it back)

The keys of ours are optional; Volcano's own ConfigMap (without them) works as written.
``config_fingerprint`` digests an entry's ``config:``; the reconcile stamps it on the
HyperNodes so it can tell a configuration change (an intent) from a source returning less.

Reading is split in two so one bad entry never stops the others: ``parse_config_text`` fails
(``ConfigError``) only when the document as a whole cannot be read; a bad *entry* becomes a
problem string naming it (``networkTopologyDiscovery[1] (source "ufm"): interval: ...``) and
is left out, and the caller reports it. Nothing here does I/O or knows which sources exist;
the discovery manager checks names against its registry.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from volcano_py.api.constants import (
    CONTROLLER_CONFIG_KEY,
    CONTROLLER_CONFIGMAP_SUFFIX,
    DEFAULT_DISCOVERY_INTERVAL_SECONDS,
    DEFAULT_NAMESPACE,
    DEFAULT_RELEASE_NAME,
    HELM_RELEASE_NAME_ENV,
    KUBE_POD_NAMESPACE_ENV,
)
from volcano_py.api.duration import parse_duration as go_duration
from volcano_py.api.safeload import CONFIG_LIMITS, LoadError, load_yaml

DEFAULT_MAX_DELETE_PERCENT = 50.0
DEFAULT_DELETION_GRACE_SECONDS = 60.0
_ENTRY_KEYS = frozenset(
    {
        "source",
        "enabled",
        "interval",
        "credentials",
        "config",
        "maxDeletePercent",
        "deletionGracePeriod",
        "force",
    }
)


class ConfigError(ValueError):
    """The configuration (or one entry of it) cannot be used; the message says why."""


@dataclass(frozen=True, slots=True)
class SecretRef:
    """``credentials.secretRef``: the Secret holding a source's ``username``/``password``."""

    name: str
    namespace: str


@dataclass(frozen=True, slots=True)
class DiscoveryConfig:
    """One ``networkTopologyDiscovery`` entry, checked.

    Two entries are equal when they would run the same discoverer; ``index`` (the entry's
    position, for messages) is left out so reordering the list restarts nothing.
    """

    source: str
    enabled: bool = False
    interval: float = float(DEFAULT_DISCOVERY_INTERVAL_SECONDS)
    secret_ref: SecretRef | None = None
    config: Mapping[str, Any] = field(default_factory=dict)
    max_delete_percent: float = DEFAULT_MAX_DELETE_PERCENT
    deletion_grace: float = DEFAULT_DELETION_GRACE_SECONDS
    force: bool = False
    index: int = field(default=0, compare=False)

    @property
    def entry(self) -> str:
        """How messages name this entry: ``networkTopologyDiscovery[0] (source "label")``."""
        return entry_name(self.index, self.source)

    @property
    def fingerprint(self) -> str:
        """``config_fingerprint`` of this entry's ``config:``."""
        return config_fingerprint(self.config)


@dataclass(frozen=True, slots=True)
class Problem:
    """An entry left out: its source (when it named one) and a message naming the entry."""

    source: str | None
    message: str


@dataclass(frozen=True, slots=True)
class NetworkTopologyConfig:
    """The usable entries of a document, and a ``Problem`` for every entry left out."""

    sources: tuple[DiscoveryConfig, ...] = ()
    problems: tuple[Problem, ...] = ()

    def enabled(self) -> dict[str, DiscoveryConfig]:
        """The enabled entries by source name."""
        return {cfg.source: cfg for cfg in self.sources if cfg.enabled}

    def get(self, source: str) -> DiscoveryConfig | None:
        """The entry for ``source``, enabled or not."""
        return next((cfg for cfg in self.sources if cfg.source == source), None)


def entry_name(index: int, source: object) -> str:
    """``networkTopologyDiscovery[<index>]``, plus the source when it is a string."""
    if isinstance(source, str) and source:
        return f'networkTopologyDiscovery[{index}] (source "{source}")'
    return f"networkTopologyDiscovery[{index}]"


def config_fingerprint(config: Mapping[str, Any]) -> str:
    """A short digest of a source's ``config:`` (key order does not matter)."""
    text = repr(_canonical(config)).encode()
    return hashlib.sha256(text).hexdigest()[:16]


def _canonical(value: object) -> object:
    if isinstance(value, Mapping):
        return sorted((str(k), _canonical(v)) for k, v in value.items())
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]
    return value


def configmap_location(environ: Mapping[str, str] | None = None) -> tuple[str, str]:
    """``(namespace, name)`` of the controller ConfigMap, from the environment like Volcano."""
    env = os.environ if environ is None else environ
    namespace = env.get(KUBE_POD_NAMESPACE_ENV) or DEFAULT_NAMESPACE
    release = env.get(HELM_RELEASE_NAME_ENV) or DEFAULT_RELEASE_NAME
    return namespace, release + CONTROLLER_CONFIGMAP_SUFFIX


def parse_duration(value: object) -> float:
    """A Go duration (``90s``, ``10m``, ``1h30m``, ``1.5h``) in seconds.

    Raises:
        ConfigError: not a string in Go's duration syntax.
    """
    if not isinstance(value, str) or not value:
        raise ConfigError(f"expected a duration such as 10m or 1h, got {value!r}")
    try:
        return go_duration(value)
    except ValueError:
        raise ConfigError(f"expected a duration such as 10m or 1h, got {value!r}") from None


def parse_config_text(
    text: str, *, default_namespace: str = DEFAULT_NAMESPACE
) -> NetworkTopologyConfig:
    """Read a ``volcano-controller.conf`` document.

    ``default_namespace`` is used for a ``secretRef`` without a namespace.

    Raises:
        ConfigError: the text is not YAML, or its top level or ``networkTopologyDiscovery``
            has the wrong shape.
    """
    try:
        document = load_yaml(text, CONTROLLER_CONFIG_KEY, CONFIG_LIMITS)
    except LoadError as e:
        raise ConfigError(str(e)) from None
    if document is None:
        return NetworkTopologyConfig()
    if not isinstance(document, Mapping):
        raise ConfigError(
            f"{CONTROLLER_CONFIG_KEY}: expected a mapping at the top level, "
            f"got {type(document).__name__}"
        )
    entries = document.get("networkTopologyDiscovery")
    if entries is None:
        return NetworkTopologyConfig()
    if not isinstance(entries, list):
        raise ConfigError(
            f"networkTopologyDiscovery: expected a list, got {type(entries).__name__}"
        )
    sources: list[DiscoveryConfig] = []
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(entries):
        source = raw.get("source") if isinstance(raw, Mapping) else None
        named = source if isinstance(source, str) and source else None
        try:
            cfg = parse_entry(raw, i, default_namespace=default_namespace)
        except ConfigError as e:
            problems.append(Problem(named, f"{entry_name(i, source)}: {e}"))
            continue
        if cfg.source in seen:
            message = (
                f"{cfg.entry}: source {cfg.source!r} is already configured by "
                f"networkTopologyDiscovery[{seen[cfg.source]}]"
            )
            problems.append(Problem(None, message))
            continue
        seen[cfg.source] = i
        sources.append(cfg)
    return NetworkTopologyConfig(tuple(sources), tuple(problems))


def parse_entry(raw: object, index: int, *, default_namespace: str) -> DiscoveryConfig:
    """Check one entry; the ``ConfigError`` message names the bad field (not the entry)."""
    if not isinstance(raw, Mapping):
        raise ConfigError(f"expected a mapping, got {type(raw).__name__}")
    unknown = sorted(str(k) for k in raw if k not in _ENTRY_KEYS)
    if unknown:
        raise ConfigError(f"unknown field(s) {', '.join(unknown)}")
    source = raw.get("source")
    if not isinstance(source, str) or not source:
        raise ConfigError("source: required, a discoverer name such as label or ufm")
    enabled = raw.get("enabled", False)
    if not isinstance(enabled, bool):
        raise ConfigError(f"enabled: expected true or false, got {enabled!r}")
    interval = float(DEFAULT_DISCOVERY_INTERVAL_SECONDS)
    if raw.get("interval") is not None:
        try:
            interval = parse_duration(raw["interval"])
        except ConfigError as e:
            raise ConfigError(f"interval: {e}") from None
        if interval <= 0:
            raise ConfigError(f"interval: must be positive, got {raw['interval']!r}")
    force = raw.get("force", False)
    if not isinstance(force, bool):
        raise ConfigError(f"force: expected true or false, got {force!r}")
    config = raw.get("config")
    if config is None:
        config = {}
    if not isinstance(config, Mapping):
        raise ConfigError(f"config: expected a mapping, got {type(config).__name__}")
    return DiscoveryConfig(
        source=source,
        enabled=enabled,
        interval=interval,
        secret_ref=_secret_ref(raw.get("credentials"), default_namespace),
        config=dict(config),
        max_delete_percent=_percent(raw.get("maxDeletePercent")),
        deletion_grace=_grace(raw.get("deletionGracePeriod")),
        force=force,
        index=index,
    )


def _secret_ref(credentials: object, default_namespace: str) -> SecretRef | None:
    if credentials is None:
        return None
    if not isinstance(credentials, Mapping):
        raise ConfigError(f"credentials: expected a mapping, got {type(credentials).__name__}")
    ref = credentials.get("secretRef")
    if ref is None:
        return None
    if not isinstance(ref, Mapping):
        raise ConfigError(f"credentials.secretRef: expected a mapping, got {type(ref).__name__}")
    name = ref.get("name")
    if not isinstance(name, str) or not name:
        raise ConfigError("credentials.secretRef.name: required")
    namespace = ref.get("namespace") or default_namespace
    if not isinstance(namespace, str):
        raise ConfigError(f"credentials.secretRef.namespace: expected a string, got {namespace!r}")
    return SecretRef(name, namespace)


def _percent(value: object) -> float:
    if value is None:
        return DEFAULT_MAX_DELETE_PERCENT
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise ConfigError(f"maxDeletePercent: expected a number from 0 to 100, got {value!r}")
    if not 0 <= value <= 100:
        raise ConfigError(f"maxDeletePercent: expected a number from 0 to 100, got {value!r}")
    return float(value)


def _grace(value: object) -> float:
    if value is None:
        return DEFAULT_DELETION_GRACE_SECONDS
    try:
        seconds = parse_duration(value)
    except ConfigError as e:
        raise ConfigError(f"deletionGracePeriod: {e}") from None
    if seconds < 0:
        raise ConfigError(f"deletionGracePeriod: must not be negative, got {value!r}")
    return seconds


def config_from_configmap(
    configmap: Mapping[str, Any] | None, *, default_namespace: str = DEFAULT_NAMESPACE
) -> NetworkTopologyConfig:
    """The configuration a ConfigMap holds; an absent ConfigMap means no sources.

    Raises:
        ConfigError: the ConfigMap exists but has no ``volcano-controller.conf`` key, or the
            document cannot be read (see ``parse_config_text``).
    """
    if configmap is None:
        return NetworkTopologyConfig()
    data = configmap.get("data") or {}
    text = data.get(CONTROLLER_CONFIG_KEY) if isinstance(data, Mapping) else None
    if not isinstance(text, str):
        raise ConfigError(f"the ConfigMap has no {CONTROLLER_CONFIG_KEY} key")
    return parse_config_text(text, default_namespace=default_namespace)
