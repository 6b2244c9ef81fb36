"""A stand-in for an NVIDIA UFM server: HTTPS on 127.0.0.1 serving recorded port data.

The one mock in the hypernode integration tests (a UFM appliance cannot run here). It serves
``GET /ufmRest/resources/ports`` over TLS with a freshly generated self-signed certificate
(``ca_file`` for clients that verify), behind HTTP basic auth, and misbehaves on demand:

- ``ok``: the recorded ports (``tests/data/ufm/ports.json`` unless given other data);
- ``500``: HTTP 500 with a short body;
- ``garbage``: HTTP 200 with a body that is not JSON;
- ``hang``: accepts the request and never answers (until the server is closed);
- ``wrong-password``: expects a different password, so the client gets 401;
- ``hostile``: HTTP 200 with 47.7 MB of empty objects (``hostile_body``).

Use as a context manager; ``mode`` may be changed at any time; ``requests`` counts requests.
"""

from __future__ import annotations

import base64
import datetime
import functools
import ipaddress
import json
import ssl
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

PORTS_PATH = "/ufmRest/resources/ports"
RECORDED = Path(__file__).parent / "data" / "ufm" / "ports.json"
MODES = ("ok", "500", "garbage", "hang", "wrong-password")


def _self_signed(folder: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "ufm-standin")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "ufm.crt", folder / "ufm.key"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file


@functools.cache
def hostile_body() -> bytes:
    """47.7 MB of 15.9 M empty objects: the body that took the worker to 1.8 GB (issue 44)."""
    return b"[" + b"{}," * 15_900_000 + b"{}]"


class UFMStandIn:
    def __init__(
        self, username: str = "admin", password: str = "s3cr3t-Pa55", ports: Any = None
    ) -> None:
        self.username = username
        self.password = password
        self.ports = ports if ports is not None else json.loads(RECORDED.read_text())
        self.mode = "ok"
        self.requests = 0
        self._closing = threading.Event()
        self._dir = tempfile.TemporaryDirectory(prefix="ufm-standin-")
        self.ca_file, key_file = _self_signed(Path(self._dir.name))
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.ca_file, key_file)
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep test output (and captured logs) clean

            def do_GET(self) -> None:
                standin.requests += 1
                if self.path != PORTS_PATH:
                    self._answer(404, b'{"error": "not found"}')
                    return
                mode = standin.mode
                if mode == "hang":
                    standin._closing.wait(120)
                    return
                expected_password = (
                    standin.password + "-rotated" if mode == "wrong-password" else standin.password
                )
                expected = (
                    "Basic "
                    + base64.b64encode(f"{standin.username}:{expected_password}".encode()).decode()
                )
                if self.headers.get("Authorization") != expected:
                    self._answer(401, b'{"error": "Unauthorized"}')
                    return
                if mode == "500":
                    self._answer(500, b"Internal Server Error")
                elif mode == "garbage":
                    self._answer(200, b"<html>this is not the port list</html>")
                elif mode == "hostile":
                    self._answer(200, hostile_body())
                else:
                    self._answer(200, json.dumps(standin.ports).encode())

            def _answer(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="ufm-standin", daemon=True
        )

    @property
    def endpoint(self) -> str:
        host, port = self._server.server_address[:2]
        return f"https://{host}:{port}"

    def __enter__(self) -> UFMStandIn:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()
        self._dir.cleanup()
