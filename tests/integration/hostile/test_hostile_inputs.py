"""Hostile inputs of issue 26, replayed through the real API server with the webhook installed.

After each input a small gang must still bind (its bind time printed; the 2 s goal is read from
those figures, not asserted) and the worker's RSS stay under the Deployment's memory limit
(``Hostile.assert_still_serving``). The figures printed (``-s``) are the rows of
docs/operations.md's fault table.
"""

from __future__ import annotations

import json
import socket
import ssl
import time
from typing import Any

import pytest

from tests.builders import deployment_body, exact, hypernode_body, regex
from tests.integration.hostile.conftest import SYSTEM_NS, Hostile
from volcano_py.api import resources as R
from volcano_py.kube.errors import ApiError, NotFound

pytestmark = pytest.mark.timeout(300)


def bomb(levels: int = 9, fanout: int = 9, indent: str = "") -> str:
    """The "billion laughs" YAML: ``fanout ** levels`` words once its aliases are expanded."""
    lines = [f"{indent}l0: &l0 [{', '.join(['lol'] * fanout)}]"]
    lines += [
        f"{indent}l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * fanout)}]" for i in range(1, levels)
    ]
    return "\n".join(lines) + "\n"


def put_configmap(hostile: Hostile, name: str, key: str, text: str) -> None:
    body = {"metadata": {"name": name, "namespace": SYSTEM_NS}, "data": {key: text}}
    try:
        current = hostile.client.get(R.CONFIGMAPS, name, SYSTEM_NS)
        current["data"] = body["data"]
        hostile.client.update(R.CONFIGMAPS, current)
    except NotFound:
        hostile.client.create(R.CONFIGMAPS, body, SYSTEM_NS)


def wait_for(predicate: Any, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError("condition not met in time")


def create_refused(hostile: Hostile, resource: R.APIResource, body: dict[str, Any]) -> str:
    ns = body["metadata"].get("namespace", "")
    with pytest.raises(ApiError) as err:
        hostile.client.create(resource, body, ns) if ns else hostile.client.create(resource, body)
    assert err.value.status in (400, 403, 422), err.value
    return err.value.message


@pytest.mark.parametrize("tier", [17, 2**31 - 1, 2**31], ids=["max+1", "int32-max", "2^31"])
def test_a_huge_tier_is_refused_naming_spec_tier(
    hostile: Hostile, namespace: str, tier: int
) -> None:
    started = time.monotonic()
    message = create_refused(
        hostile, R.HYPERNODES, hypernode_body(f"huge-{tier}", tier, [exact("hostile-0")])
    )
    refused = time.monotonic() - started
    print(f"hostile: tier {tier} refused in {refused * 1000:.0f} ms: {message}")
    assert "spec.tier" in message
    assert "less than or equal to 16" in message
    hostile.assert_still_serving(namespace)


@pytest.mark.parametrize(
    ("selector", "field"),
    [
        ({"matchExpressions": [{"key": "rack", "operator": "Bogus", "values": ["a"]}]},
         "labelMatch.matchExpressions[0].operator"),
        ({"matchExpressions": [{"key": "//bad key//", "operator": "Exists"}]},
         "labelMatch.matchExpressions[0].key"),
    ],
    ids=["bogus-operator", "bad-key"],
)  # fmt: skip
def test_a_bad_label_match_is_refused_naming_the_field(
    hostile: Hostile, namespace: str, selector: dict[str, Any], field: str
) -> None:
    member = {"type": "Node", "selector": {"labelMatch": selector}}
    message = create_refused(hostile, R.HYPERNODES, hypernode_body("bad-label", 1, [member]))
    assert field in message
    hostile.assert_still_serving(namespace)


@pytest.mark.parametrize(
    "member",
    [regex(".*"), {"type": "Node", "selector": {"labelMatch": {"matchExpressions": [
        {"key": "kubernetes.io/hostname", "operator": "Exists"}]}}}],
    ids=["regex-everything", "hostname-exists"],
)  # fmt: skip
def test_a_pattern_taking_every_node_is_quarantined_and_the_rest_schedules(
    hostile: Hostile, namespace: str, member: dict[str, Any]
) -> None:
    client = hostile.client
    client.create(R.HYPERNODES, hypernode_body("first-leaf", 1, [exact(n) for n in hostile.nodes]))
    client.create(R.HYPERNODES, hypernode_body("greedy-leaf", 1, [member]))
    try:

        def quarantined() -> dict[str, str]:
            status, body = hostile.manager.get("/api/topology")
            assert status == 200, body
            found: dict[str, str] = json.loads(body)["tree"]["quarantined"]
            return found

        reasons = wait_for(lambda: quarantined().get("greedy-leaf"))
        assert "first-leaf claimed it first" in reasons
        hostile.assert_still_serving(namespace)
    finally:
        for name in ("greedy-leaf", "first-leaf"):
            client.delete(R.HYPERNODES, name)


@pytest.mark.parametrize("resources", [{"cpu": "-1"}, {"nvidia.com/gpu": "-3"}], ids=["cpu", "gpu"])
def test_negative_min_resources_are_refused_naming_the_field(
    hostile: Hostile, namespace: str, resources: dict[str, str]
) -> None:
    body = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "negative", "namespace": namespace},
        "spec": {"minMember": 1, "minResources": resources},
    }
    message = create_refused(hostile, R.PODGROUPS, body)
    assert f"spec.minResources.{next(iter(resources))}" in message
    hostile.assert_still_serving(namespace)


def test_an_alias_bomb_in_the_scheduler_configmap_keeps_the_running_conf(
    hostile: Hostile, namespace: str
) -> None:
    text = (
        "x:\n"
        + bomb(indent="  ")
        + (
            "actions: enqueue, allocate\ntiers:\n- plugins:\n  - {name: gang}\n"
            "  - name: binpack\n    arguments: {binpack.weight: *l8}\n"
        )
    )
    assert len(text) < 700
    put_configmap(hostile, "volcano-scheduler-configmap", "volcano-scheduler.conf", text)

    def rejected() -> str:
        status, body = hostile.manager.get("/readyz")
        return body if status == 200 and "last edit rejected" in body else ""

    body = wait_for(rejected)
    print(f"hostile: /readyz after the bomb, {len(body)} bytes: {body.strip()}")
    assert "expands to more than 100000 values (size cap)" in body
    assert len(body) < 2048
    # the recorder writes Events off the caller's thread: wait for it, as for /readyz
    events = wait_for(
        lambda: [
            e
            for e in hostile.client.list_all(R.EVENTS, SYSTEM_NS)
            if e.get("reason") == "InvalidSchedulerConf"
        ]
    )
    assert all(len(e["message"]) < 1024 for e in events)
    hostile.assert_still_serving(namespace)


def test_an_alias_bomb_in_the_discovery_configmap_is_refused(
    hostile: Hostile, namespace: str
) -> None:
    text = bomb() + "networkTopologyDiscovery: *l8\n"
    put_configmap(hostile, "volcano-controller-configmap", "volcano-controller.conf", text)
    wait_for(lambda: "volcano-controller.conf:6: expands to more than" in hostile.manager.log())
    hostile.assert_still_serving(namespace)


SMUGGLING = {
    "two-lengths": b"Content-Length: 2\r\nContent-Length: 100\r\n\r\n{}",
    "chunked-and-length": b"Transfer-Encoding: chunked\r\nContent-Length: 50\r\n\r\n2\r\n{}\r\n",
    "obsolete-folding": b"Content-Length: 50\r\nX-Folded: a\r\n b\r\n\r\n{}",
}


@pytest.mark.parametrize("tail", SMUGGLING.values(), ids=SMUGGLING.keys())
def test_request_smuggling_shapes_get_400_at_once(
    hostile: Hostile, namespace: str, tail: bytes
) -> None:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    head = b"POST /hypernodes/validate HTTP/1.1\r\nHost: webhook\r\n"
    address = ("127.0.0.1", hostile.manager.webhook_port)
    with (
        socket.create_connection(address, timeout=10) as raw,
        context.wrap_socket(raw) as tls,
    ):
        started = time.monotonic()
        tls.sendall(head + tail)
        answer = tls.recv(4096)
        elapsed = time.monotonic() - started
    status_line = answer.split(b"\r\n", 1)[0].decode()
    print(f"hostile: {status_line} in {elapsed * 1000:.0f} ms")
    # "at once" without a clock: a server that waited for the promised body would close the
    # connection at its request timeout without an answer; a 400 means it refused the head
    assert answer.startswith(b"HTTP/1.1 400"), answer[:200]
    hostile.assert_still_serving(namespace)


def test_group_min_member_zero_gets_an_event_and_min_member_one(
    hostile: Hostile, namespace: str
) -> None:
    hostile.client.create(
        R.DEPLOYMENTS,
        deployment_body(
            "zero",
            namespace,
            1,
            annotations={"scheduling.volcano.sh/group-min-member": "0"},
            requests={"cpu": "100m"},
        ),
    )
    groups = wait_for(lambda: hostile.client.list_all(R.PODGROUPS, namespace), timeout=60)
    assert groups[0]["spec"]["minMember"] == 1
    events = wait_for(
        lambda: [
            e
            for e in hostile.client.list_all(R.EVENTS, namespace)
            if e.get("reason") == "InvalidGroupMinMember"
        ],
        timeout=60,
    )
    assert "minMemberAnnotation 0 is not positive, minMember remains as 1" in events[0]["message"]
    hostile.assert_still_serving(namespace)


def test_ufm_over_plain_http_is_refused_without_insecure(hostile: Hostile, namespace: str) -> None:
    text = (
        "networkTopologyDiscovery:\n- source: ufm\n  enabled: true\n  interval: 1h\n"
        "  credentials: {secretRef: {name: ufm-credentials}}\n"
        "  config: {endpoint: 'http://127.0.0.1:9'}\n"
    )
    put_configmap(hostile, "volcano-controller-configmap", "volcano-controller.conf", text)
    wait_for(lambda: "http:// would send the UFM password unencrypted" in hostile.manager.log())
    hostile.assert_still_serving(namespace)
