"""R7: short-lived webhook certificates are rotated before expiry without a failed admission.

The manager runs with ``--cert-validity=30 --cert-check-interval=1``: every serving
certificate lives 30 s and is re-issued (same CA, so the caBundle the API server trusts does
not change) when 10 s are left; the TLS server picks the new files up for new connections.
For ~75 s HyperNodes are created through the API server without pause (valid ones must be
admitted, invalid ones denied by the webhook's own message - a TLS failure would be a 500
"failed calling webhook"), while the certificate served on the webhook port is sampled: it
must change several times and never be found expired.
"""

from __future__ import annotations

import datetime as dt
import socket
import ssl
import threading
import time
from collections.abc import Iterator

import pytest
from cryptography import x509

from devcluster.harness import ControlPlane
from tests.builders import exact, hypernode_body, regex
from tests.e2e.conftest import ManagerProcess, install_webhook, start_manager, stop_manager
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import ApiError

pytestmark = pytest.mark.timeout(240)

VALIDITY = 30
HAMMER_SECONDS = 75


@pytest.fixture(scope="module")
def manager(
    plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ManagerProcess]:
    work = tmp_path_factory.mktemp("r7")
    process = start_manager(
        plane, work, f"--cert-validity={VALIDITY}", "--cert-check-interval=1", "--no-scheduler"
    )
    install_webhook(
        KubeClient(plane.admin_config()), work / "certs", process.webhook_port, "volcano-py-r7"
    )
    yield process
    assert stop_manager(process) == 0, process.log()[-4000:]


def served_certificate(port: int, ca_file: str) -> x509.Certificate:
    """The certificate a new TLS connection to the webhook gets (verified against the CA)."""
    context = ssl.create_default_context(cafile=ca_file)
    with (
        socket.create_connection(("127.0.0.1", port), timeout=5) as raw,
        context.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
    ):
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return x509.load_der_x509_certificate(der)


def test_short_lived_certificates_rotate_without_a_failed_admission(
    plane: ControlPlane, manager: ManagerProcess
) -> None:
    ca_file = str(manager.log_path.parent / "certs" / "ca.crt")
    stop = threading.Event()
    failures: list[str] = []
    admitted = [0, 0]  # allowed, denied

    def hammer(worker: int) -> None:
        client = KubeClient(plane.admin_config())
        i = 0
        while not stop.is_set():
            i += 1
            name = f"r7-{worker}-{i}"
            try:
                client.create(R.HYPERNODES, hypernode_body(name, 1, [exact(f"{name}-node")]))
                admitted[0] += 1
                client.delete(R.HYPERNODES, name)
            except ApiError as e:
                failures.append(f"valid {name}: {e.status} {e.message[:200]}")
            try:
                client.create(R.HYPERNODES, hypernode_body(f"{name}-bad", 1, [regex("node-[")]))
                failures.append(f"invalid {name}-bad was admitted")
            except ApiError as e:
                if "member regexMatch pattern is invalid" in e.message:
                    admitted[1] += 1
                else:
                    failures.append(f"invalid {name}-bad: {e.status} {e.message[:200]}")

    workers = [threading.Thread(target=hammer, args=(w,)) for w in range(2)]
    for w in workers:
        w.start()
    serials: list[int] = []
    expired: list[str] = []
    try:
        deadline = time.monotonic() + HAMMER_SECONDS
        while time.monotonic() < deadline:
            cert = served_certificate(manager.webhook_port, ca_file)
            if cert.not_valid_after_utc <= dt.datetime.now(dt.UTC):
                expired.append(f"serial {cert.serial_number} expired {cert.not_valid_after_utc}")
            if not serials or serials[-1] != cert.serial_number:
                serials.append(cert.serial_number)
            time.sleep(0.5)
    finally:
        stop.set()
        for w in workers:
            w.join(30)
    assert not failures, f"{len(failures)} failed admissions, first: {failures[:3]}"
    assert not expired, expired
    assert admitted[0] > 50, admitted
    assert admitted[1] > 50, admitted
    assert len(set(serials)) >= 3, f"the served certificate rotated only {len(set(serials)) - 1}x"
