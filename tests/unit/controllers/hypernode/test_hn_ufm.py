from __future__ import annotations

import base64
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from urllib3.exceptions import (
    ConnectTimeoutError,
    HTTPError,
    MaxRetryError,
    NameResolutionError,
    NewConnectionError,
    ReadTimeoutError,
)

from tests.unit.controllers.hypernode.hnfakes import members_of
from volcano_py.controllers.hypernode.config import ConfigError, DiscoveryConfig, SecretRef
from volcano_py.controllers.hypernode.discovery import (
    DiscovererStartError,
    DiscoveryContext,
    DiscoveryError,
)
from volcano_py.controllers.hypernode.ufm import (
    UFMDiscoverer,
    _describe,
    leaf_groups,
    split_userinfo,
    ufm_hypernodes,
)
from volcano_py.kube.errors import Forbidden, NotFound
from volcano_py.kube.store import Store

RECORDED = Path(__file__).resolve().parents[4] / "tests" / "data" / "ufm" / "ports.json"


def port(node: str, leaf: str, description: str = "Computer IB Port") -> dict:
    return {"description": description, "system_name": node, "peer_node_name": leaf, "tier": 1}


def test_leaf_groups_joins_leaves_that_share_a_node_and_numbers_by_smallest_leaf() -> None:
    ports = [
        port("n5", "leaf-9"),
        port("n1", "leaf-2"),
        port("n1", "leaf-3"),  # n1 joins leaf-2 and leaf-3
        port("n2", "leaf-3"),
        port("n3", "leaf-10"),  # "leaf-10" < "leaf-2" in string order
        port("n9", "leaf-x", description="Switch IB Port"),  # not a computer port
        {"description": "Computer", "system_name": "", "peer_node_name": "leaf-y"},
        "garbage",
    ]
    assert leaf_groups(ports) == [
        (["leaf-10"], ["n3"]),
        (["leaf-2", "leaf-3"], ["n1", "n2"]),
        (["leaf-9"], ["n5"]),
    ]


def test_leaf_groups_follow_chains_of_shared_nodes() -> None:
    ports = [port("a", "l1"), port("a", "l2"), port("b", "l2"), port("b", "l3"), port("c", "l4")]
    assert [leaves for leaves, _ in leaf_groups(ports)] == [["l1", "l2", "l3"], ["l4"]]


def test_ufm_hypernodes_are_leaf_groups_under_one_spine() -> None:
    hypernodes = ufm_hypernodes([port("n1", "l1"), port("n2", "l2")])
    assert [(h["metadata"]["name"], h["spec"]["tier"]) for h in hypernodes] == [
        ("leaf-hn-l1", 1),
        ("leaf-hn-l2", 1),
        ("spine-hn", 2),
    ]
    assert members_of(hypernodes[2]) == ["leaf-hn-l1", "leaf-hn-l2"]
    assert hypernodes[0]["spec"]["members"][0]["type"] == "Node"
    assert hypernodes[2]["spec"]["members"][0]["type"] == "HyperNode"
    assert hypernodes[0]["metadata"]["labels"] == {"volcano.sh/network-topology-source": "ufm"}
    assert ufm_hypernodes([]) == []


def test_ufm_hypernodes_from_the_recorded_port_data() -> None:
    hypernodes = ufm_hypernodes(json.loads(RECORDED.read_text()))
    names = [h["metadata"]["name"] for h in hypernodes]
    assert names == [
        "leaf-hn-leaf-switch-a1",
        "leaf-hn-leaf-switch-b1",
        "leaf-hn-leaf-switch-c1",
        "spine-hn",
    ]
    assert members_of(hypernodes[0]) == ["gpu-node-01", "gpu-node-02", "gpu-node-03", "gpu-node-04"]
    assert members_of(hypernodes[1]) == ["gpu-node-05", "gpu-node-06"]
    assert members_of(hypernodes[2]) == ["gpu-node-07"]


def secret(**data: str) -> dict:
    return {"data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}}


def discoverer(
    config: dict, secrets: dict[tuple[str, str], dict] | None = None, ref: bool = True
) -> UFMDiscoverer:
    def get_secret(namespace: str, name: str) -> dict:
        try:
            return (secrets or {})[(namespace, name)]
        except KeyError:
            raise NotFound(404, "NotFound", "no") from None

    entry = DiscoveryConfig(
        "ufm", enabled=True, config=config, secret_ref=SecretRef("creds", "vs") if ref else None
    )
    return UFMDiscoverer(entry, DiscoveryContext(Store(), Store(), get_secret=get_secret))


@pytest.mark.parametrize(
    ("config", "secrets", "ref", "fragment", "retryable"),
    [
        (
            {},
            {("vs", "creds"): secret(username="u", password="p")},
            True,
            "endpoint is not configured",
            False,
        ),
        ({"endpoint": "ufm"}, {}, False, "credentials are not configured", False),
        ({"endpoint": "ufm"}, {}, True, "Secret vs/creds not found", True),
        (
            {"endpoint": "ufm"},
            {("vs", "creds"): secret(username="u")},
            True,
            "no 'password' key",
            False,
        ),
    ],
    ids=["no-endpoint", "no-credentials", "secret-missing", "password-missing"],
)
def test_ufm_refuses_to_start_without_endpoint_or_credentials(
    config: dict, secrets: dict, ref: bool, fragment: str, retryable: bool
) -> None:
    d = discoverer(config, secrets, ref)
    with pytest.raises(DiscovererStartError, match=fragment) as caught:
        d.check()
    assert caught.value.retryable is retryable


def test_ufm_endpoint_defaults_to_https_and_verification_stays_on() -> None:
    d = discoverer({"endpoint": "ufm.example.com:8443/"})
    assert d.url == "https://ufm.example.com:8443/ufmRest/resources/ports"
    assert d.insecure_skip_verify is False
    assert d.timeout == 30.0


@pytest.mark.parametrize(
    ("config", "fragment"),
    [
        ({"endpoint": 5}, "config.endpoint"),
        ({"endpoint": "ftp://x"}, "http(s) URL"),
        ({"endpoint": "x", "insecureSkipVerify": "yes"}, "config.insecureSkipVerify"),
        ({"endpoint": "x", "timeout": "soon"}, "config.timeout"),
    ],
    ids=["endpoint-type", "scheme", "insecure-type", "timeout"],
)
def test_ufm_rejects_a_bad_config_naming_the_field(config: dict, fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        discoverer(config)


@pytest.mark.parametrize(
    ("url", "clean", "credentials"),
    [
        ("https://admin:s3cr%40t@ufm:8443/x", "https://ufm:8443/x", ("admin", "s3cr@t")),
        ("ufm.example.com", "ufm.example.com", None),
        ("https://ufm/a@b", "https://ufm/a@b", None),
        ("https://token@ufm", "https://ufm", None),
        ("u:p@ufm?q=1", "ufm?q=1", ("u", "p")),
    ],
    ids=["user-password", "plain", "at-in-path", "user-only", "no-scheme"],
)
def test_split_userinfo_removes_credentials_from_the_authority_only(
    url: str, clean: str, credentials: tuple[str, str] | None
) -> None:
    assert split_userinfo(url) == (clean, credentials)


def test_ufm_endpoint_credentials_never_reach_messages_and_serve_as_fallback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    d = discoverer({"endpoint": "https://admin:hunter2@ufm.example.com"}, ref=False)
    assert d.url == "https://ufm.example.com/ufmRest/resources/ports"
    assert d._credentials() == ("admin", "hunter2")
    d.check()  # URL credentials stand in for a missing secretRef
    with pytest.raises(ConfigError) as caught:
        discoverer({"endpoint": "ftp://admin:hunter2@ufm"})
    assert "hunter2" not in str(caught.value)
    assert "hunter2" not in caplog.text


def test_ufm_secret_wins_over_url_credentials() -> None:
    d = discoverer(
        {"endpoint": "https://admin:old@ufm"},
        {("vs", "creds"): secret(username="u", password="p")},
        True,
    )
    assert d._credentials() == ("u", "p")


def _connection_error(cause: BaseException, dns: bool = False) -> Exception:
    error: Exception
    try:
        if dns:
            raise NameResolutionError("ufm.invalid", None, cause)  # type: ignore[arg-type]
        raise NewConnectionError(None, f"Failed to establish a new connection: {cause}")  # type: ignore[arg-type]
    except NewConnectionError as raised:
        raised.__cause__ = cause
        error = raised
    return MaxRetryError(None, "/ufmRest/resources/ports", error)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("error", "text"),
    [
        (
            _connection_error(ConnectionRefusedError(111, "Connection refused")),
            "connection refused",
        ),
        (
            _connection_error(socket.gaierror(-2, "Name or service not known"), dns=True),
            "host name could not be resolved",
        ),
        (_connection_error(OSError(113, "No route to host")), "host unreachable"),
        (MaxRetryError(None, "/", ReadTimeoutError(None, "/", "read timed out")), "timed out"),  # type: ignore[arg-type]
        (
            MaxRetryError(None, "/", ConnectTimeoutError("connect timed out")),
            "timed out connecting",
        ),  # type: ignore[arg-type]
    ],
    ids=["refused", "dns", "unreachable", "read-timeout", "connect-timeout"],
)
def test_ufm_transport_errors_say_what_happened(error: Exception, text: str) -> None:
    described = _describe(error)
    assert text in described
    if text != "timed out" and "timed out" not in text:
        assert "timed out" not in described


def test_ufm_names_a_forbidden_secret_and_how_to_grant_it() -> None:
    def forbidden(namespace: str, name: str) -> dict:
        raise Forbidden(403, "Forbidden", "secrets is forbidden")

    entry = DiscoveryConfig(
        "ufm", enabled=True, config={"endpoint": "ufm"}, secret_ref=SecretRef("creds", "vs")
    )
    d = UFMDiscoverer(entry, DiscoveryContext(Store(), Store(), get_secret=forbidden))
    with pytest.raises(DiscovererStartError, match="Secret vs/creds: forbidden") as caught:
        d.check()
    assert "docs/operations.md" in str(caught.value)
    assert caught.value.retryable


def test_ufm_refuses_plain_http_unless_insecure_is_set() -> None:
    with pytest.raises(ConfigError, match=r"http:// would send the UFM password unencrypted"):
        discoverer({"endpoint": "http://ufm.example"})
    with pytest.raises(ConfigError, match=r"config.insecure: expected true or false"):
        discoverer({"endpoint": "http://ufm.example", "insecure": "yes"})
    assert discoverer({"endpoint": "http://ufm.example", "insecure": True}).plain_http
    assert not discoverer({"endpoint": "ufm.example"}).plain_http


def test_ufm_over_plain_http_warns_every_round(caplog: pytest.LogCaptureFixture) -> None:
    creds = {("vs", "creds"): secret(username="u", password="hunter2")}
    d = discoverer({"endpoint": "http://ufm.example", "insecure": True}, creds)

    class Down:  # the pool our discoverer builds; no socket in a unit test
        def request(self, *args: object, **kwargs: object) -> None:
            raise HTTPError("down")

    d._pool = Down()  # type: ignore[assignment]
    for _ in range(2):
        with pytest.raises(DiscoveryError):
            d.fetch_links()
    warned = [r for r in caplog.records if "unencrypted" in r.getMessage()]
    assert len(warned) == 2
    assert all("hunter2" not in r.getMessage() for r in caplog.records)


def test_ufm_leaf_names_stay_when_another_group_appears_before_them() -> None:
    before = ufm_hypernodes([port("n1", "sw-b"), port("n2", "sw-c")])
    after = ufm_hypernodes([port("n0", "sw-a"), port("n1", "sw-b"), port("n2", "sw-c")])
    names = {h["metadata"]["name"]: members_of(h) for h in after}
    for hypernode in before[:2]:
        assert names[hypernode["metadata"]["name"]] == members_of(hypernode)


def test_ufm_leaf_names_of_unsafe_switch_names_are_hashed_and_distinct() -> None:
    hypernodes = ufm_hypernodes([port("n1", "Leaf_A"), port("n2", "leaf-a")])
    names = [h["metadata"]["name"] for h in hypernodes]
    assert names[0].startswith("leaf-hn-leaf-a-")
    assert len(names[0]) == len("leaf-hn-leaf-a-") + 8
    assert names[1] == "leaf-hn-leaf-a"


HOSTILE = """
import resource, sys
from volcano_py.controllers.hypernode.discovery import DiscoveryError
from tests.unit.controllers.hypernode.test_hn_ufm import discoverer

item, size = sys.argv[1].encode(), 50_000_000
body = bytearray(size)
body[0:1] = b"["
chunk = item * (1_000_000 // len(item))
pos = 1
while pos + len(chunk) < size - 1:
    body[pos : pos + len(chunk)] = chunk
    pos += len(chunk)
body[pos - 1 : pos] = b"]"
del body[pos:]
try:
    discoverer({"endpoint": "ufm"})._links(body)
    print("accepted")
except DiscoveryError as e:
    print(e)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
"""


@pytest.mark.timeout(120)  # a hang guard: the verdict is the refusal and the child's memory
@pytest.mark.parametrize(
    ("item", "refusal"),
    [
        ("{},", "more than 1000000 items (size cap)"),
        ('{"description":"Computer","system_name":"n","peer_node_name":"l"},',
         "more than 200000 computer ports (size cap)"),
        ('"' + "x" * 40 + '",', "more than 1000000 items (size cap)"),
    ],
    ids=["empty-objects", "computer-ports", "strings"],
)  # fmt: skip
def test_ufm_refuses_a_hostile_50mb_body_with_a_peak_under_200mb(item: str, refusal: str) -> None:
    root = Path(__file__).resolve().parents[4]
    done = subprocess.run(
        [sys.executable, "-c", HOSTILE, item], capture_output=True, text=True, cwd=root, check=True
    )
    message, peak_mb = done.stdout.strip().splitlines()
    assert refusal in message
    assert int(peak_mb) <= 200


def test_ufm_reads_ports_one_at_a_time_and_keeps_only_computer_links() -> None:
    ports = [port("n1", "l1"), port("n2", "l1", description="Switch"), {"nested": [[{"a": 1}]]}, 7]
    body = bytearray(json.dumps(ports).encode())
    assert discoverer({"endpoint": "ufm"})._links(body) == [("n1", "l1")]
    with pytest.raises(DiscoveryError, match="returned a JSON object, not a port list"):
        discoverer({"endpoint": "ufm"})._links(bytearray(b' {"ports": []}'))
    with pytest.raises(DiscoveryError, match="did not return JSON"):
        discoverer({"endpoint": "ufm"})._links(bytearray(b"<html>"))
