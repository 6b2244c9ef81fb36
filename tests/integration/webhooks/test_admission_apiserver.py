"""The API server itself calls `volcano-py webhook` over TLS (url + caBundle) and enforces the
ValidatingAdmissionPolicy from manifests/admission, on the same cases.

Every HyperNode here carries the session's opt-in label (see conftest) and a unique name.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.builders import exact, hypernode_body, label, regex
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import ApiError, NotFound

WEBHOOK_DENIED = 'admission webhook "validatehypernode.volcano.sh" denied the request: '


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def created(client: KubeClient) -> Iterator[list[str]]:
    names: list[str] = []
    yield names
    for name in names:
        with contextlib.suppress(NotFound):
            client.delete(R.HYPERNODES, name)


@pytest.fixture
def make(
    client: KubeClient,
    created: list[str],
    webhook_server: dict[str, Any],
    webhook_labels: dict[str, str],
) -> Callable[..., dict[str, Any]]:
    """Create a HyperNode that goes through our webhook; returns the stored object."""

    def create(name: str, tier: int, members: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
        body = hypernode_body(name, tier, members, labels=webhook_labels)
        body["spec"].update(spec)
        stored = client.create(R.HYPERNODES, body)
        created.append(name)
        return stored

    return create


def _wait_cached(client: KubeClient, name: str) -> None:
    """Give the webhook's informer a moment to see a just-created HyperNode."""
    client.get(R.HYPERNODES, name)
    time.sleep(0.5)


def _denial(call: Callable[[], Any]) -> str:
    with pytest.raises(ApiError) as info:
        call()
    return info.value.message


def test_webhook_stores_valid_hypernode(make: Callable[..., Any], client: KubeClient) -> None:
    name = _name("rack")
    make(name, 1, [exact("node-1"), regex("^gpu-[0-9]+$"), label({"rack": "a"})])
    assert client.get(R.HYPERNODES, name)["spec"]["tier"] == 1


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        ("node-(", "error parsing regexp: missing closing ): `node-(`"),
        ("a**", "error parsing regexp: invalid nested repetition operator: `**`"),
        ("[z-a]", "error parsing regexp: invalid character class range: `z-a`"),
        ("x{2,1}", "error parsing regexp: invalid repeat count: `{2,1}`"),
    ],
    ids=["unclosed-group", "nested-repeat", "bad-class-range", "bad-repeat-count"],
)
def test_webhook_denies_invalid_regex_with_reason(
    make: Callable[..., Any], pattern: str, reason: str
) -> None:
    message = _denial(lambda: make(_name("rx"), 1, [regex(pattern)]))
    assert message.startswith(WEBHOOK_DENIED)
    assert f"member regexMatch pattern is invalid: {reason}" in message


def test_webhook_denies_second_parent_naming_both(
    make: Callable[..., Any], client: KubeClient
) -> None:
    rack, spine_a, spine_b = _name("rack"), _name("spine-a"), _name("spine-b")
    make(rack, 1, [exact("node-1")])
    make(spine_a, 2, [exact(rack, "HyperNode")])
    _wait_cached(client, spine_a)
    message = _denial(lambda: make(spine_b, 2, [exact(rack, "HyperNode")]))
    assert message.startswith(WEBHOOK_DENIED)
    assert (
        f'member HyperNode "{rack}" of HyperNode "{spine_b}" already has the parent '
        f'HyperNode "{spine_a}"' in message
    )


def test_webhook_denies_cycle_on_update(make: Callable[..., Any], client: KubeClient) -> None:
    low, high = _name("low"), _name("high")
    make(low, 1, [exact("node-1")])
    make(high, 2, [exact(low, "HyperNode")])
    _wait_cached(client, high)
    stored = client.get(R.HYPERNODES, low)
    stored["spec"]["members"] = [exact(high, "HyperNode")]
    stored["spec"]["tier"] = 3
    message = _denial(lambda: client.update(R.HYPERNODES, stored))
    assert f'HyperNode "{low}" would form a cycle: {low} -> {high} -> {low}' in message


def test_webhook_denies_child_with_tier_not_lower(
    make: Callable[..., Any], client: KubeClient
) -> None:
    child, parent = _name("child"), _name("parent")
    make(child, 2, [exact("node-1")])
    _wait_cached(client, child)
    message = _denial(lambda: make(parent, 2, [exact(child, "HyperNode")]))
    assert (
        f'member HyperNode "{child}" (tier 2) of HyperNode "{parent}" (tier 2) must have '
        "a lower tier than its parent" in message
    )


def test_webhook_denies_label_match_on_hypernode_member(make: Callable[..., Any]) -> None:
    name = _name("spine")
    message = _denial(lambda: make(name, 2, [label({"tier": "1"}, "HyperNode")]))
    assert (
        f'HyperNode "{name}": spec.members[0] is of type HyperNode but uses labelMatch' in message
    )


def test_webhook_allows_missing_member_hypernode(
    make: Callable[..., Any], client: KubeClient
) -> None:
    name = _name("spine")
    make(name, 2, [exact(_name("not-yet"), "HyperNode")])
    assert client.get(R.HYPERNODES, name)["metadata"]["name"] == name


def test_webhook_denies_qualified_name_failure_past_the_crd(make: Callable[..., Any]) -> None:
    too_long_part = "n" * 70  # a valid DNS subdomain, but not a qualified name (> 63)
    message = _denial(lambda: make(_name("rack"), 1, [exact(too_long_part)]))
    assert message.startswith(WEBHOOK_DENIED)
    assert "spec.members[0]: member exactMatch validate failed" in message


def test_webhook_denies_member_without_selector(make: Callable[..., Any]) -> None:
    message = _denial(lambda: make(_name("rack"), 1, [{"type": "Node"}]))
    assert (
        "spec.members[0]: member selector must have one of exactMatch, regexMatch, "
        "or labelMatch" in message
    )


def test_webhook_denies_hypernode_without_members(
    client: KubeClient,
    webhook_server: dict[str, Any],
    webhook_labels: dict[str, str],
    created: list[str],
) -> None:
    body = hypernode_body(_name("empty"), 1, [], labels=webhook_labels)
    del body["spec"]["members"]
    created.append(body["metadata"]["name"])
    message = _denial(lambda: client.create(R.HYPERNODES, body))
    assert message == WEBHOOK_DENIED + "member must have at least one member"


def test_crd_rules_reject_before_the_webhook(make: Callable[..., Any]) -> None:
    both = {
        "type": "Node",
        "selector": {"exactMatch": {"name": "a"}, "regexMatch": {"pattern": "b"}},
    }
    message = _denial(lambda: make(_name("rack"), 1, [both]))
    assert "Only one of ExactMatch, RegexMatch, or LabelMatch can be specified" in message
    assert WEBHOOK_DENIED not in message
    message = _denial(lambda: make(_name("rack"), -1, [exact("node-1")]))
    assert "spec.tier in body should be greater than or equal to 0" in message
    assert WEBHOOK_DENIED not in message


# --- the ValidatingAdmissionPolicy from manifests/ -----------------------------------------


def _policy_denial(client: KubeClient, body: dict[str, Any], created: list[str]) -> str:
    """Create until the policy (synced asynchronously by the API server) denies."""
    created.append(body["metadata"]["name"])
    deadline = time.monotonic() + 20
    while True:
        try:
            client.create(R.HYPERNODES, body)
        except ApiError as e:
            if "ValidatingAdmissionPolicy" in e.message:
                return e.message
            raise
        client.delete(R.HYPERNODES, body["metadata"]["name"])
        if time.monotonic() > deadline:
            raise AssertionError("the ValidatingAdmissionPolicy never denied")
        time.sleep(0.3)


@pytest.mark.parametrize(
    ("members", "message"),
    [
        (None, "member must have at least one member"),
        (
            [{"type": "Node"}],
            "member selector must have one of exactMatch, regexMatch, or labelMatch",
        ),
        ([exact("n" * 70)], "member exactMatch validate failed [name part must consist of"),
    ],
    ids=["no-members", "no-selector", "not-a-qualified-name"],
)
def test_policy_denies_what_the_webhook_denies(
    client: KubeClient,
    admission_policy: str,
    policy_labels: dict[str, str],
    created: list[str],
    members: list[dict[str, Any]] | None,
    message: str,
) -> None:
    body = hypernode_body(_name("vap"), 1, members or [], labels=policy_labels)
    if members is None:
        del body["spec"]["members"]
    text = _policy_denial(client, body, created)
    assert f"ValidatingAdmissionPolicy '{admission_policy}'" in text
    assert message in text


def test_policy_stores_valid_hypernode(
    client: KubeClient, admission_policy: str, policy_labels: dict[str, str], created: list[str]
) -> None:
    _policy_denial(
        client,
        hypernode_body(_name("vap"), 1, [], labels=policy_labels) | {"spec": {"tier": 1}},
        created,
    )  # policy active now
    name = _name("vap-ok")
    client.create(R.HYPERNODES, hypernode_body(name, 1, [exact("node-1")], labels=policy_labels))
    created.append(name)
    assert client.get(R.HYPERNODES, name)["metadata"]["name"] == name
