from __future__ import annotations

import pytest

from volcano_py.controllers.hypernode.config import (
    ConfigError,
    SecretRef,
    config_from_configmap,
    configmap_location,
    parse_config_text,
    parse_duration,
)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("10m", 600.0),
        ("1h", 3600.0),
        ("1h30m", 5400.0),
        ("1.5h", 5400.0),
        ("90s", 90.0),
        ("500ms", 0.5),
        ("0", 0.0),
    ],
    ids=["minutes", "hours", "compound", "fraction", "seconds", "millis", "zero"],
)
def test_parse_duration_reads_go_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("value", ["", "10", "ten minutes", "1d", 600, None, "-"], ids=str)
def test_parse_duration_rejects_what_go_rejects(value: object) -> None:
    with pytest.raises(ConfigError, match="duration"):
        parse_duration(value)


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, ("volcano-system", "volcano-controller-configmap")),
        (
            {"KUBE_POD_NAMESPACE": "ops", "HELM_RELEASE_NAME": "vc"},
            ("ops", "vc-controller-configmap"),
        ),
        ({"KUBE_POD_NAMESPACE": ""}, ("volcano-system", "volcano-controller-configmap")),
    ],
    ids=["defaults", "from-env", "empty-env-means-default"],
)
def test_configmap_location_follows_the_environment(
    env: dict[str, str], expected: tuple[str, str]
) -> None:
    assert configmap_location(env) == expected


def test_parse_config_text_applies_defaults() -> None:
    config = parse_config_text(
        """
networkTopologyDiscovery:
  - source: label
    enabled: true
    config: {networkTopologyTypes: {a: [{nodeLabel: x}, {nodeLabel: y}]}}
  - source: ufm
    interval: 10m
    credentials: {secretRef: {name: creds}}
""",
        default_namespace="ops",
    )
    label, ufm = config.sources
    assert (label.enabled, label.interval, label.max_delete_percent) == (True, 3600.0, 50.0)
    assert (ufm.enabled, ufm.interval) == (False, 600.0)
    assert ufm.secret_ref == SecretRef("creds", "ops")
    assert list(config.enabled()) == ["label"]
    assert config.problems == ()


def test_parse_config_text_rejects_a_bad_entry_and_keeps_the_others() -> None:
    config = parse_config_text(
        """
networkTopologyDiscovery:
  - source: label
    enabled: true
    interval: soon
  - source: ufm
    enabled: true
    maxDeletePercent: 20
  - source: ufm
    enabled: false
  - enabled: true
"""
    )
    assert [c.source for c in config.sources] == ["ufm"]
    assert config.sources[0].max_delete_percent == 20.0
    messages = [p.message for p in config.problems]
    assert messages[0].startswith('networkTopologyDiscovery[0] (source "label"): interval:')
    assert config.problems[0].source == "label"
    assert "already configured by networkTopologyDiscovery[1]" in messages[1]
    assert messages[2].startswith("networkTopologyDiscovery[3]: source: required")


@pytest.mark.parametrize(
    ("entry", "fragment"),
    [
        ("{source: a, enabled: yes please}", "enabled: expected true or false"),
        ("{source: a, interval: 0s}", "interval: must be positive"),
        ("{source: a, config: [1]}", "config: expected a mapping"),
        ("{source: a, maxDeletePercent: 150}", "maxDeletePercent"),
        ("{source: a, credentials: {secretRef: {}}}", "credentials.secretRef.name"),
        ("{source: a, sauce: 1}", "unknown field(s) sauce"),
        ("{source: a, force: yes please}", "force: expected true or false"),
    ],
    ids=["enabled", "interval", "config", "percent", "secret-name", "unknown-field", "force"],
)
def test_parse_config_text_names_the_bad_field(entry: str, fragment: str) -> None:
    config = parse_config_text(f"networkTopologyDiscovery: [{entry}]")
    assert config.sources == ()
    assert fragment in config.problems[0].message


@pytest.mark.parametrize(
    "text",
    ["networkTopologyDiscovery: [", "- just\n- a list", "networkTopologyDiscovery: 5"],
    ids=["not-yaml", "top-level-list", "discovery-not-a-list"],
)
def test_parse_config_text_refuses_an_unreadable_document(text: str) -> None:
    with pytest.raises(ConfigError):
        parse_config_text(text)


def test_config_from_configmap_treats_absent_as_no_sources_and_missing_key_as_error() -> None:
    assert config_from_configmap(None).sources == ()
    with pytest.raises(ConfigError, match=r"volcano-controller\.conf"):
        config_from_configmap({"metadata": {"name": "x"}, "data": {"other": ""}})
    empty = config_from_configmap({"data": {"volcano-controller.conf": ""}})
    assert empty.sources == ()


# Volcano's auto-discovery guide's example ConfigMap, as a user would paste it (comments
# and quoting as there): no key of ours, a source we do not have, disabled.
GUIDE_CONF = """
networkTopologyDiscovery:
  - source: ufm
    enabled: true
    interval: 10m
    credentials:
      secretRef:
        name: ufm-credentials # the Secret holding the UFM credentials
        namespace: volcano-system
    config:
      endpoint: https://ufm-server:8080
      insecureSkipVerify: true
  - source: roce
    enabled: false
    interval: 15m
    config:
      endpoint: https://roce-server:9090
  - source: label
    enabled: true
    config:
      networkTopologyTypes:
        topologyA2:
          - nodeLabel: "volcano.sh/tor"
          - nodeLabel: "kubernetes.io/hostname"
        topologyA3:
          - nodeLabel: "volcano.sh/hypercluster"
          - nodeLabel: "volcano.sh/hypernode"
          - nodeLabel: "kubernetes.io/hostname"
"""


def test_the_guides_configmap_works_as_written_with_our_defaults() -> None:
    from volcano_py.controllers.hypernode import register_builtin_discoverers
    from volcano_py.controllers.hypernode.config import (
        DEFAULT_DELETION_GRACE_SECONDS,
        DEFAULT_MAX_DELETE_PERCENT,
    )
    from volcano_py.controllers.hypernode.discovery import DiscovererRegistry, DiscoveryContext
    from volcano_py.controllers.hypernode.manager import DiscoveryManager
    from volcano_py.kube.store import Store

    config = parse_config_text(GUIDE_CONF)
    assert config.problems == ()
    assert [c.source for c in config.sources] == ["ufm", "roce", "label"]
    label = config.enabled()["label"]
    assert label.max_delete_percent == DEFAULT_MAX_DELETE_PERCENT
    assert label.deletion_grace == DEFAULT_DELETION_GRACE_SECONDS
    registry = DiscovererRegistry()
    register_builtin_discoverers(registry)
    problems: list[str] = []
    manager = DiscoveryManager(
        registry,
        DiscoveryContext(Store(), Store()),
        on_result=lambda s: None,
        on_problem=problems.append,
    )
    try:
        outcome = manager.apply(config)
    finally:
        manager.stop()
    assert outcome.started == ["label"]
    # no UFM Secret here: ufm alone cannot start (its insecureSkipVerify is accepted); the
    # disabled roce entry, a source we do not have, is no problem
    assert len(problems) == 1
    assert "ufm-credentials" in problems[0]
    assert "roce" not in problems[0]


def test_deletion_grace_period_is_a_go_duration_and_errors_name_the_field() -> None:
    config = parse_config_text(
        "networkTopologyDiscovery:\n"
        "  - {source: label, enabled: true, deletionGracePeriod: 5m}\n"
        "  - {source: ufm, enabled: true, deletionGracePeriod: soon}\n"
    )
    assert config.sources[0].deletion_grace == 300
    (problem,) = config.problems
    assert "deletionGracePeriod" in problem.message
    assert "networkTopologyDiscovery[1]" in problem.message
