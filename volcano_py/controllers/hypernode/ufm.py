"""The ``ufm`` discovery source: InfiniBand leaf groups from an NVIDIA UFM server.

Config::

    - source: ufm
      enabled: true
      interval: 10m
      credentials: {secretRef: {name: ufm-credentials, namespace: volcano-system}}
      config:
        endpoint: https://ufm.example.com     # required; "https://" is assumed without a scheme
        insecureSkipVerify: false             # TLS verification is on unless this is true
        insecure: false                       # ours: an http:// endpoint is refused unless true
                                              # (the password would travel unencrypted; a
                                              # warning every round when it is)
        caFile: /etc/ufm/ca.crt               # ours: trust this CA bundle instead of the system's
        timeout: 30s                          # ours: the whole request, default 30s

Each round is ``GET <endpoint>/ufmRest/resources/ports`` with HTTP basic auth (``username`` and
``password`` from the Secret, re-read every round so a rotated password is picked up), capped at
``MAX_BODY_BYTES``. The body is read one port at a time (``safeload.iter_json_array`` under
``UFM_LIMITS``: at most a million ports, 4,096 values a port) and only the ``(node, leaf
switch)`` link of each computer port is kept, at most ``MAX_COMPUTER_PORTS`` of them, so a
round's memory is the body's bytes plus those links whatever the body holds (a hostile 50 MB
body peaks under 200 MB: ``bench hostile``). Only ports whose ``description`` contains
``Computer`` are used: ``system_name`` is the node, ``peer_node_name`` its leaf switch. Leaf
switches that share a node belong to one group (connected components); a group becomes the
HyperNode ``leaf-hn-<its smallest leaf switch name>`` (tier 1, the group's nodes; ``names.py``
makes the name safe and stable: a group keeps its name while its smallest switch stays, where
Volcano numbers the groups ``leaf-hn-<i>`` and renames them all when one is added), and when
there is at least one group ``spine-hn`` (tier 2, every leaf HyperNode). A leaf HyperNode names
all its leaf switches in the ``UFM_LEAVES_ANNOTATION`` (comma-separated), so the topology view
can show the switches.

A missing endpoint or credentials refuse to start (``DiscovererStartError``). A round that
fails (connection, timeout, HTTP status, a body that is not a port list, too large) is
reported as a failure, which deletes nothing. No message or log line carries the password:
errors are described by what failed, never by the request they failed with.
"""

from __future__ import annotations

import base64
import dataclasses
import logging
import re
import socket
import ssl
import warnings
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import unquote

import urllib3

from volcano_py.api import JSON
from volcano_py.api import resources as R
from volcano_py.api.constants import (
    NETWORK_TOPOLOGY_SOURCE_LABEL,
    UFM_DISCOVERER,
    UFM_LEAVES_ANNOTATION,
    UFM_PORTS_PATH,
)
from volcano_py.api.safeload import UFM_LIMITS, UFM_PORT_VALUES, LoadError, brief, iter_json_array
from volcano_py.controllers.hypernode.config import ConfigError, DiscoveryConfig, parse_duration
from volcano_py.controllers.hypernode.discovery import (
    DiscovererStartError,
    DiscoveryContext,
    DiscoveryError,
    PeriodicDiscoverer,
)
from volcano_py.controllers.hypernode.names import stable_name
from volcano_py.kube.errors import ApiError, Forbidden, NotFound

log = logging.getLogger(__name__)


MAX_BODY_BYTES = 100 << 20
# Computer ports kept from one answer: 8 HCAs on each of 25,000 nodes; ~40 MB of links.
MAX_COMPUTER_PORTS = 200_000
DEFAULT_TIMEOUT_S = 30.0
_CHUNK = 1 << 16
_FIRST = re.compile(rb"\s*+(.)", re.DOTALL)
_NOT_A_LIST = {b"{": "object", b'"': "string"}


Link = tuple[str, str]  # (node, leaf switch) of one computer port


def computer_link(port: Any) -> Link | None:
    """``(system_name, peer_node_name)`` of a computer port; ``None`` for any other item."""
    if not isinstance(port, Mapping):
        return None
    description = port.get("description")
    if not isinstance(description, str) or "Computer" not in description:
        return None
    node, leaf = port.get("system_name"), port.get("peer_node_name")
    if not isinstance(node, str) or not isinstance(leaf, str) or not node or not leaf:
        return None
    return node, leaf


def leaf_groups(ports: Iterable[Any]) -> list[tuple[list[str], list[str]]]:
    """``(leaf switches, nodes)`` per connected group of leaves, numbered as documented."""
    links = (computer_link(port) for port in ports)
    return link_groups(link for link in links if link is not None)


def link_groups(links: Iterable[Link]) -> list[tuple[list[str], list[str]]]:
    """``leaf_groups`` of the computer ports' links."""
    leaf_nodes: dict[str, set[str]] = defaultdict(set)
    node_leaves: dict[str, set[str]] = defaultdict(set)
    for node, leaf in links:
        leaf_nodes[leaf].add(node)
        node_leaves[node].add(leaf)
    groups: list[tuple[list[str], list[str]]] = []
    seen: set[str] = set()
    for start in sorted(leaf_nodes):
        if start in seen:
            continue
        seen.add(start)
        frontier = [start]
        leaves: list[str] = []
        nodes: set[str] = set()
        while frontier:
            leaf = frontier.pop()
            leaves.append(leaf)
            for node in leaf_nodes[leaf]:
                nodes.add(node)
                for other in node_leaves[node]:
                    if other not in seen:
                        seen.add(other)
                        frontier.append(other)
        groups.append((sorted(leaves), sorted(nodes)))
    return groups


def ufm_hypernodes(ports: Iterable[Any]) -> list[JSON]:
    """The HyperNodes a UFM port list stands for (see the module docstring)."""
    return link_hypernodes(link for port in ports if (link := computer_link(port)) is not None)


def link_hypernodes(links: Iterable[Link]) -> list[JSON]:
    """``ufm_hypernodes`` of the computer ports' links."""
    hypernodes: list[JSON] = []
    leaf_names: list[str] = []
    for leaves, nodes in link_groups(links):
        name = stable_name("leaf-hn", [leaves[0]], f"{UFM_DISCOVERER}\x00leaf\x00{leaves[0]}")
        leaf_names.append(name)
        hypernode = _hypernode(name, 1, "Node", nodes)
        hypernode["metadata"]["annotations"] = {UFM_LEAVES_ANNOTATION: ",".join(leaves)}
        hypernodes.append(hypernode)
    if leaf_names:
        hypernodes.append(_hypernode("spine-hn", 2, "HyperNode", sorted(leaf_names)))
    return hypernodes


def _hypernode(name: str, tier: int, member_type: str, members: list[str]) -> JSON:
    return {
        "apiVersion": R.HYPERNODES.api_version,
        "kind": R.HYPERNODES.kind,
        "metadata": {"name": name, "labels": {NETWORK_TOPOLOGY_SOURCE_LABEL: UFM_DISCOVERER}},
        "spec": {
            "tier": tier,
            "members": [
                {"type": member_type, "selector": {"exactMatch": {"name": member}}}
                for member in members
            ],
        },
    }


class UFMDiscoverer(PeriodicDiscoverer):
    """The ``ufm`` source. See the module docstring."""

    def __init__(self, config: DiscoveryConfig, context: DiscoveryContext) -> None:
        super().__init__(UFM_DISCOVERER, config.interval, context.clock)
        settings = config.config
        endpoint = settings.get("endpoint")
        if endpoint is not None and not isinstance(endpoint, str):
            raise ConfigError(f"config.endpoint: expected a URL, got {type(endpoint).__name__}")
        # Credentials written into the URL are taken out of it at once: the endpoint that is
        # requested, logged and put into Events and conditions never carries them.
        self.endpoint, self._url_credentials = split_userinfo((endpoint or "").strip())
        self.endpoint = self.endpoint.rstrip("/")
        if self.endpoint and "://" not in self.endpoint:
            self.endpoint = "https://" + self.endpoint
        if self.endpoint and not self.endpoint.startswith(("https://", "http://")):
            raise ConfigError(f"config.endpoint: expected an http(s) URL, got {self.endpoint!r}")
        insecure = settings.get("insecureSkipVerify", False)
        if not isinstance(insecure, bool):
            raise ConfigError(
                f"config.insecureSkipVerify: expected true or false, got {insecure!r}"
            )
        self.insecure_skip_verify = insecure
        plain = settings.get("insecure", False)
        if not isinstance(plain, bool):
            raise ConfigError(f"config.insecure: expected true or false, got {brief(plain)}")
        if self.endpoint.startswith("http://") and not plain:
            raise ConfigError(
                "config.endpoint: http:// would send the UFM password unencrypted; use "
                "https:// or set config.insecure: true"
            )
        self.plain_http = self.endpoint.startswith("http://")
        ca_file = settings.get("caFile")
        if ca_file is not None and not isinstance(ca_file, str):
            raise ConfigError(f"config.caFile: expected a file path, got {ca_file!r}")
        self.ca_file = ca_file or None
        self.timeout = DEFAULT_TIMEOUT_S
        if settings.get("timeout") is not None:
            try:
                self.timeout = parse_duration(settings["timeout"])
            except ConfigError as e:
                raise ConfigError(f"config.timeout: {e}") from None
            if self.timeout <= 0:
                raise ConfigError("config.timeout: must be positive")
        self.secret_ref = config.secret_ref
        self.max_body_bytes = MAX_BODY_BYTES
        self._context = context
        self._pool: urllib3.PoolManager | None = None
        if self._url_credentials is not None:
            log.warning(
                "discovery source ufm: config.endpoint carries credentials; they are used "
                "only when credentials.secretRef is not set and are never logged; prefer "
                "a Secret"
            )
        if insecure:
            log.warning(
                "discovery source ufm: TLS certificate verification is disabled "
                "(insecureSkipVerify); do not use this in production"
            )

    @property
    def url(self) -> str:
        """The ports URL."""
        return self.endpoint + UFM_PORTS_PATH

    def check(self) -> None:
        """Refuse to start without an endpoint or usable credentials."""
        if not self.endpoint:
            raise DiscovererStartError("ufm: config.endpoint is not configured")
        self._credentials()

    def _credentials(self) -> tuple[str, str]:
        ref = self.secret_ref
        if ref is None and self._url_credentials is not None:
            return self._url_credentials
        if ref is None:
            raise DiscovererStartError(
                "ufm: credentials are not configured (credentials.secretRef with keys "
                "username and password)"
            )
        where = f"Secret {ref.namespace}/{ref.name}"
        try:
            secret = self._context.get_secret(ref.namespace, ref.name)
        except NotFound:
            raise DiscovererStartError(f"ufm: {where} not found", retryable=True) from None
        except Forbidden:
            raise DiscovererStartError(
                f"ufm: cannot read {where}: forbidden; volcano-py may read Secrets only in its "
                "own namespace unless granted `get` on this Secret (docs/operations.md)",
                retryable=True,
            ) from None
        except ApiError as e:
            raise DiscovererStartError(
                f"ufm: cannot read {where}: {e.status} {e.reason}", retryable=True
            ) from None
        values = []
        for key in ("username", "password"):
            value = _secret_value(secret, key)
            if not value:
                raise DiscovererStartError(f"ufm: {where} has no {key!r} key")
            values.append(value)
        return values[0], values[1]

    def _http(self) -> urllib3.PoolManager:
        if self._pool is None:
            if self.insecure_skip_verify:
                self._pool = urllib3.PoolManager(cert_reqs=ssl.CERT_NONE, retries=False)
            else:
                context = ssl.create_default_context(cafile=self.ca_file)
                self._pool = urllib3.PoolManager(ssl_context=context, retries=False)
        return self._pool

    def fetch_links(self) -> list[Link]:
        """GET the port list; the ``(node, leaf switch)`` link of each computer port in it.

        Raises:
            DiscoveryError: a message naming what failed (never the credentials).
        """
        try:
            username, password = self._credentials()
        except DiscovererStartError as e:
            raise DiscoveryError(str(e)) from None
        if self.plain_http:
            log.warning(
                "discovery source ufm: sending the UFM credentials unencrypted to %s "
                "(config.insecure: true); use https://",
                self.url,
            )
        token = base64.b64encode(f"{username}:{password}".encode()).decode("ascii")
        headers = {"Authorization": "Basic " + token, "Accept": "application/json"}
        try:
            with warnings.catch_warnings():
                # insecureSkipVerify was asked for and warned about once, at start
                warnings.simplefilter("ignore", urllib3.exceptions.InsecureRequestWarning)
                response = self._http().request(
                    "GET",
                    self.url,
                    headers=headers,
                    timeout=urllib3.Timeout(total=self.timeout),
                    preload_content=False,
                    redirect=False,
                )
        except urllib3.exceptions.HTTPError as e:
            raise DiscoveryError(f"ufm: GET {self.url} failed: {_describe(e)}") from None
        try:
            if response.status != 200:
                reason = "the credentials were rejected" if response.status in (401, 403) else ""
                detail = f" ({reason})" if reason else ""
                raise DiscoveryError(f"ufm: GET {self.url} answered HTTP {response.status}{detail}")
            body = self._read_capped(response)
        except DiscoveryError:
            response.close()  # the body is unread or cut short: do not reuse this connection
            raise
        response.release_conn()
        return self._links(body)

    def _links(self, body: bytearray) -> list[Link]:
        source = f"ufm: GET {self.url}"
        links: list[Link] = []
        try:
            first = _FIRST.match(body)
            kind = _NOT_A_LIST.get(first.group(1) if first else b"")
            if kind is not None:
                raise DiscoveryError(f"{source} returned a JSON {kind}, not a port list")
            limits = dataclasses.replace(UFM_LIMITS, max_bytes=self.max_body_bytes)
            for port in iter_json_array(body, source, limits, UFM_PORT_VALUES):
                link = computer_link(port)
                if link is None:
                    continue
                if len(links) == MAX_COMPUTER_PORTS:
                    raise DiscoveryError(
                        f"{source}: more than {MAX_COMPUTER_PORTS} computer ports (size cap)"
                    )
                links.append(link)
        except LoadError as e:
            raise DiscoveryError(str(e) if e.capped else f"{source} did not return JSON") from None
        return links

    def _read_capped(self, response: urllib3.BaseHTTPResponse) -> bytearray:
        body = bytearray()  # one buffer: no list of chunks joined into a second copy
        try:
            for chunk in response.stream(_CHUNK):
                if len(body) + len(chunk) > self.max_body_bytes:
                    raise DiscoveryError(
                        f"ufm: GET {self.url} returned more than {self.max_body_bytes} bytes"
                    )
                body += chunk
        except urllib3.exceptions.HTTPError as e:
            raise DiscoveryError(f"ufm: reading {self.url} failed: {_describe(e)}") from None
        return body

    def discover(self) -> list[JSON]:
        """One round: fetch the computer ports' links, build the HyperNodes."""
        links = self.fetch_links()
        hypernodes = link_hypernodes(links)
        log.info(
            "discovery source ufm: %d computer ports, %d leaf groups",
            len(links),
            max(0, len(hypernodes) - 1),
        )
        return hypernodes

    def stop(self) -> None:
        """Stop the loop and drop pooled connections."""
        super().stop()
        if self._pool is not None:
            self._pool.clear()


def _secret_value(secret: Mapping[str, Any], key: str) -> str:
    data = secret.get("data") or {}
    if isinstance(data.get(key), str):
        try:
            return base64.b64decode(data[key]).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            return ""
    string_data = secret.get("stringData") or {}
    value = string_data.get(key)
    return value if isinstance(value, str) else ""


def split_userinfo(url: str) -> tuple[str, tuple[str, str] | None]:
    """``url`` without any ``user:password@`` part, and that part's credentials if present.

    Only the authority's userinfo is removed; the rest of the URL is returned as written. A
    userinfo without a password yields no credentials (it is still removed).
    """
    scheme, sep, rest = url.partition("://") if "://" in url else ("", "", url)
    cut = len(rest)
    for stop in "/?#":
        index = rest.find(stop)
        if index != -1:
            cut = min(cut, index)
    authority, path = rest[:cut], rest[cut:]
    userinfo, at, host = authority.rpartition("@")
    if not at:
        return url, None
    clean = f"{scheme}{sep}{host}{path}"
    user, colon, password = userinfo.partition(":")
    if not colon or not user:
        return clean, None
    return clean, (unquote(user), unquote(password))


def _describe(error: Exception) -> str:
    """A short, credential-free description of a transport error, saying what really happened.

    urllib3 makes ``NewConnectionError`` (and ``NameResolutionError`` below it) a kind of
    ``ConnectTimeoutError``, so the specific cases are told apart before the timeout one.
    """
    if isinstance(error, urllib3.exceptions.MaxRetryError) and error.reason is not None:
        error = error.reason
    if isinstance(error, urllib3.exceptions.NameResolutionError):
        return "the host name could not be resolved"
    if isinstance(error, urllib3.exceptions.NewConnectionError):
        cause = error.__cause__ or error.__context__
        if isinstance(cause, ConnectionRefusedError) or "refused" in str(error).lower():
            return "connection refused"
        if isinstance(cause, TimeoutError | socket.timeout):
            return "timed out connecting"
        return "could not connect (host unreachable)"
    if isinstance(error, urllib3.exceptions.SSLError):
        return "TLS verification failed" if "CERTIFICATE_VERIFY" in str(error) else "TLS error"
    if isinstance(error, urllib3.exceptions.ConnectTimeoutError):
        return "timed out connecting"
    if isinstance(error, urllib3.exceptions.TimeoutError):
        return "timed out"
    if isinstance(error, urllib3.exceptions.ProtocolError):
        return "connection broken"
    return type(error).__name__


def new_ufm_discoverer(config: DiscoveryConfig, context: DiscoveryContext) -> UFMDiscoverer:
    """The registry factory for ``ufm``."""
    return UFMDiscoverer(config, context)
