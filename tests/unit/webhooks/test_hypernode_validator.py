"""The HyperNode pipeline: schema (API server wording) -> CEL -> RE2 -> tree, in that order."""

from __future__ import annotations

import json
from typing import Any

import pytest

from webhooks.hypernodes import tree
from webhooks.hypernodes.tree import StaticLister
from webhooks.hypernodes.validator import HyperNodeValidator


def hn(name: str, tier: int, members: list[Any], **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": name},
        "spec": {"tier": tier, "members": members, **extra},
    }


def ex(name: str, kind: str = "Node") -> dict[str, Any]:
    return {"type": kind, "selector": {"exactMatch": {"name": name}}}


def rx(pattern: str, kind: str = "Node") -> dict[str, Any]:
    return {"type": kind, "selector": {"regexMatch": {"pattern": pattern}}}


def lm(kind: str = "Node") -> dict[str, Any]:
    return {"type": kind, "selector": {"labelMatch": {"matchLabels": {"rack": "a"}}}}


EXISTING = [
    hn("rack-1", 1, [ex("node-1")]),
    hn("rack-2", 1, [ex("node-2")]),
    hn("spine-1", 2, [ex("rack-1", "HyperNode")]),
]


@pytest.fixture(scope="module")
def validator() -> HyperNodeValidator:
    return HyperNodeValidator(StaticLister(EXISTING))


SCHEMA = [
    (
        hn("a", -1, [ex("n")]),
        "spec.tier: Invalid value: -1: spec.tier in body should be greater than or equal to 0",
    ),
    (
        hn("a", 17, [ex("n")]),
        "spec.tier: Invalid value: 17: spec.tier in body should be less than or equal to 16",
    ),
    (
        hn("a", 2**31, [ex("n")]),
        "spec.tier: Invalid value: 2147483648: spec.tier in body should be less than or equal "
        "to 16",
    ),
    (
        hn("a", 1, [ex("A_b")]),
        'spec.members[0].selector.exactMatch.name: Invalid value: "A_b": spec.members[0].selector.'
        "exactMatch.name in body should match "
        "'^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'",
    ),
    (
        hn("a", 1, []),
        "spec.members: Invalid value: 0: spec.members in body should have at least 1 items",
    ),
    (
        hn("a", 1, [ex("n", "Pod")]),
        '[spec.members[0].type: Unsupported value: "Pod": supported values: "Node", "HyperNode", '
        "<nil>: Invalid value: null: some validation rules were not checked because the object was "
        "invalid; correct the existing errors to complete validation]",
    ),
    (
        hn("a", 1, [{"type": "Node", "selector": {}}]),
        "spec.members[0].selector: Invalid value: "
        "Either ExactMatch or RegexMatch or LabelMatch must be specified",
    ),
    (
        hn(
            "a",
            1,
            [
                {
                    "type": "Node",
                    "selector": {"exactMatch": {"name": "a"}, "regexMatch": {"pattern": "b"}},
                }
            ],
        ),
        "spec.members[0].selector: Invalid value: "
        "Only one of ExactMatch, RegexMatch, or LabelMatch can be specified",
    ),
    (
        hn("a", 1, "abc"),
        '[spec.members: Invalid value: "string": '
        'spec.members in body must be of type array: "string", '
        "<nil>: Invalid value: null: some validation rules were not checked because the object was "
        "invalid; correct the existing errors to complete validation]",
    ),
    (
        hn("a", 1, [ex("n")], tierName="x" * 254).__or__({}),
        "[spec.tierName: Too long: may not be more than 253 bytes, "
        "<nil>: Invalid value: null: some "
        "validation rules were not checked because the object was invalid; correct the existing "
        "errors to complete validation]",
    ),
]


def test_validator_accepts_the_maximum_tier(validator: HyperNodeValidator) -> None:
    assert validator.validate(hn("top", 16, [ex("spine-1", "HyperNode")])).allowed


@pytest.mark.parametrize(
    ("obj", "message"),
    SCHEMA,
    ids=[
        "tier",
        "tier-over-max",
        "tier-2^31",
        "name-pattern",
        "min-items",
        "enum",
        "no-selector-kind",
        "two-selectors",
        "members-type",
        "tiername-long",
    ],
)
def test_validator_reports_schema_errors_in_api_server_words(
    validator: HyperNodeValidator, obj: dict[str, Any], message: str
) -> None:
    verdict = validator.validate(obj)
    assert (verdict.allowed, verdict.stage, verdict.message) == (False, "schema", message)


CEL = [
    (
        {
            "apiVersion": "topology.volcano.sh/v1alpha1",
            "kind": "HyperNode",
            "metadata": {"name": "a"},
        },
        "member must have at least one member",
    ),
    (
        hn("a", 1, [ex("ok"), {"type": "Node"}]),
        "spec.members[1]: member selector must have one of exactMatch, regexMatch, or labelMatch",
    ),
    (
        hn("a", 1, [ex("n" * 64)]),
        "spec.members[0]: member exactMatch validate failed "
        "[name part must consist of alphanumeric "
        "characters, '-', '_' or '.', and must start and end with an alphanumeric character]",
    ),
]


@pytest.mark.parametrize(("obj", "message"), CEL, ids=["no-members", "no-selector", "qualified"])
def test_validator_runs_policy_rules_after_the_schema(
    validator: HyperNodeValidator, obj: dict[str, Any], message: str
) -> None:
    verdict = validator.validate(obj)
    assert (verdict.allowed, verdict.stage, verdict.message) == (False, "cel", message)


def test_validator_policy_rules_catch_what_the_schema_would_when_schema_is_off() -> None:
    validator = HyperNodeValidator(check_schema=False)
    both = {"type": "Node", "selector": {"exactMatch": {"name": ""}, "regexMatch": {"pattern": ""}}}
    verdict = validator.validate(hn("a", 1, [both]))
    assert (
        verdict.message == "spec.members[0]: cannot specify more than one selector type "
        "(exactMatch, regexMatch, labelMatch)"
    )
    verdict = validator.validate(hn("a", 1, [ex("")]))
    assert verdict.message == "spec.members[0]: member exactMatch name is required"
    verdict = validator.validate(hn("a", 1, [rx("")]))
    assert verdict.message == "spec.members[0]: member regexMatch pattern is required"


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        ("a(", "error parsing regexp: missing closing ): `a(`"),
        ("\\C", "error parsing regexp: invalid escape sequence: `\\C`"),
        ("x{2,1}", "error parsing regexp: invalid repeat count: `{2,1}`"),
    ],
    ids=["paren", "byte-escape", "repeat"],
)
def test_validator_denies_pattern_that_is_not_re2(
    validator: HyperNodeValidator, pattern: str, reason: str
) -> None:
    verdict = validator.validate(hn("a", 1, [ex("n"), rx(pattern)]))
    assert verdict.stage == "re2"
    assert verdict.message == (
        "spec.members[1].selector.regexMatch.pattern: Invalid value: "
        f"{json.dumps(pattern)}: "
        f"member regexMatch pattern is invalid: {reason}"
    )


TREE = [
    (
        hn("spine-2", 2, [ex("rack-1", "HyperNode")]),
        'member HyperNode "rack-1" of HyperNode "spine-2" already has the parent '
        'HyperNode "spine-1"; '
        "a HyperNode can have only one parent",
    ),
    (
        hn("spine-2", 2, [rx("^rack-", "HyperNode")]),
        'member HyperNode "rack-1" of HyperNode "spine-2" already has the parent '
        'HyperNode "spine-1"; '
        "a HyperNode can have only one parent",
    ),
    (
        hn("rack-1", 3, [ex("spine-1", "HyperNode")]),
        'HyperNode "rack-1" would form a cycle: rack-1 -> spine-1 -> rack-1',
    ),
    (hn("self", 3, [ex("self", "HyperNode")]), 'HyperNode "self" would form a cycle: self -> self'),
    (
        hn("spine-2", 1, [ex("rack-2", "HyperNode")]),
        'member HyperNode "rack-2" (tier 1) of HyperNode "spine-2" (tier 1) must have a lower tier '
        "than its parent",
    ),
    (
        hn("rack-1", 2, [ex("node-1")]),
        'HyperNode "rack-1" (tier 2) must have a lower tier than its parent '
        'HyperNode "spine-1" (tier 2)',
    ),
    (
        hn("spine-2", 2, [ex("rack-2", "HyperNode"), lm("HyperNode")]),
        'HyperNode "spine-2": spec.members[1] is of type HyperNode but uses labelMatch, which only '
        "selects Nodes; select the member HyperNode by exactMatch or regexMatch",
    ),
]


@pytest.mark.parametrize(
    ("obj", "message"),
    TREE,
    ids=[
        "second-parent",
        "second-parent-regex",
        "cycle",
        "self-cycle",
        "child-tier",
        "parent-tier",
        "label-on-hypernode",
    ],
)
def test_validator_tree_checks_name_both_objects(
    validator: HyperNodeValidator, obj: dict[str, Any], message: str
) -> None:
    verdict = validator.validate(obj)
    assert (verdict.allowed, verdict.stage, verdict.message) == (False, "tree", message)


def test_validator_denies_hypernode_selected_by_two_existing_parents() -> None:
    existing = [hn("p1", 3, [ex("new", "HyperNode")]), hn("p2", 3, [rx("^ne", "HyperNode")])]
    verdict = HyperNodeValidator(StaticLister(existing)).validate(hn("new", 1, [ex("n")]))
    assert (
        verdict.message == 'HyperNode "new" would have more than one parent: "p1", "p2"; '
        "a HyperNode can have only one parent"
    )


def test_validator_allows_missing_member_hypernode_with_warning(
    validator: HyperNodeValidator,
) -> None:
    verdict = validator.validate(
        hn("spine-9", 2, [ex("rack-2", "HyperNode"), ex("rack-9", "HyperNode")])
    )
    assert verdict.allowed
    assert verdict.warnings == (
        'member HyperNode "rack-9" of HyperNode "spine-9" does not exist yet; it joins the tree '
        "when it is created",
    )


def test_validator_update_replaces_stored_version(validator: HyperNodeValidator) -> None:
    # spine-1 re-submitted with another child: its old selection of rack-1 no longer counts.
    verdict = validator.validate(
        hn("spine-1", 2, [ex("rack-1", "HyperNode"), ex("rack-2", "HyperNode")])
    )
    assert verdict.allowed


def test_validator_memoises_members_across_requests(validator: HyperNodeValidator) -> None:
    obj = hn("big", 1, [ex(f"memo-node-{i}") for i in range(20)])
    assert validator.validate(obj).allowed
    size = validator.memo_size()
    assert validator.validate(obj).allowed
    assert validator.memo_size() == size


@pytest.mark.parametrize(
    "obj",
    [
        None,
        [],
        "x",
        {"spec": None},
        {"metadata": {"name": 5}, "spec": {"members": [None, 1]}},
        {
            "metadata": {"name": "a"},
            "spec": {"tier": True, "members": [{"type": "Node", "selector": []}]},
        },
    ],
    ids=["none", "list", "string", "null-spec", "junk-members", "wrong-types"],
)
def test_validator_never_raises_on_garbage(validator: HyperNodeValidator, obj: Any) -> None:
    verdict = validator.validate(obj)
    assert verdict.allowed is False
    assert verdict.message


def test_validator_denies_an_exact_node_member_claimed_by_another_leaf(
    validator: HyperNodeValidator,
) -> None:
    verdict = validator.validate(hn("rack-x", 1, [ex("node-9"), ex("node-2")]))
    assert (verdict.allowed, verdict.stage) == (False, "tree")
    assert verdict.message == (
        'Node "node-2" is already a member of HyperNode "rack-2"; a node can belong to only one '
        'leaf HyperNode, so HyperNode "rack-x" cannot select it too'
    )
    # the same leaf re-submitted (UPDATE) does not conflict with itself
    assert validator.validate(hn("rack-2", 1, [ex("node-2"), ex("node-3")])).allowed


@pytest.mark.parametrize(
    ("members", "other"),
    [
        ([rx("^node-[12]$")], "rack-1"),
        ([lm()], "rack-l"),
    ],
    ids=["regex-matches-exact-names", "label-selectors-compatible"],
)
def test_validator_warns_for_node_members_that_may_overlap(members: list[Any], other: str) -> None:
    existing = [*EXISTING, hn("rack-l", 1, [lm()])]
    verdict = HyperNodeValidator(StaticLister(existing)).validate(hn("rack-new", 1, members))
    assert verdict.allowed
    assert any(f'may select the same nodes as HyperNode "{other}"' in w for w in verdict.warnings)


def test_validator_no_overlap_warning_for_contradicting_label_selectors() -> None:
    existing = [hn("rack-l", 1, [lm()])]
    other = {"type": "Node", "selector": {"labelMatch": {"matchLabels": {"rack": "b"}}}}
    verdict = HyperNodeValidator(StaticLister(existing)).validate(hn("rack-new", 1, [other]))
    assert verdict.allowed
    assert verdict.warnings == ()


def test_validator_only_warns_when_a_discovery_source_moves_a_node(
    validator: HyperNodeValidator,
) -> None:
    moved = hn("rack-x", 1, [ex("node-2")])
    moved["metadata"]["labels"] = {"volcano.sh/network-topology-source": "label"}
    verdict = validator.validate(moved)
    assert verdict.allowed
    assert any('"node-2" is already a member of HyperNode "rack-2"' in w for w in verdict.warnings)


def test_pruning_the_selector_cache_survives_an_insert_from_another_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Webhook threads share the cache: an insert while one thread prunes must not break it."""
    stale = {f"gone-{i}": (str(i), tree.NodeSelectors(frozenset(), (), ())) for i in range(100)}
    monkeypatch.setattr(tree, "_NODE_SELECTORS", dict(stale))

    class Racing(dict[str, Any]):
        """The stored HyperNodes; each membership test lets 'another thread' insert."""

        inserted = 0

        def __contains__(self, key: object) -> bool:
            Racing.inserted += 1
            tree._NODE_SELECTORS[f"new-{Racing.inserted}"] = stale["gone-0"]
            return super().__contains__(key)

    tree.forget_deleted(Racing({"kept": {}}))
    assert Racing.inserted == 100
    assert not any(name.startswith("gone-") for name in tree._NODE_SELECTORS)


def _label_leaf(selector: dict[str, Any]) -> dict[str, Any]:
    return hn("leaf-x", 1, [{"type": "Node", "selector": {"labelMatch": selector}}])


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        ({"matchExpressions": [{"key": "rack", "operator": "Bogus", "values": ["a"]}]},
         'spec.members[0].selector.labelMatch.matchExpressions[0].operator: Invalid value: '
         '"Bogus": not a valid selector operator'),
        ({"matchExpressions": [{"key": "//bad key//", "operator": "Exists"}]},
         'spec.members[0].selector.labelMatch.matchExpressions[0].key: Invalid value: '
         '"//bad key//": a valid label key must consist of alphanumeric characters'),
        ({"matchLabels": {"//bad key//": "x"}},
         'spec.members[0].selector.labelMatch.matchLabels: Invalid value: "//bad key//": '),
        ({"matchExpressions": [{"key": "rack", "operator": "In"}]},
         "spec.members[0].selector.labelMatch.matchExpressions[0].values: Required value: "
         "must be specified when `operator` is 'In' or 'NotIn'"),
    ],
    ids=["operator", "expression-key", "label-key", "in-without-values"],
)  # fmt: skip
def test_validator_denies_a_label_match_the_api_server_would_not_accept(
    validator: HyperNodeValidator, selector: dict[str, Any], message: str
) -> None:
    verdict = validator.validate(_label_leaf(selector))
    assert (verdict.allowed, verdict.reason) == (False, "Invalid")
    assert verdict.message.startswith(message)


@pytest.mark.parametrize(
    "member",
    [
        {"type": "Node", "selector": {"labelMatch": {"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "Exists"}]}}},
        rx(".*"),
    ],
    ids=["hostname-exists", "match-everything"],
)  # fmt: skip
def test_validator_warns_when_a_pattern_may_take_another_leafs_nodes(
    validator: HyperNodeValidator, member: dict[str, Any]
) -> None:
    verdict = validator.validate(hn("leaf-x", 1, [member]))
    assert verdict.allowed
    assert any(
        'HyperNode "leaf-x" may select the same nodes as HyperNode "rack-1"' in w
        and "quarantined" in w
        for w in verdict.warnings
    )


def _discovered(obj: dict[str, Any]) -> dict[str, Any]:
    obj["metadata"]["labels"] = {"volcano.sh/network-topology-source": "label"}
    return obj


def test_a_hand_made_label_leaf_beside_discovered_leaves_is_warned_naming_them() -> None:
    discovered = [_discovered(hn(f"hypernode-rack-{i}", 1, [ex(f"node-{i}")])) for i in range(5)]
    verdict = HyperNodeValidator(StaticLister(discovered)).validate(hn("rack-0", 1, [lm()]))
    assert verdict.allowed
    assert list(verdict.warnings) == [
        'HyperNode "rack-0" (made by hand) may select the same nodes as the discovered '
        'HyperNode(s) "hypernode-rack-0", "hypernode-rack-1", "hypernode-rack-2" and 2 more '
        "(one lists Nodes by name, the other selects them by label); a node under two leaf "
        "HyperNodes is quarantined by the scheduler: keep one kind (delete the hand-made "
        "HyperNodes or turn the discovery source off)"
    ]
    # the discoverer writing its leaf beside the hand-made one is told the same, once
    verdict = HyperNodeValidator(StaticLister([hn("rack-0", 1, [lm()])])).validate(discovered[0])
    assert verdict.allowed
    assert len(verdict.warnings) == 1
    assert verdict.warnings[0].startswith(
        'HyperNode "hypernode-rack-0" (discovered) may select the same nodes as the made by '
        'hand HyperNode(s) "rack-0"'
    )


def test_hand_made_label_and_name_leaves_of_one_origin_get_no_such_warning() -> None:
    verdict = HyperNodeValidator(StaticLister(EXISTING)).validate(hn("rack-l", 1, [lm()]))
    assert verdict.allowed
    assert not any("made by hand" in w for w in verdict.warnings)
