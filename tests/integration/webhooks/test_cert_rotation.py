"""Certificate rotation on a serving `volcano-py webhook`: no request fails, new connections
get the new certificate, keep-alive connections opened before keep working."""

from __future__ import annotations

import http.client
import json
import os
import signal
import ssl
import subprocess
import threading
import time
from pathlib import Path

from cryptography import x509

from devcluster.harness import free_port
from devcluster.manager import webhook_command
from webhooks import certs

ROOT = Path(__file__).resolve().parents[3]
REVIEW = json.dumps(
    {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "rot-1",
            "operation": "CREATE",
            "object": {
                "apiVersion": "topology.volcano.sh/v1alpha1",
                "kind": "HyperNode",
                "metadata": {"name": "r"},
                "spec": {
                    "tier": 1,
                    "members": [{"type": "Node", "selector": {"exactMatch": {"name": "n"}}}],
                },
            },
        },
    }
).encode()


def _serial_of_peer(port: int, context: ssl.SSLContext) -> int:
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=5)
    conn.connect()
    der = conn.sock.getpeercert(binary_form=True)
    conn.close()
    return x509.load_der_x509_certificate(der).serial_number


def _admit(conn: http.client.HTTPSConnection) -> None:
    conn.request("POST", "/hypernodes/validate", REVIEW, {"Content-Type": "application/json"})
    resp = conn.getresponse()
    body = json.loads(resp.read())
    assert resp.status == 200
    assert body["response"]["uid"] == "rot-1"
    assert body["response"]["allowed"] is True


def test_rotation_keeps_serving_and_switches_new_connections(tmp_path: Path) -> None:
    cert_dir = tmp_path / "certs"
    first = certs.generate()
    certs.write_cert_dir(first, cert_dir)
    port = free_port()
    proc = subprocess.Popen(
        webhook_command(cert_dir, port, "--no-cluster", "--cert-reload-seconds", "0.2"),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    context = ssl.create_default_context(cafile=str(cert_dir / certs.CA_FILE))
    failures: list[str] = []
    stop = threading.Event()
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                old_serial = _serial_of_peer(port, context)
                break
            except OSError:
                assert time.monotonic() < deadline, "webhook did not start"
                time.sleep(0.2)
        kept = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=5)
        _admit(kept)

        def hammer() -> None:
            while not stop.is_set():
                try:
                    conn = http.client.HTTPSConnection(
                        "127.0.0.1", port, context=context, timeout=5
                    )
                    _admit(conn)
                    conn.close()
                except Exception as e:
                    failures.append(repr(e))

        threads = [threading.Thread(target=hammer) for _ in range(2)]
        for t in threads:
            t.start()
        time.sleep(0.5)
        renewed = certs.renew(
            first, certs.dns_names("volcano-py", "volcano-system"), ["127.0.0.1"], 30
        )
        certs.write_cert_dir(renewed, cert_dir)
        new_serial = x509.load_pem_x509_certificate(renewed.cert).serial_number
        deadline = time.monotonic() + 10
        while _serial_of_peer(port, context) != new_serial:
            assert time.monotonic() < deadline, "new certificate never served"
            time.sleep(0.1)
        time.sleep(0.5)
        stop.set()
        for t in threads:
            t.join()
        _admit(kept)  # the connection opened before the rotation still works
        assert old_serial != new_serial
        assert failures == []
    finally:
        stop.set()
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=15)
