"""The CRD manifests carry Volcano's API unchanged and are valid structural CRDs.

The real API server install is an integration test; here the documents are checked as data:
names, scope, versions, printer columns, the schema facts other code relies on, the
structural-schema rules, and the HyperNode selector's two CEL rules (compiled and run with
cel-python, the engine the webhook uses), plus a round trip through the kubernetes client's
V1CustomResourceDefinition model.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import celpy
import pytest
import re2
import yaml
from celpy.adapter import json_to_cel
from kubernetes.client import ApiClient

from volcano_py.api.constants import MAX_HYPERNODE_TIER

CRD_DIR = Path(__file__).resolve().parents[3] / "manifests" / "crds"
HYPERNODES = "topology.volcano.sh_hypernodes.yaml"
PODGROUPS = "scheduling.volcano.sh_podgroups.yaml"
QUEUES = "scheduling.volcano.sh_queues.yaml"
JOBS = "batch.volcano.sh_jobs.yaml"
COMMANDS = "bus.volcano.sh_commands.yaml"
ALL_CRDS = [HYPERNODES, PODGROUPS, QUEUES, JOBS, COMMANDS]

AT_LEAST_ONE_RULE = "has(self.exactMatch) || has(self.regexMatch) || has(self.labelMatch)"
AT_LEAST_ONE_MESSAGE = "Either ExactMatch or RegexMatch or LabelMatch must be specified"
AT_MOST_ONE_RULE = (
    "(has(self.exactMatch) ? 1 : 0) + (has(self.regexMatch) ? 1 : 0)"
    " + (has(self.labelMatch) ? 1 : 0) <= 1"
)
AT_MOST_ONE_MESSAGE = "Only one of ExactMatch, RegexMatch, or LabelMatch can be specified"
DNS_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"

# Keys a JSONSchemaProps node may carry in an apiextensions.k8s.io/v1 CRD (a typo here
# would be dropped or rejected by the API server).
SCHEMA_KEYS = {
    "type", "format", "description", "properties", "additionalProperties", "items",
    "required", "enum", "default", "minimum", "maximum", "exclusiveMinimum",
    "exclusiveMaximum", "minLength", "maxLength", "pattern", "minItems", "maxItems",
    "uniqueItems", "minProperties", "maxProperties", "multipleOf", "nullable", "anyOf",
    "allOf", "oneOf", "not", "x-kubernetes-int-or-string", "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource", "x-kubernetes-list-type", "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type", "x-kubernetes-validations",
}  # fmt: skip


@functools.cache
def load(name: str) -> dict[str, Any]:
    """Parse one manifest (cached: tests only read it; libyaml: the Job CRD is 4,000 lines)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    docs = list(yaml.load_all((CRD_DIR / name).read_text(), Loader=loader))
    assert len(docs) == 1, f"{name} must hold exactly one document"
    doc: dict[str, Any] = docs[0]
    return doc


@pytest.fixture(scope="module", autouse=True)
def _drop_parsed_crds() -> Iterator[None]:
    # The parsed Job CRD is ~100k objects: held for the session, it slows every later full
    # garbage collection (tests/unit/scheduler/test_no_cyclic_garbage.py runs several).
    yield
    load.cache_clear()


def version(name: str) -> dict[str, Any]:
    (only,) = load(name)["spec"]["versions"]
    result: dict[str, Any] = only
    return result


def schema_at(name: str, path: str) -> dict[str, Any]:
    """Walk a dotted path of property names; `[]` steps into array items."""
    node: dict[str, Any] = version(name)["schema"]["openAPIV3Schema"]
    for step in path.split("."):
        if step == "[]":
            node = node["items"]
        elif step == "{}":
            node = node["additionalProperties"]
        else:
            node = node["properties"][step]
    return node


def walk(node: dict[str, Any], path: str = "") -> list[tuple[str, dict[str, Any]]]:
    found = [(path, node)]
    for key, child in node.get("properties", {}).items():
        found += walk(child, f"{path}.{key}")
    if isinstance(node.get("items"), dict):
        found += walk(node["items"], f"{path}[]")
    if isinstance(node.get("additionalProperties"), dict):
        found += walk(node["additionalProperties"], f"{path}{{}}")
    return found


def violations(path: str, node: dict[str, Any]) -> list[str]:
    """Structural-schema and self-consistency problems of one schema node."""
    problems = [f"{path}: unknown key {key!r}" for key in node if key not in SCHEMA_KEYS]
    int_or_string = node.get("x-kubernetes-int-or-string") is True
    if "type" not in node and not int_or_string:
        problems.append(f"{path}: no type")
    if "anyOf" in node and not int_or_string:
        problems.append(f"{path}: anyOf outside int-or-string")
    if "properties" in node and "additionalProperties" in node:
        problems.append(f"{path}: both properties and additionalProperties")
    if node.get("type") == "array" and "items" not in node:
        problems.append(f"{path}: array without items")
    problems += [
        f"{path}: required {field!r} is not a property"
        for field in node.get("required", [])
        if field not in node.get("properties", {})
    ]
    if "pattern" in node:
        re2.compile(node["pattern"])
    if "default" in node and not value_fits(node, node["default"]):
        problems.append(f"{path}: default {node['default']!r} breaks its own schema")
    return problems


def value_fits(node: dict[str, Any], value: Any) -> bool:
    checks = [
        "enum" not in node or value in node["enum"],
        "minimum" not in node or value >= node["minimum"],
        "maximum" not in node or value <= node["maximum"],
        "maxLength" not in node or len(value) <= node["maxLength"],
        "pattern" not in node or re2.search(node["pattern"], value) is not None,
    ]
    return all(checks)


@pytest.mark.parametrize("name", ALL_CRDS)
def test_crd_manifest_is_an_apiextensions_v1_crd_named_plural_dot_group(name: str) -> None:
    doc = load(name)
    assert doc["apiVersion"] == "apiextensions.k8s.io/v1"
    assert doc["kind"] == "CustomResourceDefinition"
    spec = doc["spec"]
    assert doc["metadata"]["name"] == f"{spec['names']['plural']}.{spec['group']}"
    assert name == f"{spec['group']}_{spec['names']['plural']}.yaml"


@pytest.mark.parametrize("name", ALL_CRDS)
def test_crd_manifest_round_trips_through_the_v1_crd_model_unchanged(name: str) -> None:
    # The client's V1CustomResourceDefinition model drops keys it does not know and rejects
    # missing required ones, so an unchanged round trip means every key is a real API field.
    api = ApiClient()
    doc = load(name)
    crd = api.deserialize(json.dumps(doc), "V1CustomResourceDefinition", "application/json")
    round_trip = api.sanitize_for_serialization(crd)  # type: ignore[no-untyped-call]
    assert round_trip == doc


@pytest.mark.parametrize(
    ("name", "group", "kind", "singular", "short_names", "scope", "version_name"),
    [
        (HYPERNODES, "topology.volcano.sh", "HyperNode", "hypernode", ["hn"], "Cluster",
         "v1alpha1"),
        (PODGROUPS, "scheduling.volcano.sh", "PodGroup", "podgroup", ["pg", "podgroup-v1beta1"],
         "Namespaced", "v1beta1"),
        (QUEUES, "scheduling.volcano.sh", "Queue", "queue", ["q", "queue-v1beta1"], "Cluster",
         "v1beta1"),
        (JOBS, "batch.volcano.sh", "Job", "job", ["vcjob", "vj"], "Namespaced", "v1alpha1"),
        (COMMANDS, "bus.volcano.sh", "Command", "command", [], "Namespaced", "v1alpha1"),
    ],
    ids=["hypernode", "podgroup", "queue", "job", "command"],
)  # fmt: skip
def test_crd_manifest_names_scope_and_single_served_storage_version(
    name: str,
    group: str,
    kind: str,
    singular: str,
    short_names: list[str],
    scope: str,
    version_name: str,
) -> None:
    spec = load(name)["spec"]
    assert spec["group"] == group
    assert spec["scope"] == scope
    names = {
        "kind": kind,
        "listKind": f"{kind}List",
        "plural": f"{singular}s",
        "singular": singular,
    }
    assert spec["names"] == ({**names, "shortNames": short_names} if short_names else names)
    ver = version(name)
    assert (ver["name"], ver["served"], ver["storage"]) == (version_name, True, True)


@pytest.mark.parametrize(
    ("name", "subresources"),
    [
        (HYPERNODES, {"status": {}}),
        (PODGROUPS, {}),
        (QUEUES, {"status": {}}),
        (JOBS, {"status": {}}),
    ],
    ids=["hypernode", "podgroup-has-none-like-volcano", "queue", "job"],
)
def test_crd_manifest_subresources_match_volcano(name: str, subresources: dict[str, Any]) -> None:
    assert version(name).get("subresources", {}) == subresources


@pytest.mark.parametrize(
    ("name", "columns"),
    [
        (HYPERNODES, [("Tier", "string", ".spec.tier"), ("TierName", "string", ".spec.tierName"),
                      ("NodeCount", "integer", ".status.nodeCount"),
                      ("Age", "date", ".metadata.creationTimestamp")]),
        (PODGROUPS, [("STATUS", "string", ".status.phase"),
                     ("minMember", "integer", ".spec.minMember"),
                     ("RUNNINGS", "integer", ".status.running"),
                     ("AGE", "date", ".metadata.creationTimestamp"),
                     ("QUEUE", "string", ".spec.queue")]),
        (QUEUES, [("PARENT", "string", ".spec.parent")]),
        (JOBS, [("STATUS", "string", ".status.state.phase"),
                ("minAvailable", "integer", ".status.minAvailable"),
                ("RUNNINGS", "integer", ".status.running"),
                ("AGE", "date", ".metadata.creationTimestamp"),
                ("QUEUE", "string", ".spec.queue")]),
    ],
    ids=["hypernode", "podgroup", "queue", "job"],
)  # fmt: skip
def test_crd_manifest_printer_columns_match_volcano(
    name: str, columns: list[tuple[str, str, str]]
) -> None:
    got = version(name)["additionalPrinterColumns"]
    assert [(c["name"], c["type"], c["jsonPath"]) for c in got] == columns


def test_podgroup_queue_printer_column_is_wide_only() -> None:
    (queue,) = [c for c in version(PODGROUPS)["additionalPrinterColumns"] if c["name"] == "QUEUE"]
    assert queue["priority"] == 1


@pytest.mark.parametrize("name", ALL_CRDS)
def test_crd_schema_is_structural_and_self_consistent(name: str) -> None:
    root = version(name)["schema"]["openAPIV3Schema"]
    assert root["type"] == "object"
    assert root["properties"]["metadata"] == {"type": "object"}
    problems = [p for path, node in walk(root) for p in violations(path or "<root>", node)]
    assert problems == []


def test_structural_check_catches_a_typed_less_node_and_a_bad_default() -> None:
    assert violations(".a", {"properties": {}}) == [".a: no type"]
    assert violations(".b", {"type": "string", "enum": ["x"], "default": "y"}) == [
        ".b: default 'y' breaks its own schema"
    ]
    assert violations(".c", {"type": "string", "minLen": 1}) == [".c: unknown key 'minLen'"]


def test_hypernode_member_selector_carries_exactly_volcanos_two_cel_rules() -> None:
    selector = schema_at(HYPERNODES, "spec.members.[].selector")
    assert selector["x-kubernetes-validations"] == [
        {"rule": AT_LEAST_ONE_RULE, "message": AT_LEAST_ONE_MESSAGE},
        {"rule": AT_MOST_ONE_RULE, "message": AT_MOST_ONE_MESSAGE},
    ]
    carriers = [
        path
        for path, node in walk(version(HYPERNODES)["schema"]["openAPIV3Schema"])
        if "x-kubernetes-validations" in node
    ]
    assert carriers == [".spec.members[].selector"]


@pytest.mark.parametrize(
    ("selector", "at_least_one", "at_most_one"),
    [
        ({"exactMatch": {"name": "node-1"}}, True, True),
        ({"regexMatch": {"pattern": "^node-[0-9]+$"}}, True, True),
        ({"labelMatch": {"matchLabels": {"rack": "r1"}}}, True, True),
        ({}, False, True),
        ({"exactMatch": {"name": "a"}, "regexMatch": {"pattern": "a"}}, True, False),
        ({"exactMatch": {"name": "a"}, "regexMatch": {"pattern": "a"},
          "labelMatch": {}}, True, False),
    ],
    ids=["exact", "regex", "label", "none", "exact-and-regex", "all-three"],
)  # fmt: skip
def test_hypernode_selector_cel_rules_accept_exactly_one_match_kind(
    selector: dict[str, Any], at_least_one: bool, at_most_one: bool
) -> None:
    env = celpy.Environment()
    rules = schema_at(HYPERNODES, "spec.members.[].selector")["x-kubernetes-validations"]
    activation = {"self": json_to_cel(selector)}
    got = [bool(env.program(env.compile(r["rule"])).evaluate(activation)) for r in rules]
    assert got == [at_least_one, at_most_one]


def test_hypernode_member_type_is_an_enum_of_node_and_hypernode() -> None:
    assert schema_at(HYPERNODES, "spec.members.[].type") == {
        "type": "string",
        "enum": ["Node", "HyperNode"],
    }


@pytest.mark.parametrize(
    ("path", "required"),
    [
        ("spec", ["tier"]),
        ("spec.members.[]", ["type"]),
        ("spec.members.[].selector.exactMatch", ["name"]),
        ("spec.members.[].selector.regexMatch", ["pattern"]),
        ("spec.members.[].selector.labelMatch.matchExpressions.[]", ["key", "operator"]),
        ("status.conditions.[]", ["lastTransitionTime", "message", "reason", "status", "type"]),
    ],
    ids=["spec", "member", "exact-match", "regex-match", "label-expression", "condition"],
)
def test_hypernode_required_fields(path: str, required: list[str]) -> None:
    assert schema_at(HYPERNODES, path)["required"] == required


def test_hypernode_top_level_and_status_have_no_required_fields() -> None:
    assert "required" not in version(HYPERNODES)["schema"]["openAPIV3Schema"]
    assert "required" not in schema_at(HYPERNODES, "status")


@pytest.mark.parametrize(
    ("path", "constraints"),
    [
        # Volcano's is {"type": "integer", "minimum": 0}; the maximum is our one addition
        # (MAX_HYPERNODE_TIER, docs/crds.md): a huge tier must not reach the scheduler.
        ("spec.tier", {"type": "integer", "minimum": 0, "maximum": MAX_HYPERNODE_TIER}),
        ("spec.tierName", {"type": "string", "maxLength": 253}),
        ("spec.members.[].selector.exactMatch.name",
         {"type": "string", "minLength": 1, "maxLength": 253, "pattern": DNS_SUBDOMAIN}),
        ("spec.members.[].selector.regexMatch.pattern", {"type": "string", "minLength": 1}),
        ("status.nodeCount", {"type": "integer", "format": "int64", "minimum": 0}),
    ],
    ids=["tier", "tier-name", "exact-name", "regex-pattern", "node-count"],
)  # fmt: skip
def test_hypernode_field_constraints(path: str, constraints: dict[str, Any]) -> None:
    assert schema_at(HYPERNODES, path) == constraints


def test_hypernode_members_need_at_least_one_item_and_label_match_is_atomic() -> None:
    assert schema_at(HYPERNODES, "spec.members")["minItems"] == 1
    assert (
        schema_at(HYPERNODES, "spec.members.[].selector.labelMatch")["x-kubernetes-map-type"]
        == "atomic"
    )


@pytest.mark.parametrize(
    ("value", "fits"),
    [("node-01", True), ("rack-1.dc-a", True), ("Node_1", False), ("-node", False),
     ("n" * 254, False)],
    ids=["plain", "dotted", "upper-underscore", "leading-dash", "too-long"],
)  # fmt: skip
def test_hypernode_exact_match_name_accepts_dns_subdomains_only(value: str, fits: bool) -> None:
    node = schema_at(HYPERNODES, "spec.members.[].selector.exactMatch.name")
    assert value_fits(node, value) is fits


@pytest.mark.parametrize(
    "path", ["spec.networkTopology", "spec.subGroupPolicy.[].networkTopology"],
    ids=["podgroup", "subgroup"],
)  # fmt: skip
def test_podgroup_network_topology_schema(path: str) -> None:
    assert schema_at(PODGROUPS, path) == {
        "type": "object",
        "properties": {
            "highestTierAllowed": {"type": "integer", "minimum": 0},
            "highestTierName": {"type": "string", "maxLength": 253},
            "mode": {"type": "string", "default": "hard", "enum": ["hard", "soft"]},
        },
    }


@pytest.mark.parametrize(
    ("path", "constraints"),
    [
        ("spec.minMember", {"type": "integer", "format": "int32", "minimum": 0}),
        ("spec.queue", {"type": "string", "default": "default", "maxLength": 253,
                        "pattern": DNS_SUBDOMAIN}),
        ("spec.priorityClassName", {"type": "string", "maxLength": 253}),
        ("spec.subGroupPolicy.[].subGroupSize",
         {"type": "integer", "format": "int32", "default": 1, "minimum": 1}),
        ("spec.subGroupPolicy.[].minSubGroups",
         {"type": "integer", "format": "int32", "default": 0, "minimum": 0}),
        ("status.phase", {"type": "string",
                          "enum": ["Pending", "Running", "Unknown", "Inqueue", "Completed"]}),
        ("status.running", {"type": "integer", "format": "int32", "minimum": 0}),
    ],
    ids=["min-member", "queue", "priority-class", "subgroup-size", "min-subgroups", "phase",
         "running"],
)  # fmt: skip
def test_podgroup_field_constraints(path: str, constraints: dict[str, Any]) -> None:
    assert schema_at(PODGROUPS, path) == constraints


@pytest.mark.parametrize(
    ("value", "fits"),
    [("1", True), ("500m", True), ("+2Gi", True), ("1e3", True), ("2e-3", True),
     ("-1", False), ("-3", False), ("-500m", False), ("inf", False), ("NaN", False)],
    ids=["one", "milli", "plus-gi", "exponent", "negative-exponent", "minus-one", "minus-three",
         "minus-milli", "inf", "nan"],
)  # fmt: skip
def test_podgroup_min_resources_pattern_refuses_negative_quantities(value: str, fits: bool) -> None:
    # Volcano's pattern starts ^(\+|-)?; ours takes no minus sign (docs/crds.md, issue 26).
    node = schema_at(PODGROUPS, "spec.minResources.{}")
    assert node["x-kubernetes-int-or-string"] is True
    assert value_fits(node, value) is fits


def test_podgroup_spec_fields_are_volcanos() -> None:
    assert sorted(schema_at(PODGROUPS, "spec")["properties"]) == [
        "minMember", "minResources", "minTaskMember", "networkTopology", "priorityClassName",
        "queue", "subGroupPolicy",
    ]  # fmt: skip
    assert "required" not in schema_at(PODGROUPS, "spec")


@pytest.mark.parametrize(
    ("path", "constraints"),
    [
        ("spec.weight", {"type": "integer", "format": "int32", "default": 1, "minimum": 1,
                         "maximum": 65535}),
        ("spec.parent", {"type": "string", "maxLength": 253, "pattern": DNS_SUBDOMAIN}),
        ("spec.dequeueStrategy", {"type": "string", "default": "traverse",
                                  "enum": ["fifo", "traverse"]}),
        ("status.state", {"type": "string", "enum": ["Open", "Closed", "Closing", "Unknown"]}),
        ("spec.dra.capability.{}", {"type": "object", "required": ["count"], "properties": {
            "capacity": schema_at(QUEUES, "spec.capability"),
            "count": {"type": "integer", "format": "int64"}}}),
    ],
    ids=["weight", "parent", "dequeue-strategy", "state", "dra-quota"],
)  # fmt: skip
def test_queue_field_constraints(path: str, constraints: dict[str, Any]) -> None:
    assert schema_at(QUEUES, path) == constraints


JOB_EVENTS = [
    "*", "PodPending", "PodRunning", "PodFailed", "PodEvicted", "Unknown", "TaskCompleted",
    "OutOfSync", "CommandIssued", "JobUpdated", "TaskFailed",
]  # fmt: skip


def test_job_spec_and_task_fields_are_volcanos() -> None:
    assert sorted(schema_at(JOBS, "spec")["properties"]) == [
        "maxRetry", "minAvailable", "minSuccess", "networkTopology", "plugins", "policies",
        "priorityClassName", "queue", "runningEstimate", "schedulerName", "tasks",
        "ttlSecondsAfterFinished", "volumes",
    ]  # fmt: skip
    assert sorted(schema_at(JOBS, "spec.tasks.[]")["properties"]) == [
        "dependsOn", "maxRetry", "minAvailable", "name", "partitionPolicy", "policies",
        "replicas", "template", "topologyPolicy",
    ]  # fmt: skip
    assert sorted(schema_at(JOBS, "status")["properties"]) == [
        "conditions", "controlledResources", "failed", "minAvailable", "pending", "retryCount",
        "running", "runningDuration", "state", "succeeded", "taskStatusCount", "terminating",
        "unknown", "version",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("path", "constraints"),
    [
        ("spec.maxRetry", {"type": "integer", "format": "int32", "default": 3, "minimum": 0}),
        ("spec.minSuccess", {"type": "integer", "format": "int32", "minimum": 1}),
        ("spec.queue", {"type": "string", "default": "default", "maxLength": 253,
                        "pattern": DNS_SUBDOMAIN}),
        ("spec.schedulerName", {"type": "string", "maxLength": 63}),
        ("spec.tasks.[].name", {"type": "string", "maxLength": 63,
                                "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"}),
        ("spec.tasks.[].replicas", {"type": "integer", "format": "int32", "minimum": 0}),
        ("spec.tasks.[].partitionPolicy.partitionSize",
         {"type": "integer", "format": "int32", "minimum": 1}),
        ("spec.tasks.[].partitionPolicy.minPartitions",
         {"type": "integer", "format": "int32", "default": 0, "minimum": 0}),
        ("spec.policies.[].event", {"type": "string", "enum": JOB_EVENTS}),
        ("spec.tasks.[].topologyPolicy",
         {"type": "string", "enum": ["none", "best-effort", "restricted", "single-numa-node"]}),
        ("status.state.phase", {"type": "string", "enum": [
            "Pending", "Aborting", "Aborted", "Running", "Restarting", "Completing", "Completed",
            "Terminating", "Terminated", "Failed"]}),
    ],
    ids=["max-retry", "min-success", "queue", "scheduler-name", "task-name", "replicas",
         "partition-size", "min-partitions", "policy-event", "topology-policy", "phase"],
)  # fmt: skip
def test_job_field_constraints(path: str, constraints: dict[str, Any]) -> None:
    assert schema_at(JOBS, path) == constraints


def test_job_network_topology_matches_the_podgroups_and_partition_policy_requires_its_sizes() -> (
    None
):
    assert schema_at(JOBS, "spec.networkTopology") == schema_at(PODGROUPS, "spec.networkTopology")
    assert schema_at(JOBS, "spec.tasks.[].partitionPolicy")["required"] == [
        "partitionSize", "totalPartitions",
    ]  # fmt: skip


def test_job_task_template_is_the_full_pod_template_schema() -> None:
    template = schema_at(JOBS, "spec.tasks.[].template")
    assert sorted(template["properties"]) == ["metadata", "spec"]
    pod_spec = template["properties"]["spec"]
    assert pod_spec["required"] == ["containers"]
    assert {"containers", "initContainers", "schedulerName", "volumes"} <= set(
        pod_spec["properties"]
    )


def test_command_targets_an_owner_reference_and_carries_an_action() -> None:
    root = version(COMMANDS)["schema"]["openAPIV3Schema"]
    assert sorted(root["properties"]) == [
        "action", "apiVersion", "kind", "message", "metadata", "reason", "target",
    ]  # fmt: skip
    target = schema_at(COMMANDS, "target")
    assert target["required"] == ["apiVersion", "kind", "name", "uid"]
    assert target["x-kubernetes-map-type"] == "atomic"
    assert "additionalPrinterColumns" not in version(COMMANDS)


def test_kustomization_lists_exactly_the_crds() -> None:
    kustomization = yaml.safe_load((CRD_DIR / "kustomization.yaml").read_text())
    assert kustomization["kind"] == "Kustomization"
    assert sorted(kustomization["resources"]) == sorted(ALL_CRDS)
    assert sorted(p.name for p in CRD_DIR.glob("*.yaml") if p.name != "kustomization.yaml") == (
        sorted(ALL_CRDS)
    )
